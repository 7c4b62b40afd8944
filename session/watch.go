package session

import (
	"context"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/workspace"
)

// watchReadyWait bounds how long a change waits for the watcher to finish
// its initial walk, so the first change of a session is reported like
// every later one.
const watchReadyWait = 2 * time.Second

// watching runs the workspace watcher for a session.
type watching struct {
	cancel context.CancelFunc
	ready  chan struct{} // closed once the watch is up, has failed, or is off

	mu      sync.Mutex
	state   string // "off", "starting", "watching", "failed", "stopped"
	err     error
	setup   time.Duration
	watcher *workspace.Watcher
}

// WatchStatus says whether file watching is up.
type WatchStatus struct {
	State string        // off, starting, watching, failed, stopped
	Setup time.Duration // how long the initial walk took (not while starting)
	Err   error         // why it failed
}

func startWatching(s *Session, onChange func([]FileChange)) *watching {
	w := &watching{ready: make(chan struct{}), state: "starting", cancel: func() {}}
	if onChange == nil {
		w.state = "off"
		close(w.ready)
		return w
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() {
		start := time.Now()
		watcher, err := s.fs.Watch(ctx, workspace.WatchOptions{Logger: s.opts.Logger},
			func(cs []workspace.Change) { onChange(changesOf(cs)) })
		w.mu.Lock()
		w.setup = time.Since(start)
		switch {
		case err != nil:
			w.state, w.err = "failed", err
			s.log.Warn("file watching is off: cannot watch the workspace", "error", err)
		case ctx.Err() != nil:
			w.state = "stopped"
		default:
			w.state, w.watcher = "watching", watcher
			s.log.Debug("watching the workspace", "setup", w.setup)
		}
		w.mu.Unlock()
		close(w.ready)
	}()
	return w
}

// AwaitWatch lets a change wait, briefly, for the watcher's initial walk,
// so the change it makes is seen and reported.
func (s *Session) AwaitWatch(ctx context.Context) {
	select {
	case <-s.watch.ready:
		return
	default:
	}
	t := time.NewTimer(watchReadyWait)
	defer t.Stop()
	select {
	case <-s.watch.ready:
	case <-t.C:
	case <-ctx.Done():
	}
}

// WatchStatus reports on watching; with wait it answers once the initial
// walk is over (or has failed).
func (s *Session) WatchStatus(ctx context.Context, wait bool) (WatchStatus, error) {
	if wait {
		select {
		case <-s.watch.ready:
		case <-ctx.Done():
			return WatchStatus{}, ctx.Err()
		}
	}
	w := s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	st := WatchStatus{State: w.state, Err: w.err}
	if w.state != "starting" && w.state != "off" {
		st.Setup = w.setup
	}
	return st, nil
}

func (w *watching) stop(ctx context.Context) {
	w.cancel()
	select {
	case <-w.ready:
	case <-ctx.Done():
		return
	}
	w.mu.Lock()
	watcher := w.watcher
	if w.state != "off" {
		w.state = "stopped"
	}
	w.mu.Unlock()
	if watcher != nil {
		select {
		case <-watcher.Done():
		case <-ctx.Done():
		}
	}
}
