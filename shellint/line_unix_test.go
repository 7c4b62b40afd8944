//go:build unix

package shellint

import (
	"errors"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

// TestLineDisciplineRestored: whatever a program leaves the terminal's
// line discipline in, the next command runs and reports its own output
// and exit code. Each row breaks the terminal of a fresh shell, then runs
// `echo NEXT`.
func TestLineDisciplineRestored(t *testing.T) {
	t.Parallel()
	type row struct {
		name string
		// breaker is typed as a command; timeout, if set, interrupts it.
		breaker string
		timeout time.Duration
		// leave, if set, breaks the terminal instead of breaker.
		leave func(t *testing.T, s *Terminal)
		// mayEndShell: the shell may read end-of-input at its prompt and
		// exit before it reads `echo NEXT` (bash under min 0 time 0). Run
		// must then say the terminal is dead, never report the command.
		mayEndShell bool
	}
	rows := []row{
		{name: "stty raw", breaker: "stty raw"},
		// GNU stty (coreutils 9) takes cbreak as -icanon.
		{name: "stty cbreak", breaker: "stty cbreak"},
		{name: "stty -icrnl", breaker: "stty -icrnl"},
		// Ctrl-C is a plain byte under -isig; the timeout's SIGINT goes
		// to sleep's process group itself.
		{name: "stty -isig, then a timeout", breaker: "stty -isig; sleep 30", timeout: 500 * time.Millisecond},
		{name: "stty -icanon min 0 time 0", breaker: "stty -icanon min 0 time 0", mayEndShell: true},
		{name: "stty -echo", breaker: "stty -echo"},
		{name: "full-screen program SIGKILLed", breaker: `sh -c 'printf "\033[?1049h"; stty raw -echo; kill -9 $$'`},
		{name: "vi SIGKILLed", leave: killedVi},
	}
	eachShell(t, func(t *testing.T, sh string) {
		for _, tc := range rows {
			t.Run(tc.name, func(t *testing.T) {
				s := start(t, Options{Shell: sh})
				if tc.leave != nil {
					tc.leave(t, s)
				} else {
					o := RunOptions{Timeout: 20 * time.Second}
					if tc.timeout > 0 {
						o.Timeout = tc.timeout
					}
					if r := run(t, s, tc.breaker, o); r.Running {
						t.Fatalf("%q still runs: %+v", tc.breaker, r)
					}
				}
				r, err := s.Run(testCtx(t), "echo NEXT", RunOptions{Timeout: 10 * time.Second})
				var dead *DeadError
				if tc.mayEndShell && errors.As(err, &dead) && s.State() == StateDead {
					t.Logf("the shell read end-of-input and exited: %v", err)
					return
				}
				if err != nil {
					t.Fatalf("echo NEXT after %s: %v", tc.name, err)
				}
				if r.Output != "NEXT\n" || exitCode(r) != "0" || r.Reason != "exited" {
					t.Fatalf("echo NEXT after %s: output %q, exit %s, reason %s; want \"NEXT\\n\", exit 0", tc.name, r.Output, exitCode(r), r.Reason)
				}
			})
		}
	})
}

// killedVi starts vi, which puts the terminal in raw mode on the
// alternate screen, and SIGKILLs it, so it cannot set anything back.
func killedVi(t *testing.T, s *Terminal) {
	if _, err := exec.LookPath("vi"); err != nil {
		t.Skip("vi not installed")
	}
	r := run(t, s, "vi", RunOptions{NoOutputTimeout: 300 * time.Millisecond})
	if !r.Running {
		t.Fatalf("vi did not stay: %+v", r)
	}
	if !r.AltScreen {
		t.Logf("vi did not switch to the alternate screen: %q", r.Output)
	}
	r, err := s.Kill(testCtx(t))
	if err != nil || r.Running {
		t.Fatalf("Kill: %+v %v", r, err)
	}
}

// TestLineNotReadIsDeadError: a shell that dies before it reads a
// submitted line ran nothing of it; Run says the terminal is dead instead
// of reporting the shell's status as the command's.
func TestLineNotReadIsDeadError(t *testing.T) {
	t.Parallel()
	eachShell(t, func(t *testing.T, sh string) {
		s := start(t, Options{Shell: sh})
		pid := s.PID()
		// A stopped shell reads nothing: the line waits in the terminal.
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		ohtest.WaitWithin(t, 10*time.Second, "the shell stopped", func() bool { st, err := readStat(pid); return err == nil && st.state == "T" })
		type answer struct {
			r   *Result
			err error
		}
		done := make(chan answer, 1)
		go func() {
			r, err := s.Run(testCtx(t), "echo NEXT", RunOptions{Timeout: 20 * time.Second})
			done <- answer{r, err}
		}()
		ohtest.WaitWithin(t, 10*time.Second, "the line submitted", func() bool { return s.State() == StateRunning })
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		a := <-done
		var dead *DeadError
		if !errors.As(a.err, &dead) || a.r != nil {
			t.Fatalf("Run to a shell killed before it read the line: %+v, %v; want a *DeadError", a.r, a.err)
		}
		if dead.ExitCode != 128+int(syscall.SIGKILL) {
			t.Errorf("DeadError.ExitCode = %d, want %d", dead.ExitCode, 128+int(syscall.SIGKILL))
		}
		// Its record says so too.
		r, err := s.Output(testCtx(t), 0, RunOptions{})
		if err != nil || r.Reason != "not_run" || r.Command != "echo NEXT" {
			t.Fatalf("Output of the unread command: %+v %v", r, err)
		}
		// A line the shell did read and that ended it is the command's.
		s2 := start(t, Options{Shell: sh})
		r = run(t, s2, "exit 7", RunOptions{})
		if r.Reason != "shell_exited" || exitCode(r) != strconv.Itoa(7) {
			t.Fatalf("exit 7: %+v", r)
		}
	})
}
