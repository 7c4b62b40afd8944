package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/session"
)

// TestRootsChoice: the session chooses its roots from the candidates every
// face passes (the command's --workspace, the editor's initialize, ACP's
// session/new), the one choice for all of them; ChooseRoots, the command's
// early check, chooses exactly as New does.
func TestRootsChoice(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	file := filepath.Join(dir, "file.txt")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	c := session.Candidates
	cases := []struct {
		name  string
		cands []session.RootCandidate
		want  []string // the roots chosen
		err   string   // or the error's words: where the bad root came from and why
	}{
		{"one good root", c("--workspace", dir), []string{dir}, ""},
		{"a relative root is made absolute", c("initialize", "."), []string{wd}, ""},
		{"no candidate: the current directory", nil, []string{wd}, ""},
		{"a missing root", c("--workspace", filepath.Join(dir, "gone")),
			nil, "workspace root " + filepath.Join(dir, "gone") + " (from --workspace) does not exist; open an existing folder"},
		{"a file, not a directory", append(c("--workspace", dir), c("initialize", file)...),
			nil, "workspace root " + file + " (from initialize) is not a directory; open an existing folder"},
		{"a bad root after a good one fails the whole choice", append(c("session/new cwd", dir), c("session/new additionalDirectories", file)...),
			nil, "workspace root " + file + " (from session/new additionalDirectories) is not a directory; open an existing folder"},
		{"repeats are dropped, the first root first", append(c("--workspace", sub, dir), c("initialize", dir+"/", sub)...),
			[]string{sub, dir}, ""},
		{"nested roots are both kept", append(c("session/new cwd", dir), c("session/new additionalDirectories", sub)...),
			[]string{dir, sub}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			chosen, cerr := session.ChooseRoots(tc.cands...)
			s, err := session.New(session.Options{Roots: tc.cands})
			if tc.err != "" {
				if s != nil {
					s.Close(context.Background())
				}
				var k interface{ Kind() string }
				if err == nil || !errors.As(err, &k) || k.Kind() != "invalid_root" || err.Error() != tc.err {
					t.Fatalf("New: %v, want an invalid_root error %q", err, tc.err)
				}
				if cerr == nil || cerr.Error() != err.Error() {
					t.Fatalf("ChooseRoots: %v, want New's error", cerr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(context.Background())
			if cerr != nil || !slices.Equal(chosen, tc.want) {
				t.Errorf("ChooseRoots = %q, %v; want %q", chosen, cerr, tc.want)
			}
			if got := s.ChosenRoots(); !slices.Equal(got, tc.want) {
				t.Errorf("ChosenRoots = %q, want %q", got, tc.want)
			}
			// Roots spell the paths the session reports: symlinks resolved.
			for i, r := range s.Roots() {
				real, _ := filepath.EvalSymlinks(tc.want[i])
				if r != real {
					t.Errorf("Roots[%d] = %s, want %s", i, r, real)
				}
			}
		})
	}
}

// TestRootsConfine: a nested root adds nothing the outer one did not
// hold, and a path outside every root is refused by kind, whichever root
// it is relative to.
func TestRootsConfine(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	s, err := session.New(session.Options{Roots: append(session.Candidates("test", dir), session.Candidates("test", sub)...)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	cases := []struct {
		path, want, kind string
	}{
		{"a.txt", filepath.Join(dir, "a.txt"), ""}, // relative to the first root
		{filepath.Join(sub, "b.txt"), filepath.Join(sub, "b.txt"), ""},
		{filepath.Join(dir, "..", "elsewhere"), "", "path_outside_workspace"},
		{"../x", "", "path_outside_workspace"},
	}
	for _, tc := range cases {
		got, err := s.Resolve(tc.path)
		var k interface{ Kind() string }
		switch {
		case tc.kind == "" && (err != nil || got != tc.want):
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
		case tc.kind != "" && (err == nil || !errors.As(err, &k) || k.Kind() != tc.kind || !strings.Contains(err.Error(), dir)):
			t.Errorf("Resolve(%q) = %q, %v; want a %s error naming the roots", tc.path, got, err, tc.kind)
		}
	}
}

// newSession opens a session over a fresh root, its agents' shells
// skipping the person's rc file; the session closes with the test.
func newSession(t *testing.T, o session.Options) (*session.Session, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o.Roots = session.Candidates("test", dir)
	o.ShellMode = session.ShellNoRC
	s, err := session.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s, dir
}
