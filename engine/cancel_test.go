//go:build unix

package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/engine"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/shellint"
)

// TestCancelThenNextUnderLoad makes the race between a cancelled command
// and the next one happen, many times, with the CPUs loaded. Each round
// runs a command (a list, a pipeline, a long line, one that leaves a
// process in its group, one that ends by itself within milliseconds),
// cancels its request at a moment that varies (as Execute is called, as
// the line is written, as the shell reads it, on the first output, after
// a random delay), checks that when Execute returns nothing of the
// command is left in the terminal's session, and runs `echo next-<n>`,
// which must answer exactly that, with exit code 0. OH_CANCEL_ROUNDS sets
// the number of rounds for each shell (1000; 100 with -short).
func TestCancelThenNextUnderLoad(t *testing.T) {
	rounds := 1000
	if testing.Short() {
		rounds = 100
	}
	if s := os.Getenv("OH_CANCEL_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("OH_CANCEL_ROUNDS=%q: want a number of rounds above 0", s)
		}
		rounds = n
	}
	loadCPUs(t)
	shells := []string{"bash"}
	if _, err := exec.LookPath("zsh"); err == nil {
		shells = append(shells, "zsh")
	}
	for _, sh := range shells {
		t.Run(sh, func(t *testing.T) { cancelRounds(t, sh, rounds) })
	}
}

// TestCancelWhileTheShellStartsSubmitsNothing: a request whose caller
// gives up while the shell is still starting (an agent that cancels at
// once, a loaded machine) sends the shell nothing, so there is nothing to
// stop.
func TestCancelWhileTheShellStartsSubmitsNothing(t *testing.T) {
	starting, release := make(chan struct{}), make(chan struct{})
	sh := engine.New(engine.Options{Dir: t.TempDir(), Start: func(dir string) (*shellint.Terminal, error) {
		close(starting)
		<-release
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return shellint.Start(ctx, shellint.Options{Shell: "bash", Cwd: dir, Mode: shellint.ModeNoRC})
	}})
	t.Cleanup(sh.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := sh.Execute(ctx, engine.Request{Command: "sleep 30", Timeout: time.Minute})
		done <- err
	}()
	<-starting
	cancel()
	close(release)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled request answered %v, want context.Canceled", err)
	}
	if seq := sh.Terminal().Info().Seq; seq != 0 {
		t.Fatalf("the shell was sent %d command(s) after the caller gave up; want none", seq)
	}
}

// cancelVariant is a command to cancel; prints says it prints "started"
// first, so a round can cancel on its output; ends, that it ends on its
// own within milliseconds, so the cancel may find it ending or ended.
type cancelVariant struct {
	command      string
	prints, ends bool
}

var cancelVariants = []cancelVariant{
	{"echo started; sleep 30", true, false},
	{"true; true; sleep 30", false, false},
	{"sleep 30 | cat", false, false},
	{"sleep 30", false, false},
	// typed bash sends a text with eval through its eval line
	{"eval 'echo started'; sleep 30", true, false},
	// the background sleep of a shell without job control ignores
	// Ctrl-C and stays in the command's process group
	{"sh -c 'echo started; sleep 30 & sleep 30'", true, false},
	// a long line: bash takes a while to parse it, with a check for
	// Ctrl-C after each character
	{": " + strings.Repeat("x", 3000) + "; echo started; sleep 30", true, false},
	// ending as the cancel comes: a program, then the shell's own loop
	{"echo started; sleep 0.01", true, true},
	{"echo started; for i in $(seq 1 300); do :; done", true, true},
}

// The moments a round cancels at.
const (
	cancelAtOnce      = iota // as Execute is called
	cancelOnSubmit           // as the terminal reports the command running
	cancelAsItReads          // up to 300 µs later, as the shell wakes to read the line
	cancelOnOutput           // on its first output (without output: as cancelAfterADelay)
	cancelAfterADelay        // up to 20 ms after the submission
	cancelPoints
)

func cancelRounds(t *testing.T, sh string, rounds int) {
	h := newCancelHarness(t, sh)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	start := time.Now()
	failed := 0
	for i := range rounds {
		v := cancelVariants[i%len(cancelVariants)]
		point := (i / len(cancelVariants)) % cancelPoints
		if err := h.round(i, v, point, rng); err != nil {
			failed++
			if failed <= 10 {
				t.Errorf("round %d (%q, cancel point %d): %v", i, v.command, point, err)
			}
			h.reset(t)
		}
	}
	t.Logf("%s: %d rounds in %v, %d failed", sh, rounds, time.Since(start).Round(time.Millisecond), failed)
	if failed > 0 {
		t.Errorf("%s: %d of %d rounds failed", sh, failed, rounds)
	}
}

// cancelHarness is an engine Shell on sh in a real PTY, with the
// terminal's events counted so a round can wait for one.
type cancelHarness struct {
	sh *engine.Shell

	mu      sync.Mutex
	changed chan struct{}
	running int // StateEvents "running": commands submitted
	texts   int // TextEvents: command output
	raw     strings.Builder
}

func newCancelHarness(t *testing.T, sh string) *cancelHarness {
	h := &cancelHarness{changed: make(chan struct{})}
	h.sh = engine.New(engine.Options{Dir: t.TempDir(), Start: func(dir string) (*shellint.Terminal, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// A SIGINT that bash loses (it reached a child between its fork
		// and its exec) is followed by the next step after the grace:
		// 250 ms here, not 2 s, for the rounds' sake.
		return shellint.Start(ctx, shellint.Options{Shell: sh, Cwd: dir, Mode: shellint.ModeNoRC, OnEvent: h.event, InterruptGrace: 250 * time.Millisecond})
	}})
	t.Cleanup(h.sh.Close)
	return h
}

