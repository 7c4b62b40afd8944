//go:build unix && !linux

package localserver

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup puts a server started directly (without a supervisor) in a
// process group of its own; Stop signals the group. (Only Linux ends a
// child with its parent: elsewhere the bridge's signal handling stops it.)
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = groupAttr() }

// groupAttr is a process group of its own.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// selfExecutable is what the bridge runs as a server's supervisor: its
// own binary, by the path it was started from.
func selfExecutable() (exe, shown string, err error) {
	exe, err = os.Executable()
	return exe, exe, err
}
