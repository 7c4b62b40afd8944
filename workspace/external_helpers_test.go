//go:build linux

package workspace_test

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// Helpers for the tests that drive the workspace from outside the package.

func newTestFS(t testing.TB, dirs ...string) *workspace.FS {
	t.Helper()
	roots, err := workspace.NewRoots(dirs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { roots.Close() })
	return workspace.New(roots, workspace.Options{})
}

func writeTestFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// kindOf returns the kind of a typed error (the editor's too), "" for nil, or the Go type and
// message for anything else.
func kindOf(err error) string {
	if err == nil {
		return ""
	}
	var k interface{ Kind() string }
	if errors.As(err, &k) {
		return k.Kind()
	}
	var te *editor.ToolError
	if errors.As(err, &te) {
		return te.Kind
	}
	return fmt.Sprintf("%T: %v", err, err)
}
