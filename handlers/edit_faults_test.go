//go:build linux

package handlers_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/oh-bridge/oh-bridge/handlers"
	"github.com/oh-bridge/oh-bridge/rpc"
)

// faultyDisk mounts a tmpfs with these options on a fresh directory for
// the test's duration, as workspace/faults_test.go does: outside CI a test
// that cannot mount is skipped, saying why; with CI=true it fails.
func faultyDisk(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, opts); err != nil {
		msg := "cannot mount a tmpfs (" + err.Error() + "): run the tests as root, or in a container with CAP_SYS_ADMIN"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// TestEditDiskFaults: edit/* on a full disk and on a read-only one answer
// OHEditor's text (Python's OSError where it has one) and the fault's own
// kind with {path, op, unchanged}, as fs/* does; the file keeps its bytes.
func TestEditDiskFaults(t *testing.T) {
	cases := []struct {
		name     string
		size     string
		readOnly bool
		newStr   string
		kind     string
		cause    func(path string) string
	}{
		{"disk full", "size=512k", false, strings.Repeat("x", 1<<20), "no_space",
			func(string) string { return "[Errno 28] No space left on device" }},
		{"read-only file system", "size=1m", true, "beta", "read_only_file_system",
			func(p string) string { return "[Errno 30] Read-only file system: '" + p + "'" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := faultyDisk(t, c.size)
			p := filepath.Join(root, "a.txt")
			if err := os.WriteFile(p, []byte("alpha\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.readOnly {
				if err := unix.Mount("", root, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
					t.Fatalf("remount read-only: %v", err)
				}
			}
			_, cl := serve(t, handlers.Config{Version: "1.0.0", Roots: []string{root}})
			if _, err := cl.Initialize(ctxT(t), map[string]any{"capabilities": map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			err := cl.Call(ctxT(t), "edit/str_replace", map[string]any{"path": "a.txt", "oldStr": "alpha", "newStr": c.newStr}, nil)
			want := "Ran into " + c.cause(p) + " while trying to write to " + p
			data := wantError(t, err, 1014, c.kind, want)
			var e *rpc.Error
			if errors.As(err, &e) && e.Message != want {
				t.Errorf("message %q, want %q", e.Message, want)
			}
			if data["op"] != "write" || data["unchanged"] != true || data["path"] != p {
				t.Errorf("data = %v, want op write, unchanged true, path %s", data, p)
			}
			if got := readDisk(t, p); got != "alpha\n" {
				t.Errorf("a.txt = %q after the failed edit, want its old content", got)
			}
		})
	}
}
