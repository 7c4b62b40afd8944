package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// The pool allows 8 live terminals: the command workers keep theirs open
// for the whole run and the churn workers use the rest.
const commandWorkers, churnWorkers, editWorkers = 6, 2, 4

// callTimeout bounds any single call, so a hung bridge fails the soak
// instead of stalling it; no call comes near it when all is well.
const callTimeout = 2 * time.Minute

// counts are what the load achieved, for the report.
type counts struct {
	commands, churnCommands, edits, stale, external, terminals, checkouts atomic.Int64
	checkoutTime                                                          atomic.Int64 // ns
}

func (c *counts) String() string {
	n := c.checkouts.Load()
	avg := time.Duration(0)
	if n > 0 {
		avg = time.Duration(c.checkoutTime.Load() / n)
	}
	return fmt.Sprintf("%d commands in %d long-lived terminals (+%d in churned ones), %d edits (%d refused as stale after %d external writes, then redone), %d terminals opened and closed, %d checkouts (%v each on average)",
		c.commands.Load(), commandWorkers, c.churnCommands.Load(), c.edits.Load(), c.stale.Load(), c.external.Load(), c.terminals.Load(), n, avg.Round(time.Millisecond))
}

// load drives one bridge through its client.
type load struct {
	c      *rpctest.Client
	root   string
	sc     scale
	shells *shellSessions
	n      counts
}

// pace spreads n operations evenly over d from start, so every kind of
// load is mixed over the whole run instead of one finishing first. It
// only ever waits: an operation that runs late is not hurried.
func pace(ctx context.Context, start time.Time, d time.Duration, i, n int) error {
	at := start.Add(d * time.Duration(i) / time.Duration(max(n, 1)))
	select {
	case <-time.After(time.Until(at)):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *load) call(ctx context.Context, method string, params, result any) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := l.c.Call(ctx, method, params, result); err != nil {
		return fmt.Errorf("%s %v: %w", method, params, err)
	}
	return nil
}

// openTerminal opens a terminal with params and records its shell, whose
// processes must be gone when the session ends.
func (l *load) openTerminal(ctx context.Context, params map[string]any) (string, error) {
	var open struct {
		TerminalID string
		PID        int
	}
	if err := l.call(ctx, "terminal/open", params, &open); err != nil {
		return "", err
	}
	l.shells.add(open.PID)
	return open.TerminalID, nil
}

// run starts every worker and waits for all of them; the first failure
// stops the rest.
func (l *load) run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	start := time.Now()
	var wg sync.WaitGroup
	spawn := func(name string, fn func(context.Context, time.Time) error) {
		wg.Go(func() {
			if err := fn(ctx, start); err != nil {
				cancel(fmt.Errorf("%s: %w", name, err))
			}
		})
	}
	for w := range commandWorkers {
		spawn(fmt.Sprintf("command worker %d", w), func(ctx context.Context, start time.Time) error {
			return l.commands(ctx, start, share(l.sc.commands, commandWorkers, w))
		})
	}
	for w := range churnWorkers {
		spawn(fmt.Sprintf("churn worker %d", w), func(ctx context.Context, start time.Time) error {
			return l.churn(ctx, start, w, share(l.sc.churn, churnWorkers, w))
		})
	}
	for w := range editWorkers {
		spawn(fmt.Sprintf("edit worker %d", w), func(ctx context.Context, start time.Time) error {
			return l.edits(ctx, start, w)
		})
	}
	spawn("git checkouts", l.checkouts)
	wg.Wait()
	return context.Cause(ctx)
}

