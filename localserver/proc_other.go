//go:build unix && !linux

package localserver

import (
	"os/exec"
	"syscall"
)

// ownGroup puts the server in a process group of its own; Stop signals
// the group. (Only Linux ends a child with its parent: elsewhere the
// bridge's signal handling stops it.)
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
