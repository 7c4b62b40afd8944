// Package logbuf holds what a test reads while something else writes it:
// a process's stderr, a logger's output. It imports nothing of the bridge,
// so that any package's tests can use it, workspace's own included (they
// cannot import package ohtest, which imports workspace).
package logbuf

import (
	"bytes"
	"strings"
	"sync"
	"time"
)

// Buffer is a bytes.Buffer that a writer (a process's stderr copier, a
// slog handler) and the test may use at once. Its zero value is empty and
// ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
	// wrote is closed, and replaced, at each write: Contains waits on it.
	wrote chan struct{}
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wrote != nil {
		close(l.wrote)
		l.wrote = nil
	}
	return l.b.Write(p)
}

// Contains waits, up to within, for s to have been written, and says
// whether it was. A process's stderr is copied apart from its stdout, so
// a line it logged before it answered may reach the buffer after the
// answer reaches the test: a test that checks the log waits for it here.
func (l *Buffer) Contains(s string, within time.Duration) bool {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		if strings.Contains(l.b.String(), s) {
			l.mu.Unlock()
			return true
		}
		if l.wrote == nil {
			l.wrote = make(chan struct{})
		}
		wrote := l.wrote
		l.mu.Unlock()
		select {
		case <-wrote:
		case <-deadline.C:
			return strings.Contains(l.String(), s)
		}
	}
}

// String is what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Len is how many bytes were written so far.
func (l *Buffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}
