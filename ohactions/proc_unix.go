//go:build unix

package ohactions

import (
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup starts the Python session in a process group of its
// own, so closing it takes whatever its cells started too.
func ownProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the session's process group.
func killGroup(p *os.Process) { syscall.Kill(-p.Pid, syscall.SIGKILL) }

// interruptProcess is the Jupyter kernel's interrupt: SIGINT.
func interruptProcess(p *os.Process) { p.Signal(os.Interrupt) }
