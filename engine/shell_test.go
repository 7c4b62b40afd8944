//go:build unix

package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/engine"
	"github.com/oh-bridge/oh-bridge/internal/testhome"
	"github.com/oh-bridge/oh-bridge/shellint"
)

func TestMain(m *testing.M) { os.Exit(testhome.Run(m.Run)) }

// harness is a Shell on real bash in a real PTY, with the terminal's
// output watched so a test can wait for a command to have started.
type harness struct {
	sh  *engine.Shell
	dir string

	mu      sync.Mutex
	out     strings.Builder
	changed chan struct{}
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{dir: t.TempDir(), changed: make(chan struct{})}
	h.sh = engine.New(engine.Options{Dir: h.dir, Start: func(dir string) (*shellint.Terminal, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return shellint.Start(ctx, shellint.Options{ID: "agent-test", Shell: "bash", Cwd: dir, Mode: shellint.ModeNoRC, OnEvent: h.event})
	}})
	t.Cleanup(h.sh.Close)
	return h
}

func (h *harness) event(ev shellint.Event) {
	if ev.Output == nil {
		return
	}
	h.mu.Lock()
	h.out.Write(ev.Output.Data)
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
}

// awaitOutput waits until the terminal has printed s (since the start).
func (h *harness) awaitOutput(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		h.mu.Lock()
		seen, ch := strings.Contains(h.out.String(), s), h.changed
		h.mu.Unlock()
		if seen {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("the terminal never printed %q", s)
		}
	}
}

func (h *harness) run(t *testing.T, req engine.Request) *engine.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := h.sh.Execute(ctx, req)
	if err != nil {
		t.Fatalf("%q: %v", req.Command, err)
	}
	return res
}

// wantDone checks that a request completed with the exit code and output.
func wantDone(t *testing.T, res *engine.Record, code int, output string) {
	t.Helper()
	if res.Outcome != engine.Completed || res.ExitCode != code || res.Output != output {
		t.Fatalf("got outcome %d, exit %d, output %q; want completed, exit %d, output %q", res.Outcome, res.ExitCode, res.Output, code, output)
	}
}

// TestTransitions walks every transition of the state table in the
// package doc, with real bash in a real PTY.
func TestTransitions(t *testing.T) {
	soft := 300 * time.Millisecond
	cases := []struct {
		name string
		run  func(t *testing.T, h *harness)
	}{
		{"idle: a command ends in time and the shell stays idle", func(t *testing.T, h *harness) {
			wantDone(t, h.run(t, engine.Request{Command: "echo hi"}), 0, "hi")
			if res := h.run(t, engine.Request{}); res.Outcome != engine.NoPreviousLogs {
				t.Fatalf("a poll when idle: outcome %d, want NoPreviousLogs", res.Outcome)
			}
			if res := h.run(t, engine.Request{Command: "x", IsInput: true, Keys: []byte("x\r")}); res.Outcome != engine.NoPreviousInput {
				t.Fatalf("input when idle: outcome %d, want NoPreviousInput", res.Outcome)
			}
		}},
		{"idle to running on a soft timeout; a new command is not executed; its end makes it idle", func(t *testing.T, h *harness) {
			res := h.run(t, engine.Request{Command: "echo begun; read line; echo got $line", NoOutputTimeout: soft})
			if res.Outcome != engine.NoChange || res.Output != "begun" {
				t.Fatalf("soft timeout: outcome %d, output %q", res.Outcome, res.Output)
			}
			if res := h.run(t, engine.Request{Command: "echo other"}); res.Outcome != engine.NotExecuted {
				t.Fatalf("a new command while one runs: outcome %d, want NotExecuted", res.Outcome)
			}
			res = h.run(t, engine.Request{Command: "hello", IsInput: true, Keys: []byte("hello\r")})
			wantDone(t, res, 0, "got hello")
			wantDone(t, h.run(t, engine.Request{Command: "echo after"}), 0, "after")
		}},
		{"idle to running on a hard timeout; a poll reports the end", func(t *testing.T, h *harness) {
			res := h.run(t, engine.Request{Command: "echo a; sleep 1; echo b", Timeout: 200 * time.Millisecond})
			if res.Outcome != engine.HardTimeout {
				t.Fatalf("hard timeout: outcome %d", res.Outcome)
			}
			res = h.run(t, engine.Request{Timeout: 10 * time.Second})
			if res.Outcome != engine.Completed || !strings.HasSuffix(res.Output, "b") {
				t.Fatalf("the poll: outcome %d, output %q", res.Outcome, res.Output)
			}
		}},
		{"running to idle by C-c as input", func(t *testing.T, h *harness) {
			h.run(t, engine.Request{Command: "sleep 30", NoOutputTimeout: soft})
			res := h.run(t, engine.Request{Command: "C-c", IsInput: true, Keys: engine.ControlByte('c')})
			if res.Outcome != engine.Completed || res.ExitCode != 130 {
				t.Fatalf("C-c: outcome %d, exit %d", res.Outcome, res.ExitCode)
			}
			wantDone(t, h.run(t, engine.Request{Command: "echo next"}), 0, "next")
		}},
		{"running to interrupting to idle by Interrupt", func(t *testing.T, h *harness) {
			h.run(t, engine.Request{Command: "sleep 30", NoOutputTimeout: soft})
			h.sh.Interrupt(context.Background())
			wantDone(t, h.run(t, engine.Request{Command: "echo next"}), 0, "next")
		}},
		{"exited: the next command starts a new shell where the last one was", func(t *testing.T, h *harness) {
			sub := filepath.Join(h.dir, "sub")
			os.Mkdir(sub, 0o755)
			h.run(t, engine.Request{Command: "cd " + sub})
			h.run(t, engine.Request{Command: "exit 3"})
			res := h.run(t, engine.Request{Command: "pwd"})
			wantDone(t, res, 0, sub)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newHarness(t)) })
	}
}

