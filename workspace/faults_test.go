//go:build linux

package workspace_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// assertFault checks a fault's error: its kind, and a message naming the
// path, the cause and more (the fix, "unchanged").
func assertFault(t *testing.T, err error, kind string, wants ...string) {
	t.Helper()
	if got := kindOf(err); got != kind {
		t.Fatalf("kind: want %s, got %s (%v)", kind, got, err)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message %q lacks %q", err.Error(), w)
		}
	}
	t.Logf("%s: %v", kind, err)
}

// assertNoTemp fails if dir holds an atomic write's temporary file.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".oh-bridge-tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestDiskFull(t *testing.T) {
	ctx := context.Background()
	root := ohtest.FaultyDisk(t, "size=512k")
	fsys := newTestFS(t, root)
	const old = "old content\n"
	writeTestFile(t, filepath.Join(root, "a.txt"), old)
	_, err := fsys.WriteTextFile(ctx, "a.txt", strings.Repeat("x", 1<<20), "", false)
	assertFault(t, err, "no_space", "cannot write a.txt", "no space left on device", "(the old content is unchanged)", "free space and retry")
	assertEqualString(t, "a.txt after the failed write", old, readTestFile(t, filepath.Join(root, "a.txt")))
	assertNoTemp(t, root)
	// The space the temporary file took is free again: a write that fits works.
	if _, err := fsys.WriteTextFile(ctx, "a.txt", "new\n", "", false); err != nil {
		t.Fatalf("a small write after the failure: %v", err)
	}
}

func TestReadOnlyFileSystem(t *testing.T) {
	ctx := context.Background()
	root := ohtest.FaultyDisk(t, "size=1m")
	fsys := newTestFS(t, root)
	writeTestFile(t, filepath.Join(root, "a.txt"), "old\n")
	ohtest.RemountReadOnly(t, root)
	_, err := fsys.WriteTextFile(ctx, "a.txt", "new\n", "", false)
	assertFault(t, err, "read_only_file_system", "cannot write a.txt", "read-only file system", "(the old content is unchanged)", "remount it read-write")
	assertEqualString(t, "a.txt", "old\n", readTestFile(t, filepath.Join(root, "a.txt")))
	assertFault(t, fsys.Delete(ctx, "a.txt", false), "read_only_file_system", "cannot delete a.txt", "read-only file system")
	assertFault(t, fsys.Mkdir(ctx, "d", false), "read_only_file_system", "cannot create directory d", "read-only file system")
	assertFault(t, fsys.Move(ctx, "a.txt", "b.txt", false), "read_only_file_system", "cannot move a.txt to b.txt", "read-only file system")
}

const accessChildEnv = "OH_BRIDGE_TEST_ACCESS_CHILD"

// TestAccessDeniedChild is not a test: it is TestAccessDenied's child,
// run as nobody, so that root's bypass of permissions does not apply.
func TestAccessDeniedChild(t *testing.T) {
	root := os.Getenv(accessChildEnv)
	if root == "" {
		t.Skip("helper process for TestAccessDenied")
	}
	_, err := newTestFS(t, root).WriteTextFile(context.Background(), "ro/a.txt", "new\n", "", false)
	json.NewEncoder(os.Stdout).Encode(map[string]string{"kind": kindOf(err), "message": errString(err)})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestAccessDenied writes into a directory the bridge's user may not write.
// As root (here and in CI) permissions do not bind, so the write runs in a
// child process as nobody.
func TestAccessDenied(t *testing.T) {
	root := t.TempDir()
	ro := filepath.Join(root, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(ro, "a.txt"), "old\n")
	if os.Getuid() != 0 {
		os.Chmod(ro, 0o555)
		t.Cleanup(func() { os.Chmod(ro, 0o755) })
		_, err := newTestFS(t, root).WriteTextFile(context.Background(), "ro/a.txt", "new\n", "", false)
		assertFault(t, err, "access_denied", "cannot write ro/a.txt", "permission denied", "(the old content is unchanged)", "check the permissions")
		return
	}
	// nobody must reach the test binary and the root: copy the binary to a
	// directory anyone can enter, and open up the temp directories' modes.
	bin := filepath.Join(t.TempDir(), "workspace.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(bin), filepath.Dir(filepath.Dir(bin)), root, filepath.Dir(root)} {
		os.Chmod(d, 0o755)
	}
	cmd := exec.Command(bin, "-test.run=^TestAccessDeniedChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), accessChildEnv+"="+root, "HOME="+root)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child as nobody: %v\n%s", err, out)
	}
	var got struct{ Kind, Message string }
	line, _, _ := strings.Cut(string(out), "\n")
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatalf("child's answer %q: %v", out, err)
	}
	assertEqualString(t, "kind", "access_denied", got.Kind)
	for _, w := range []string{"cannot write ro/a.txt", "permission denied", "(the old content is unchanged)", "check the permissions"} {
		if !strings.Contains(got.Message, w) {
			t.Errorf("message %q lacks %q", got.Message, w)
		}
	}
	t.Logf("access_denied: %s", got.Message)
	assertEqualString(t, "ro/a.txt", "old\n", readTestFile(t, filepath.Join(ro, "a.txt")))
	assertNoTemp(t, ro)
}