// share is worker w's part of n operations among k workers.
func share(n, k, w int) int { return n/k + btoi(w < n%k) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

type runResult struct {
	TerminalID string
	Output     string
	ExitCode   *int
	Running    bool
	Reason     string
}

// shellCommand is one kind of command the workers run, with what its
// result must show: output fragments are checked, not whole outputs, since
// a prompt or an echo may frame them.
type shellCommand struct {
	text     string
	contains string
	exit     int
}

func shellCommands(i int) shellCommand {
	marker := fmt.Sprintf("soak-%d", i)
	all := []shellCommand{
		{"echo " + marker, marker, 0},
		{"printf 'a\\nb\\nc\\n' | wc -l", "3", 0},
		{"false", "", 1},
		{"seq 1 20000", "19999\n20000", 0},
		{"(cd edits && ls | wc -l)", "10", 0},
		{"for j in 1 2 3; do echo x$j; done", "x1\nx2\nx3", 0},
		{"sleep 0.01; echo slept", "slept", 0},
		{"sh -c 'exit 3'", "", 3},
		{"grep -c counter edits/d0/f000.txt", "1", 0},
		{"X=" + marker + "; echo ${X}-done", marker + "-done", 0},
	}
	return all[i%len(all)]
}

// commands runs n commands, one after another, in a terminal of its own.
func (l *load) commands(ctx context.Context, start time.Time, n int) error {
	id, err := l.openTerminal(ctx, map[string]any{})
	if err != nil {
		return err
	}
	for i := range n {
		if err := pace(ctx, start, l.sc.duration, i, n); err != nil {
			return err
		}
		sc := shellCommands(i)
		var r runResult
		if err := l.call(ctx, "terminal/run", map[string]any{"terminalId": id, "command": sc.text}, &r); err != nil {
			return err
		}
		if r.Running || r.ExitCode == nil || *r.ExitCode != sc.exit || !strings.Contains(r.Output, sc.contains) {
			code := "none"
			if r.ExitCode != nil {
				code = fmt.Sprint(*r.ExitCode)
			}
			return fmt.Errorf("%q in %s: got exit %s, running %v, output %q; want exit %d and %q", sc.text, id, code, r.Running, tail(r.Output), sc.exit, sc.contains)
		}
		l.n.commands.Add(1)
	}
	return l.call(ctx, "terminal/close", map[string]any{"terminalId": id}, nil)
}

func tail(s string) string {
	if len(s) > 300 {
		return "…" + s[len(s)-300:]
	}
	return s
}

// churn opens and closes n terminals, leaving each in a different state
// at close: just started, after a command, with a command still running,
// with a background job.
func (l *load) churn(ctx context.Context, start time.Time, w, n int) error {
	for i := range n {
		if err := pace(ctx, start, l.sc.duration, i, n); err != nil {
			return err
		}
		id, err := l.openTerminal(ctx, map[string]any{"cwd": fmt.Sprintf("edits/d%d", (w+i)%10)})
		if err != nil {
			return err
		}
		var r runResult
		switch i % 4 {
		case 1:
			if err = l.call(ctx, "terminal/run", map[string]any{"terminalId": id, "command": "echo churned"}, &r); err == nil && !strings.Contains(r.Output, "churned") {
				err = fmt.Errorf("echo churned in %s: output %q", id, r.Output)
			}
		case 2:
			if err = l.call(ctx, "terminal/run", map[string]any{"terminalId": id, "command": "sleep 300", "noOutputTimeoutMs": 50}, &r); err == nil && !r.Running {
				err = fmt.Errorf("sleep 300 in %s ended: %+v", id, r)
			}
		case 3:
			if err = l.call(ctx, "terminal/run", map[string]any{"terminalId": id, "command": "sleep 300 & echo started"}, &r); err == nil && !strings.Contains(r.Output, "started") {
				err = fmt.Errorf("background sleep in %s: output %q", id, r.Output)
			}
		}
		if err != nil {
			return err
		}
		if i%4 != 0 {
			l.n.churnCommands.Add(1)
		}
		if err := l.call(ctx, "terminal/close", map[string]any{"terminalId": id}, nil); err != nil {
			return err
		}
		l.n.terminals.Add(1)
	}
	return nil
}

// fileState is what an edit worker knows of one of its files.
type fileState struct {
	n, k    int    // bridge edits and external writes so far
	version string // the version the bridge last reported
	stale   bool   // written outside since
}

// edits makes worker w's share of the edits on its files (f%editWorkers
// == w), one file after another; every fifth edit of a file follows a
// write straight to disk, so the bridge's version check must refuse it,
// and after a re-read it is redone.
func (l *load) edits(ctx context.Context, start time.Time, w int) error {
	var mine []int
	for f := w; f < l.sc.files; f += editWorkers {
		mine = append(mine, f)
	}
	state := make(map[int]*fileState, len(mine))
	for _, f := range mine {
		state[f] = &fileState{version: version(editFile(f, 0, 0))}
	}
	n := share(l.sc.edits, editWorkers, w)
	for i := range n {
		if err := pace(ctx, start, l.sc.duration, i, n); err != nil {
			return err
		}
		f := mine[i%len(mine)]
		if err := l.edit(ctx, f, state[f], i/len(mine)); err != nil {
			return err
		}
	}
	for _, f := range mine {
		s := state[f]
		got, err := os.ReadFile(editPath(l.root, f))
		if err != nil {
			return err
		}
		if want := editFile(f, s.n, s.k); string(got) != want {
			return fmt.Errorf("file %d after the soak:\n%s\nwant:\n%s", f, got, want)
		}
	}
	return nil
}

func (l *load) edit(ctx context.Context, f int, s *fileState, round int) error {
	path := editPath(l.root, f)
	if round%5 == 4 {
		s.k++
		// The outside world writes as an editor saving does, by rename: a
		// truncating write would let a worker's `grep -c counter` of the
		// same file catch it empty.
		tmp := path + ".external"
		if err := os.WriteFile(tmp, []byte(editFile(f, s.n, s.k)), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
		s.stale = true
		l.n.external.Add(1)
	}
	for {
		var res struct{ Version string }
		var err error
		if round%2 == 0 {
			err = l.call(ctx, "edit/str_replace", map[string]any{
				"path": path, "oldStr": fmt.Sprintf("counter: %d\n", s.n), "newStr": fmt.Sprintf("counter: %d\n", s.n+1),
				"expectedVersion": s.version}, &res)
		} else {
			err = l.call(ctx, "fs/write_text_file", map[string]any{
				"path": path, "content": editFile(f, s.n+1, s.k), "expectedVersion": s.version}, &res)
		}
		var e *rpc.Error
		if s.stale && errors.As(err, &e) && e.Code == 1008 {
			// Refused as it should be: read what is on disk now and redo.
			l.n.stale.Add(1)
			var read struct{ Content, Version string }
			if err := l.call(ctx, "fs/read_text_file", map[string]any{"path": path}, &read); err != nil {
				return err
			}
			if want := editFile(f, s.n, s.k); read.Content != want || read.Version != version(want) {
				return fmt.Errorf("%s after an external write reads %q (version %s), want %q", path, read.Content, read.Version, want)
			}
			s.version, s.stale = read.Version, false
			continue
		}
		if err != nil {
			return err
		}
		if s.stale {
			return fmt.Errorf("an edit of %s against version %s was applied over an external write", path, s.version)
		}
		s.n++
		if want := version(editFile(f, s.n, s.k)); res.Version != want {
			return fmt.Errorf("%s: the edit answered version %s, want %s", path, res.Version, want)
		}
		s.version = res.Version
		l.n.edits.Add(1)
		return nil
	}
}

// checkouts switches the git tree between its branches, an even number
// of times so the tree ends as it began: every switch rewrites most of
// the tree's files and swaps some directories under the watcher.
func (l *load) checkouts(ctx context.Context, start time.Time) error {
	n := l.sc.checkouts
	for i := range n {
		if err := pace(ctx, start, l.sc.duration, i, n); err != nil {
			return err
		}
		branch := "b"
		if i%2 == 1 {
			branch = "a"
		}
		t := time.Now()
		if out, err := git(filepath.Join(l.root, "tree"), nil, "checkout", "-q", "-f", branch); err != nil {
			return fmt.Errorf("git checkout %s: %v\n%s", branch, err, out)
		}
		l.n.checkoutTime.Add(int64(time.Since(t)))
		l.n.checkouts.Add(1)
	}
	return nil
}

// changes counts fs/did_change entries by source and lets the test await
// the report of one path, the watcher's sign of life after the storms.
type changes struct {
	mu       sync.Mutex
	bySource map[string]int
	notes    int
	awaited  string
	seen     chan struct{}
}

func (c *changes) note(m rpctest.Message) {
	if m.Method != "fs/did_change" {
		return
	}
	var p struct {
		Changes []struct{ Path, Source string }
	}
	if json.Unmarshal(m.Params, &p) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bySource == nil {
		c.bySource = map[string]int{}
	}
	c.notes++
	for _, ch := range p.Changes {
		c.bySource[ch.Source]++
		if c.awaited != "" && ch.Path == c.awaited {
			close(c.seen)
			c.awaited = ""
		}
	}
}

func (c *changes) await(path string) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.awaited, c.seen = path, make(chan struct{})
	return c.seen
}

func (c *changes) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%d fs/did_change notifications: %d external changes, %d by the bridge", c.notes, c.bySource["external"], c.bySource["agent"])
}
