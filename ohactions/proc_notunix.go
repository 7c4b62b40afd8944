//go:build !unix

package ohactions

import (
	"os"
	"os/exec"
)

// ownProcessGroup does nothing where there are no Unix process groups:
// the session is killed alone.
func ownProcessGroup(cmd *exec.Cmd) {}

// killGroup kills the session's process.
func killGroup(p *os.Process) { p.Kill() }

// interruptProcess cannot deliver SIGINT on Windows: the cell runs on
// until its session is closed.
func interruptProcess(p *os.Process) {}
