package realserver

import "syscall"

// dieWithParent has the kernel SIGKILL the server when the test binary
// dies: a test killed by its timeout runs no cleanup.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
