package localserver

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup puts a server started directly (without a supervisor) in a
// process group of its own (Stop signals the group: uvx and its Python
// child alike), and has the kernel send it SIGTERM if the bridge dies
// without stopping it.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = groupAttr() }

// groupAttr is a process group of its own, and SIGTERM when the parent
// (the thread that started it: golang/go#27505) dies.
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// selfExecutable is what the bridge runs as a server's supervisor:
// /proc/self/exe, which is the bridge's own binary even after an upgrade
// replaced or removed the file it was started from; shown is its path,
// for the supervisor's command line.
func selfExecutable() (exe, shown string, err error) {
	shown, err = os.Executable()
	if err != nil {
		shown = "oh-bridge"
	}
	return "/proc/self/exe", shown, nil
}
