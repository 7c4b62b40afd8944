//go:build unix

package localserver

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

// treeScript is a server's stand-in for the supervisor's tests, in bash
// (launch does not probe, and Start gets no answer from it). Before it
// becomes `sleep` it starts what a real server's tree holds beyond its
// own process: a child in its process group that ignores SIGTERM, a
// child that calls setsid, and a grandchild a subshell leaves behind (a
// double fork) in a session of its own, all holding its stdout. Once all
// are placed (each says its pid on a FIFO the script holds open when it
// is), it writes "pids SERVER GROUP SESSION DAEMON" to stdout. With an
// argument, it then exits with that status instead of sleeping; with
// TREE_IGNORES_TERM set, it ignores SIGTERM too.
const treeScript = "\n" + ohtest.LeaveTree + `echo "No module named openhands.agent_server" >&2
[ -n "$TREE_IGNORES_TERM" ] && trap '' TERM
echo "pids $$ $group $session $daemon"
[ -n "$1" ] && exit "$1"
exec sleep 1000
`

// treeCommand is the command of a server with treeScript's tree.
func treeCommand(exitCode ...string) *exec.Cmd {
	return exec.Command("/bin/bash", append([]string{"-c", treeScript, "tree"}, exitCode...)...)
}

// holdTreeEnv makes the test binary a bridge that starts a server with
// treeScript's tree under the supervisor, writes "supervisor PID" and
// lets the server write its pids, and waits to be killed.
const holdTreeEnv = "OH_BRIDGE_TEST_HOLD_TREE"

func holdTree() int {
	selfSupervises = os.Getenv(holdTreeEnv) == "supervised"
	cmd := treeCommand()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	p, err := launch(cmd)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sup := p.pid()
	if s, ok := p.(*supervised); ok {
		sup = s.sup.Process.Pid
	}
	fmt.Printf("supervisor %d\n", sup)
	select {}
}