func TestNameTooLong(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	fsys := newTestFS(t, root)
	long := strings.Repeat("n", 300) + ".txt"
	_, err := fsys.WriteTextFile(ctx, long, "x", "", false)
	assertFault(t, err, "name_too_long", "cannot resolve "+long, "file name too long", "at most 255 bytes")
	if err := fsys.Mkdir(ctx, "dir", false); err != nil {
		t.Fatal(err)
	}
	_, err = fsys.ReadTextFile(ctx, "dir/"+long, 0, 0)
	assertFault(t, err, "name_too_long", "file name too long")
	// A name of 255 bytes is fine, though its temporary sibling's would not be.
	if _, err := fsys.WriteTextFile(ctx, strings.Repeat("m", 255), "x", "", false); err != nil {
		t.Errorf("a 255-byte name: %v", err)
	}
	assertNoTemp(t, root)
}

// TestReplacedByDirectory replaces a file by a directory between a view
// and an edit, and between the edit's read and its write.
func TestReplacedByDirectory(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	fsys := newTestFS(t, root)
	ed := editor.New(fsys, editor.Options{})
	p := filepath.Join(fsys.Roots().First(), "a.txt")
	toDir := func() {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, filepath.Join(p, "inner.txt"), "inner\n")
	}

	writeTestFile(t, p, "alpha\n")
	if _, err := ed.View(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	toDir()
	_, err := ed.StrReplace(ctx, p, "alpha", "beta", "")
	assertFault(t, err, "is_directory", p, "is a directory")
	assertEqualString(t, "the directory's file", "inner\n", readTestFile(t, filepath.Join(p, "inner.txt")))

	os.RemoveAll(p)
	writeTestFile(t, p, "alpha\n")
	defer workspace.SetWriteHookForTest(func(string) { toDir() })()
	_, err = ed.StrReplace(ctx, p, "alpha", "beta", "")
	assertFault(t, err, "is_directory", "while trying to write to "+p, "is a directory")
	assertEqualString(t, "the directory's file", "inner\n", readTestFile(t, filepath.Join(p, "inner.txt")))
}

// TestDeletedMidEdit deletes the file between the editor's read and its
// write: the edit must fail as stale and must not bring the file back.
func TestDeletedMidEdit(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	fsys := newTestFS(t, root)
	ed := editor.New(fsys, editor.Options{})
	p := filepath.Join(fsys.Roots().First(), "a.txt")
	writeTestFile(t, p, "alpha\n")
	defer workspace.SetWriteHookForTest(func(string) {
		if err := os.Remove(p); err != nil {
			t.Error(err)
		}
	})()
	_, err := ed.StrReplace(ctx, p, "alpha", "beta", "")
	assertFault(t, err, "stale_version", p, "the file does not exist", "nothing was written", "re-read the file")
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Errorf("the deleted file is back: %v", err)
	}
	assertNoTemp(t, fsys.Roots().First())
}

func assertEqualString(t *testing.T, what, want, got string) {
	t.Helper()
	if want != got {
		t.Errorf("%s: want %q, got %q", what, want, got)
	}
}
