package localserver

import "os/exec"

// Windows has no process groups to signal: the server is killed alone.
func ownGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, _ bool) { _ = cmd.Process.Kill() }
