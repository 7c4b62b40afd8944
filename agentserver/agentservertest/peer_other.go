//go:build !linux

package agentservertest

import "os/exec"

// dieWithParent does nothing here: only Linux has a parent-death signal,
// so a stand-in whose test binary was killed outright lives on.
func dieWithParent(*exec.Cmd) {}
