package facekit_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/session"
)

// TestStartSession: the roots are the directories given, first given
// first, each once; a directory that cannot be a root is refused with
// the kind every face maps, naming where it came from; with none given,
// the current directory is the root.
func TestStartSession(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	sess, roots, err := facekit.StartSession(session.Options{}, facekit.Dirs{Origin: "--workspace", Paths: []string{b}}, facekit.Dirs{Origin: "initialize", Paths: []string{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	sess.Close(context.Background())
	if !slices.Equal(roots, []string{b, a}) {
		t.Errorf("roots %v; want %v", roots, []string{b, a})
	}

	file := filepath.Join(a, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = facekit.StartSession(session.Options{}, facekit.Dirs{Origin: "session/new cwd", Paths: []string{a}}, facekit.Dirs{Origin: "session/new additionalDirectories", Paths: []string{file}})
	if kind(err) != "invalid_root" || !strings.Contains(err.Error(), "session/new additionalDirectories") {
		t.Errorf("a file as a root: %v (kind %q)", err, kind(err))
	}

	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	sess, roots, err = facekit.StartSession(session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sess.Close(context.Background())
	if !slices.Equal(roots, []string{wd}) {
		t.Errorf("with none given: %v; want the current directory %s", roots, wd)
	}
}
