//go:build !unix

package shellint

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// TestTerminalsUnsupported: every call that would start a terminal
// answers *UnsupportedPlatformError, before it looks for a shell.
func TestTerminalsUnsupported(t *testing.T) {
	ctx := context.Background()
	p := NewPool(PoolOptions{})
	defer p.Close()
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Start", func() error { _, err := Start(ctx, Options{Cwd: t.TempDir()}); return err }},
		{"Pool.Open", func() error { _, err := p.Open(ctx, OpenOptions{Cwd: t.TempDir()}); return err }},
		{"Pool.Acquire", func() error { _, err := p.Acquire(ctx, OpenOptions{Shell: "bash"}); return err }},
		{"Pool.Run", func() error { _, err := p.Run(ctx, RunRequest{Command: "echo hi"}); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var u *UnsupportedPlatformError
			if !errors.As(err, &u) || u.GOOS != runtime.GOOS {
				t.Fatalf("%s = %v (%T), want *UnsupportedPlatformError{GOOS: %q}", tc.name, err, err, runtime.GOOS)
			}
		})
	}
	if got := p.List(); len(got) != 0 {
		t.Errorf("List() = %v after refused opens, want none", got)
	}
}
