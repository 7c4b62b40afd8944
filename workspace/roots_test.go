package workspace

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestResolveEveryPlatform checks the ways out of a root that need no
// symlink, the names each platform reads its own way, and, where the
// platform lets the test make them, symlinks out and in. TestContainment
// (roots_unix_test.go) has the Unix ways out (/etc, /proc, loops).
func TestResolveEveryPlatform(t *testing.T) {
	base := t.TempDir()
	writeFiles(t, filepath.Join(base, "ws"), map[string]string{"a.txt": "a\n", "Sub/f": "f\n"})
	writeFiles(t, filepath.Join(base, "outside"), map[string]string{"secret": "s\n"})
	roots, err := NewRoots([]string{filepath.Join(base, "ws")})
	if err != nil {
		t.Fatal(err)
	}
	defer roots.Close()
	root := roots.First() // as the platform spells it
	out := filepath.Join(filepath.Dir(root), "outside")
	const outside, invalid = "path_outside_workspace", "invalid_path"
	in := func(names ...string) string { return filepath.Join(append([]string{root}, names...)...) }
	tests := []struct {
		on   string // "" for every platform, or "windows" or "unix"
		path string
		want string // the resolved path, or the error's kind
	}{
		{"", "a.txt", in("a.txt")},
		{"", in("a.txt"), in("a.txt")},
		{"", "Sub/../a.txt", in("a.txt")},
		{"", "new/deeper/file.txt", in("new", "deeper", "file.txt")},
		{"", "../outside/secret", outside},
		{"", filepath.Join(out, "secret"), outside},
		{"", root + "/../outside/secret", outside},
		{"", strings.Repeat("../", 30) + "x", outside},
		{"", volumeRoot(root), outside},
		// Rooted: on Unix absolute, on Windows on the first root's volume.
		{"", "/x", outside},
		// Windows looks names up without case; the resolved path is spelled
		// as the directory holds it. Devices and streams are no files.
		{"windows", "SUB/F", in("Sub", "f")},
		{"windows", strings.ToUpper(in("a.txt")), in("a.txt")},
		{"windows", "NUL", invalid},
		{"windows", "Sub/COM1", invalid},
		{"windows", "a.txt:stream", invalid},
		{"unix", "NUL", in("NUL")},
		{"unix", "a.txt:stream", in("a.txt:stream")},
	}
	onWindows := runtime.GOOS == "windows"
	for _, tt := range tests {
		if tt.on == "windows" && !onWindows || tt.on == "unix" && onWindows {
			continue
		}
		got, err := roots.Resolve(tt.path)
		if err != nil {
			got = kindOf(err)
		}
		assertEqual(t, "Resolve("+tt.path+")", tt.want, got)
	}

	t.Run("symlinks", func(t *testing.T) {
		if !symlink(t, out, in("out-link")) || !symlink(t, in("Sub"), in("in-link")) {
			t.Skip("this platform does not let the test make symlinks")
		}
		for _, tt := range []struct{ path, want string }{
			{"in-link/f", in("Sub", "f")},
			{"out-link/secret", outside},
			{"out-link/new.txt", outside},
		} {
			got, err := roots.Resolve(tt.path)
			if err != nil {
				got = kindOf(err)
			}
			assertEqual(t, "Resolve("+tt.path+")", tt.want, got)
		}
		fs := New(roots, Options{})
		_, err := fs.WriteTextFile(context.Background(), "out-link/new.txt", "x", "", false)
		assertEqual(t, "write through a link out", outside, kindOf(err))
		if _, err := os.Lstat(filepath.Join(out, "new.txt")); err == nil {
			t.Errorf("%s was created outside the root", filepath.Join(out, "new.txt"))
		}
	})
}

func TestNewRootsErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f": "x"})
	for _, tt := range []struct {
		name string
		dirs []string
	}{
		{"none", nil},
		{"missing", []string{dir + "/missing"}},
		{"file", []string{dir + "/f"}},
	} {
		if _, err := NewRoots(tt.dirs); err == nil {
			t.Errorf("input: NewRoots(%v)\nwant: error\ngot:  nil", tt.dirs)
		}
	}
}
