package agentservertest

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel SIGKILL cmd when the test binary dies.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
