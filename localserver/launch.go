package localserver

import (
	"os/exec"
	"time"
)

// stopGrace is how long a server asked to stop (SIGTERM) has before what
// is left of it is killed.
const stopGrace = 5 * time.Second

// outputDelay bounds the wait for the server's output once its process
// (or its supervisor) has ended: a process that escaped the stop (a
// descendant that left the process group, where no subreaper gathers it)
// may hold the output pipe open for as long as it lives, and Stop must
// not wait for it.
const outputDelay = 2 * time.Second

// serverProcess is a started server's process as the bridge holds it:
// the server itself, a child of the bridge (direct), or the supervisor
// the server runs under (supervised_unix.go).
type serverProcess interface {
	// pid is the server's own process id, which is its process group's.
	pid() int
	// wait returns once the server and what it started have ended, with
	// how the server ended (nil for status 0).
	wait() error
	// stop asks the server to end and returns once done (closed after
	// wait returns) is closed.
	stop(done <-chan struct{})
}

// launch starts the command cmd holds (its program, arguments,
// environment, directory and output set): under a supervisor where this
// binary can be one (see RunSupervisorIfAsked), else directly.
func launch(cmd *exec.Cmd) (serverProcess, error) {
	cmd.WaitDelay = outputDelay
	if selfSupervises {
		return startSupervised(cmd)
	}
	return startDirect(cmd)
}

// direct is a server started as the bridge's own child, in a process
// group of its own (ownGroup); Stop signals the group. What leaves the
// group, and on a bridge killed with SIGKILL everything but the server
// itself (Linux) or all of it (elsewhere), outlives the bridge.
type direct struct{ cmd *exec.Cmd }

func startDirect(cmd *exec.Cmd) (serverProcess, error) {
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return direct{cmd}, nil
}

func (d direct) pid() int    { return d.cmd.Process.Pid }
func (d direct) wait() error { return d.cmd.Wait() }

// stop sends SIGTERM to the server's process group, and SIGKILL
// stopGrace later if it is still there.
func (d direct) stop(done <-chan struct{}) {
	signalGroup(d.cmd, false)
	select {
	case <-done:
	case <-time.After(stopGrace):
		signalGroup(d.cmd, true)
		<-done
	}
}