// TestCancelStopsBeforeTheNextRuns: a request whose caller gives up stops
// its command before the terminal takes the next request, which arrives
// while the stop is under way: the next never hears "NOT executed". The
// commands are the hard kinds: one that takes a second to exit after
// Ctrl-C (a test runner, a server), and one that ignores Ctrl-C.
func TestCancelStopsBeforeTheNextRuns(t *testing.T) {
	cases := []struct {
		name, command string
		maxStop       time.Duration
	}{
		{"a plain sleep", "printf 'sta%s\\n' rted; sleep 60; touch MARKER", 5 * time.Second},
		{"a command that takes a second to exit after Ctrl-C", `bash -c "trap 'sleep 1; echo cleaned; exit 3' INT; printf 'sta%s\\n' rted; sleep 60 & wait; touch MARKER"`, 8 * time.Second},
		{"a command that ignores Ctrl-C", `bash -c "trap '' INT; printf 'sta%s\\n' rted; sleep 60; touch MARKER"`, 10 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			marker := filepath.Join(h.dir, "survived")
			ctx, cancel := context.WithCancel(context.Background())
			first := make(chan error, 1)
			go func() {
				_, err := h.sh.Execute(ctx, engine.Request{Command: strings.ReplaceAll(c.command, "MARKER", marker), Timeout: time.Minute})
				first <- err
			}()
			h.awaitOutput(t, "started") // printed by the command: its text reads "sta%s"
			start := time.Now()
			cancel()
			// The next call comes at once, as an agent's does 15–30 ms
			// after its notifications/cancelled.
			res := h.run(t, engine.Request{Command: "echo NEXT", Timeout: 30 * time.Second})
			wantDone(t, res, 0, "NEXT")
			if took := time.Since(start); took > c.maxStop {
				t.Errorf("the next command ran %v after the cancel; the stop is bounded by %v", took, c.maxStop)
			}
			if err := <-first; !errors.Is(err, context.Canceled) {
				t.Fatalf("the cancelled request answered %v, want context.Canceled", err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the cancelled command ran on to its end")
			}
		})
	}
}

// TestCancelRace cancels requests at random moments: while the command is
// being submitted, while its output streams, and as its hard timeout
// fires, with an Interrupt from another goroutine now and then. Run with
// -race. After each, the next command runs and answers exactly, unless the
// first request beat its cancel to a hard timeout: then its command runs
// on, as OpenHands' timeouts leave it, and the next is NOT executed.
func TestCancelRace(t *testing.T) {
	h := newHarness(t)
	rng := rand.New(rand.NewPCG(1, 2))
	cancelled := 0
	for i := range 40 {
		ctx, cancel := context.WithCancel(context.Background())
		timeout := time.Duration(1+rng.IntN(40)) * time.Millisecond
		type answer struct {
			res *engine.Record
			err error
		}
		first := make(chan answer, 1)
		go func() {
			res, err := h.sh.Execute(ctx, engine.Request{Command: "for i in $(seq 1 3000); do echo line $i; done; sleep 5", Timeout: timeout})
			first <- answer{res, err}
		}()
		time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond) // a random moment, not a wait for an event
		interrupted := make(chan struct{})
		if rng.IntN(3) == 0 {
			go func() { h.sh.Interrupt(context.Background()); close(interrupted) }()
		} else {
			close(interrupted)
		}
		cancel()
		a := <-first
		<-interrupted
		want := fmt.Sprintf("ok %d", i)
		res := h.run(t, engine.Request{Command: "echo " + want, Timeout: 30 * time.Second})
		if a.err == nil && a.res.Outcome == engine.HardTimeout && res.Outcome == engine.NotExecuted {
			// The timeout won: clear the command as an agent would.
			h.run(t, engine.Request{Command: "C-c", IsInput: true, Keys: engine.ControlByte('c')})
			continue
		}
		if a.err != nil {
			cancelled++
		}
		if res.Outcome != engine.Completed || res.Output != want || res.ExitCode != 0 {
			t.Fatalf("round %d (first answered %v, %v): got outcome %d, exit %d, output %q; want %q",
				i, a.res, a.err, res.Outcome, res.ExitCode, res.Output, want)
		}
	}
	if cancelled == 0 {
		t.Fatal("no round cancelled a request: the race was never run")
	}
}
