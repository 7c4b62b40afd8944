//go:build unix

package realserver

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that Stop reaches
// what it starts too, and has the kernel kill it if the test binary dies
// where it can (Linux).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
}

// signalGroup sends SIGTERM, or SIGKILL when kill, to cmd's process group.
func signalGroup(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	syscall.Kill(-cmd.Process.Pid, sig)
}