func (h *cancelHarness) event(ev shellint.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case ev.State != nil && ev.State.State == shellint.StateRunning:
		h.running++
	case ev.Text != nil:
		h.texts++
	case ev.Output != nil:
		h.raw.Write(ev.Output.Data)
	default:
		return
	}
	close(h.changed)
	h.changed = make(chan struct{})
}

// counts returns the events seen so far.
func (h *cancelHarness) counts() (running, texts int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running, h.texts
}

// await waits until ok holds for the counts, for up to 20 s.
func (h *cancelHarness) await(what string, ok func(running, texts int) bool) error {
	deadline := time.After(20 * time.Second)
	for {
		h.mu.Lock()
		held, ch := ok(h.running, h.texts), h.changed
		h.mu.Unlock()
		if held {
			return nil
		}
		select {
		case <-ch:
		case <-deadline:
			return fmt.Errorf("the terminal never reported %s", what)
		}
	}
}

// rawLen and rawSince give what the terminal printed from one point on,
// for a failure's message.
func (h *cancelHarness) rawLen() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.raw.Len()
}

func (h *cancelHarness) rawSince(n int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.ReplaceAll(h.raw.String()[n:], strings.Repeat("x", 3000), "x…")
}

// round runs one cancel-then-next round.
func (h *cancelHarness) round(n int, v cancelVariant, point int, rng *rand.Rand) error {
	// The terminal of the command, started by a command of its own so the
	// session to check is known before the cancel.
	if h.sh.Terminal() == nil {
		if res, err := h.execute("true"); err != nil || res.Outcome != engine.Completed {
			return fmt.Errorf("starting the shell: %+v, %v", res, err)
		}
	}
	term := h.sh.Terminal()
	sid := term.PID()
	from := h.rawLen()
	running, texts := h.counts()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type answer struct {
		res *engine.Record
		err error
	}
	first := make(chan answer, 1)
	go func() {
		res, err := h.sh.Execute(ctx, engine.Request{Command: v.command, Timeout: time.Minute})
		first <- answer{res, err}
	}()
	submitted := func(r, _ int) bool { return r > running }
	var err error
	// The delays are random moments, not waits for an event.
	switch point {
	case cancelOnSubmit:
		err = h.await("the command running", submitted)
	case cancelAsItReads:
		err = h.await("the command running", submitted)
		// Spun, not slept: a sleep this short ends when the scheduler
		// says, not when asked.
		d := time.Duration(rng.IntN(300)) * time.Microsecond
		for t0 := time.Now(); time.Since(t0) < d; {
		}
	case cancelOnOutput:
		if v.prints {
			err = h.await("the command's output", func(_, x int) bool { return x > texts })
			break
		}
		fallthrough
	case cancelAfterADelay:
		err = h.await("the command running", submitted)
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond) // a random moment of the run to cancel at, not a wait
	}
	if err != nil {
		return err
	}
	cancel()
	var a answer
	select {
	case a = <-first:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("the cancelled request did not return in 30 s")
	}
	if !errors.Is(a.err, context.Canceled) && !(v.ends && a.err == nil && a.res.Outcome == engine.Completed) {
		return fmt.Errorf("the cancelled request answered %+v, %v; want context.Canceled", a.res, a.err)
	}
	if left := sessionMembers(sid); len(left) > 0 {
		return fmt.Errorf("when the cancelled request returned, its processes were still there: %v\nterminal output: %q", left, h.rawSince(from))
	}
	want := fmt.Sprintf("next-%d", n)
	res, err := h.execute("echo " + want)
	if err != nil {
		return fmt.Errorf("echo %s: %v", want, err)
	}
	if res.Outcome != engine.Completed || res.ExitCode != 0 || res.Output != want {
		return fmt.Errorf("echo %s: outcome %d, exit %d, output %q; want completed, exit 0, %q\nterminal output: %q",
			want, res.Outcome, res.ExitCode, res.Output, want, h.rawSince(from))
	}
	return nil
}

// execute runs cmd with a hard timeout, so a round whose terminal is
// still held by the cancelled command fails in seconds, not 30.
func (h *cancelHarness) execute(cmd string) (*engine.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return h.sh.Execute(ctx, engine.Request{Command: cmd, Timeout: 5 * time.Second})
}

// reset starts the next round in a new shell, after a failed one.
func (h *cancelHarness) reset(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.sh.Reset(ctx); err != nil {
		t.Fatalf("resetting the shell after a failed round: %v", err)
	}
}

// sessionMembers lists the live processes of session sid other than its
// leader (the shell): what a command left behind.
func sessionMembers(sid int) []string {
	var out []string
	for _, p := range ohtest.Procs() {
		if p.Session == sid && p.PID != sid && p.State != "Z" {
			out = append(out, fmt.Sprintf("%d %s (%s)", p.PID, p.Comm, p.State))
		}
	}
	return out
}

// loadCPUs keeps every CPU busy while the test runs: one shell loop per
// CPU competes with the shell under test and with this process, so the
// scheduler delays each of them at any point (between the shell reading
// a line and acting on it, between a signal and its delivery, between
// the bridge reading a mark and acting on it), which is what opens the
// windows a loaded machine opens.
func loadCPUs(t *testing.T) {
	for range runtime.NumCPU() {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting a CPU load: %v", err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
}
