//go:build unix

package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestContainment tries every way out of a root we know of.
func TestContainment(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	out := filepath.Join(base, "outside")
	writeFiles(t, root, map[string]string{"a.txt": "a\n", "sub/f": "f\n"})
	writeFiles(t, out, map[string]string{"secret": "s\n"})
	links := map[string]string{
		"ws/etc":          "/etc",
		"ws/passwd":       "/etc/passwd",
		"ws/inside":       filepath.Join(root, "sub"),
		"ws/rel-inside":   "sub",
		"ws/dangling":     filepath.Join(out, "missing"),
		"ws/dangling-dir": filepath.Join(out, "newdir/deeper"),
		"ws/dangling-in":  filepath.Join(root, "newdir"),
		"ws/sub/upup":     "../..",
		"ws/sub/up":       "..",
		"ws/loop":         "loop",
		"rootlink":        root,
		"ws/chain":        "sub/upup", // a symlink through a symlink
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(base, name)); err != nil {
			t.Fatal(err)
		}
	}
	roots, err := NewRoots([]string{filepath.Join(base, "rootlink")}) // a symlinked root
	if err != nil {
		t.Fatal(err)
	}
	defer roots.Close()
	assertEqual(t, "symlinked root is resolved", root, roots.First())

	tests := []struct {
		path string
		want string // resolved path, or the error kind
	}{
		{"a.txt", root + "/a.txt"},
		{root + "/a.txt", root + "/a.txt"},
		{base + "/rootlink/a.txt", root + "/a.txt"},
		{"sub/../a.txt", root + "/a.txt"},
		{"new/deeper/file.txt", root + "/new/deeper/file.txt"},
		{"inside/f", root + "/sub/f"},
		{"rel-inside/f", root + "/sub/f"},
		{"sub/up/a.txt", root + "/a.txt"},
		{"dangling-in/x.txt", root + "/newdir/x.txt"},
		{"a.txt/below", root + "/a.txt/below"},
		{"/etc/passwd", "path_outside_workspace"},
		{"../outside/secret", "path_outside_workspace"},
		{root + "/../outside/secret", "path_outside_workspace"},
		{"../../../../../../../../etc/passwd", "path_outside_workspace"},
		{"etc", "path_outside_workspace"},
		{"etc/passwd", "path_outside_workspace"},
		{"passwd", "path_outside_workspace"},
		{"dangling", "path_outside_workspace"},
		{"dangling/new.txt", "path_outside_workspace"},
		{"dangling-dir/x", "path_outside_workspace"},
		{"sub/upup/outside/secret", "path_outside_workspace"},
		{"chain/outside/secret", "path_outside_workspace"},
		{base + "/rootlink/etc/x", "path_outside_workspace"},
		{base, "path_outside_workspace"},
		{"/", "path_outside_workspace"},
	}
	for _, tt := range tests {
		got, err := roots.Resolve(tt.path)
		if err != nil {
			got = kindOf(err)
		}
		assertEqual(t, "Resolve("+tt.path+")", tt.want, got)
	}
	if _, err := roots.Resolve("loop/x"); err == nil {
		t.Errorf("input: Resolve(loop/x)\nwant: an error for the symlink loop\ngot:  nil")
	}

	// The operations refuse the same paths and create nothing outside.
	fs := New(roots, Options{})
	ctx := context.Background()
	ops := []struct {
		name string
		run  func() error
		want string
	}{
		{"write through dangling symlink", func() error {
			_, err := fs.WriteTextFile(ctx, "dangling", "x", "", true)
			return err
		}, "path_outside_workspace"},
		{"write under dangling dir symlink", func() error {
			_, err := fs.WriteTextFile(ctx, "dangling-dir/x.txt", "x", "", true)
			return err
		}, "path_outside_workspace"},
		{"write file symlink to /etc/passwd", func() error {
			_, err := fs.WriteTextFile(ctx, "passwd", "x", "", false)
			return err
		}, "path_outside_workspace"},
		{"read /etc/passwd via dir symlink", func() error {
			_, err := fs.ReadTextFile(ctx, "etc/passwd", 0, 0)
			return err
		}, "path_outside_workspace"},
		{"list a symlink to /etc", func() error {
			_, err := fs.ListDirectory(ctx, "etc", ListOptions{})
			return err
		}, "path_outside_workspace"},
		{"mkdir under escaping symlink", func() error { return fs.Mkdir(ctx, "sub/upup/evil", true) }, "path_outside_workspace"},
		{"move out", func() error { return fs.Move(ctx, "a.txt", "../outside/a.txt", false) }, "path_outside_workspace"},
		{"move in", func() error { return fs.Move(ctx, out+"/secret", "secret", false) }, "path_outside_workspace"},
		{"delete the root", func() error { return fs.Delete(ctx, root, true) }, "workspace_root"},
		{"delete the root via dot", func() error { return fs.Delete(ctx, ".", true) }, "workspace_root"},
		{"delete a symlink removes the link only", func() error { return fs.Delete(ctx, "etc", false) }, ""},
	}
	for _, op := range ops {
		assertEqual(t, op.name, op.want, kindOf(op.run()))
	}
	for _, p := range []string{out + "/missing", out + "/newdir", out + "/evil", base + "/evil"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created outside the root", p)
		}
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Errorf("/etc/passwd: %v", err)
	}
}
