//go:build unix

package shellint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

func newTestPool(t *testing.T, limit int) *Pool {
	p := NewPool(PoolOptions{Limit: limit, Defaults: Options{Shell: "bash", InterruptGrace: 300 * time.Millisecond, TermGrace: 300 * time.Millisecond}})
	t.Cleanup(func() { p.Close() })
	return p
}

func TestPoolReuseAndConcurrency(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, 3)
	dir := t.TempDir()
	ctx := testCtx(t)
	// Three concurrent runs while all are busy: three distinct terminals.
	var wg sync.WaitGroup
	ids := make([]string, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Wait for a file rather than a fixed time: under load the
			// three shells may start further apart than any sleep.
			r, err := p.Run(ctx, RunRequest{Command: "until [ -e go ]; do sleep 0.02; done; echo done", Open: OpenOptions{Cwd: dir}})
			if err != nil || r.Output != "done\n" {
				t.Errorf("run %d: %+v %v", i, r, err)
				return
			}
			ids[i] = r.TerminalID
		}()
	}
	// While they run, a fourth is refused with the list of what runs where.
	ohtest.WaitWithin(t, 10*time.Second, "three running terminals", func() bool {
		n := 0
		for _, in := range p.List() {
			if in.State == StateRunning {
				n++
			}
		}
		return n == 3
	})
	_, err := p.Run(ctx, RunRequest{Command: "true"})
	var lim *LimitError
	if !errors.As(err, &lim) || lim.Kind() != "terminal_limit" || len(lim.Terminals) != 3 || lim.Terminals[0].Command == "" {
		t.Fatalf("at limit: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	wg.Wait()
	sort.Strings(ids)
	if ids[0] != "t1" || ids[1] != "t2" || ids[2] != "t3" {
		t.Fatalf("ids %v", ids)
	}
	// Now idle: runs reuse them, preferring the matching cwd.
	other := t.TempDir()
	r, err := p.Run(ctx, RunRequest{Command: "cd " + shellQuote(other)})
	if err != nil {
		t.Fatal(err)
	}
	moved := r.TerminalID
	for range 5 {
		r, err := p.Run(ctx, RunRequest{Command: "pwd", Open: OpenOptions{Cwd: other}})
		if err != nil || r.TerminalID != moved || r.Output != other+"\n" {
			t.Fatalf("prefer cwd: %+v %v (want %s)", r, err, moved)
		}
	}
	// A reused terminal in another cwd changes directory first.
	r, err = p.Run(ctx, RunRequest{TerminalID: moved, Command: "pwd", Options: RunOptions{Cwd: dir}})
	if err != nil || r.Output != dir+"\n" {
		t.Fatalf("explicit cwd: %+v %v", r, err)
	}
	if n := len(p.List()); n != 3 {
		t.Fatalf("pool grew to %d", n)
	}
}

func TestPoolAcquireIsAtomic(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, 8)
	ctx := testCtx(t)
	for range 2 {
		if _, err := p.Open(ctx, OpenOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	var res []*Reservation
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := p.Acquire(ctx, OpenOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			seen[r.Terminal().ID()]++
			res = append(res, r)
			mu.Unlock()
		}()
	}
	wg.Wait()
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("terminal %s handed out %d times", id, n)
		}
	}
	if len(seen) != 6 {
		t.Fatalf("got %d distinct terminals, want 6", len(seen))
	}
	// A reserved terminal refuses other runs.
	if _, err := res[0].Terminal().Run(ctx, "true", RunOptions{}); !isKind(err, "terminal_busy") {
		t.Fatalf("run on reserved: %v", err)
	}
	r, err := res[0].Run(ctx, "echo mine", RunOptions{})
	if err != nil || r.Output != "mine\n" {
		t.Fatalf("reservation run: %+v %v", r, err)
	}
	for _, r := range res[1:] {
		r.Release()
	}
}

func TestPoolDeadTerminalReplaced(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, 1)
	ctx := testCtx(t)
	r, err := p.Run(ctx, RunRequest{Command: "exit 9"})
	if err != nil || exitCode(r) != "9" || r.Reason != "shell_exited" {
		t.Fatalf("exit 9: %+v %v", r, err)
	}
	dead := r.TerminalID
	if _, err := p.Run(ctx, RunRequest{TerminalID: dead, Command: "true"}); !isKind(err, "terminal_dead") {
		t.Fatalf("run on dead: %v", err)
	}
	// Limit 1, but a dead terminal does not count: a new one opens.
	r, err = p.Run(ctx, RunRequest{Command: "echo fresh"})
	if err != nil || r.Output != "fresh\n" || r.TerminalID == dead {
		t.Fatalf("after death: %+v %v", r, err)
	}
	for _, in := range p.List() {
		if in.ID == dead {
			t.Fatalf("dead terminal still listed: %+v", p.List())
		}
	}
}

func TestPoolListKillClose(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, 4)
	ctx := testCtx(t)
	s, err := p.Open(ctx, OpenOptions{Name: "build", Cwd: t.TempDir(), Cols: 120, Rows: 40})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Run(ctx, "sleep 100", RunOptions{Yield: 100 * time.Millisecond})
	if err != nil || !r.Running {
		t.Fatalf("%+v %v", r, err)
	}
	list := p.List()
	if len(list) != 1 || list[0].ID != "t1" || list[0].Name != "build" || list[0].State != StateRunning ||
		list[0].Command != "sleep 100" || list[0].PID == 0 || list[0].Shell != "bash" || list[0].Mode != ModeIntegrated || list[0].Cols != 120 {
		t.Fatalf("list %+v", list)
	}
	if _, err := p.Run(ctx, RunRequest{TerminalID: "t1", Command: "true"}); !isKind(err, "terminal_busy") {
		t.Fatalf("busy: %v", err)
	}
	r, err = s.Kill(ctx)
	if err != nil || exitCode(r) != "137" {
		t.Fatalf("kill: %+v %v", r, err)
	}
	if err := p.CloseTerminal("t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Get("t1"); !isKind(err, "terminal_not_found") {
		t.Fatalf("get closed: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Open(context.Background(), OpenOptions{}); !isKind(err, "pool_closed") {
		t.Fatalf("open after close: %v", err)
	}
}
