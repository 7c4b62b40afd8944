// Package process answers whether a process id names a running process,
// on each platform the bridge builds for: the rpc layer watches the
// editor's process this way, and the workspace judges whether the writer
// of a leftover journal is still at work. It must not know who asks, nor
// start or signal anything.
package process
