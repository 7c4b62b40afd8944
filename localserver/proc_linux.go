package localserver

import (
	"os/exec"
	"syscall"
)

// ownGroup puts the server in a process group of its own (Stop signals
// the group: uvx and its Python child alike), and has the kernel send it
// SIGTERM if the bridge dies without stopping it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
