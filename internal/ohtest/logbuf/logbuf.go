// Package logbuf holds what a test reads while something else writes it:
// a process's stderr, a logger's output. It imports nothing of the bridge,
// so that any package's tests can use it, workspace's own included (they
// cannot import package ohtest, which imports workspace).
package logbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that a writer (a process's stderr copier, a
// slog handler) and the test may use at once. Its zero value is empty and
// ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
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
