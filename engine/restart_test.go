//go:build unix

package engine_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/engine"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/shellint"
)

// newShell is a Shell on sh (bash or zsh) in a real PTY.
func newShell(t *testing.T, sh string) *engine.Shell {
	t.Helper()
	b := engine.New(engine.Options{Dir: t.TempDir(), Start: func(dir string) (*shellint.Terminal, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return shellint.Start(ctx, shellint.Options{Shell: sh, Cwd: dir, Mode: shellint.ModeNoRC})
	}})
	t.Cleanup(b.Close)
	return b
}

func execute(t *testing.T, b *engine.Shell, cmd string) *engine.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := b.Execute(ctx, engine.Request{Command: cmd, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("%q: %v", cmd, err)
	}
	return res
}

// TestShellExitIsNotACommandsEnd: when the shell exits, the command that
// follows runs in a new shell, reports its own output and exit code, and
// says the shell was restarted; a command the dying shell never read is
// not reported with the shell's status but run in the new shell.
func TestShellExitIsNotACommandsEnd(t *testing.T) {
	t.Parallel()
	shells := []string{"bash"}
	if _, err := exec.LookPath("zsh"); err == nil {
		shells = append(shells, "zsh")
	}
	type row struct {
		name string
		// before runs first: its exit code, and whether the shell
		// certainly exits (false: it may or may not).
		before    string
		code      int
		mustExit  bool
		mayExit   bool
		dieUnread bool // instead of before: the shell dies with `echo NEXT` unread
	}
	rows := []row{
		{name: "exit 3", before: "exit 3", code: 3, mustExit: true},
		{name: "kill -9 $$", before: "kill -9 $$", code: 137, mustExit: true},
		// bash reads end-of-input at its prompt and exits, unless the line
		// discipline is back before its read.
		{name: "stty -icanon min 0 time 0", before: "stty -icanon min 0 time 0", mayExit: true},
		{name: "killed before it read the line", dieUnread: true, mustExit: true},
		{name: "nothing", before: "true"},
	}
	for _, sh := range shells {
		for _, tc := range rows {
			t.Run(sh+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				b := newShell(t, sh)
				var next *engine.Record
				var first *shellint.Terminal
				if tc.dieUnread {
					execute(t, b, "true")
					first = b.Terminal()
					next = nextAfterShellDies(t, b, first)
				} else {
					if res := execute(t, b, tc.before); res.Outcome != engine.Completed || res.ExitCode != tc.code || res.ShellRestarted {
						t.Fatalf("%q: outcome %d, exit %d, restarted %v; want completed, exit %d", tc.before, res.Outcome, res.ExitCode, res.ShellRestarted, tc.code)
					}
					first = b.Terminal()
					next = execute(t, b, "echo NEXT")
				}
				if next.Outcome != engine.Completed || next.ExitCode != 0 || next.Output != "NEXT" {
					t.Fatalf("echo NEXT: outcome %d, exit %d, output %q; want completed, exit 0, \"NEXT\"", next.Outcome, next.ExitCode, next.Output)
				}
				replaced := b.Terminal() != first
				if next.ShellRestarted != replaced || (tc.mustExit && !replaced) || (!tc.mustExit && !tc.mayExit && replaced) {
					t.Fatalf("echo NEXT: restarted %v, terminal replaced %v", next.ShellRestarted, replaced)
				}
				if again := execute(t, b, "echo AGAIN"); again.ShellRestarted || again.Output != "AGAIN" {
					t.Fatalf("the command after: %+v", again)
				}
			})
		}
	}
}

// nextAfterShellDies submits `echo NEXT` to a stopped shell and kills the
// shell, so that it dies with the line unread.
func nextAfterShellDies(t *testing.T, b *engine.Shell, s *shellint.Terminal) *engine.Record {
	t.Helper()
	pid := s.PID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ohtest.WaitFor(t, "the shell stopped", func() bool { return processState(pid) == "T" })
	type answer struct {
		res *engine.Record
		err error
	}
	done := make(chan answer, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := b.Execute(ctx, engine.Request{Command: "echo NEXT", Timeout: 20 * time.Second})
		done <- answer{res, err}
	}()
	ohtest.WaitFor(t, "the line submitted", func() bool { return s.State() == shellint.StateRunning })
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil {
		t.Fatalf("echo NEXT: %v", a.err)
	}
	return a.res
}

// processState is the state letter of /proc/<pid>/stat ("T": stopped).
func processState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+3 > len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

// TestPollFindsTheShellsEnd: a poll after the shell died under a running
// command reports that command's end (the shell's status), not an
// unknown command of a new shell; the next command then says the shell
// was restarted.
func TestPollFindsTheShellsEnd(t *testing.T) {
	t.Parallel()
	b := newShell(t, "bash")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := b.Execute(ctx, engine.Request{Command: "echo waiting; read x", NoOutputTimeout: 200 * time.Millisecond})
	if err != nil || res.Outcome != engine.NoChange {
		t.Fatalf("read x: %+v %v", res, err)
	}
	s := b.Terminal()
	if err := syscall.Kill(s.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ohtest.WaitFor(t, "the shell dead", func() bool { return s.State() == shellint.StateDead })
	res, err = b.Execute(ctx, engine.Request{Command: ""})
	if err != nil || res.Outcome != engine.Completed || res.ExitCode != 137 || res.ShellRestarted {
		t.Fatalf("poll: %+v %v; want completed, exit 137", res, err)
	}
	if res := execute(t, b, "echo NEXT"); res.Output != "NEXT" || !res.ShellRestarted {
		t.Fatalf("echo NEXT: %+v", res)
	}
}
