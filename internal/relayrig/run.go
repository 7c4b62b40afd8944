package relayrig

import (
	"bufio"
	"os"
	"os/exec"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
)

// T is what the rig needs of a test: testing.TB has it, and so does
// cmd/relayrig's stand-in for one.
type T interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Failed() bool
}

// Run starts cmd until the test ends and returns its stdout's lines and
// a stop (SIGINT, then SIGKILL after 5 s, and the wait); its stderr is
// logged when the test fails.
func Run(t T, cmd *exec.Cmd, what string) (<-chan string, func()) {
	t.Helper()
	out, _ := cmd.StdoutPipe()
	stderr := &logbuf.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("%s:\n%s", what, stderr.String())
		}
	})
	return lines, stop
}
