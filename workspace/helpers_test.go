package workspace

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// assertEqual is the one assertion helper: it prints the input, want and got.
func assertEqual[T comparable](t testing.TB, input string, want, got T) {
	t.Helper()
	if want != got {
		t.Errorf("input: %s\nwant: %#v\ngot:  %#v", input, want, got)
	}
}

// kindOf returns the Kind of a typed workspace error, "" for nil, or the
// Go type and message for anything else.
func kindOf(err error) string {
	if err == nil {
		return ""
	}
	var k interface{ Kind() string }
	if errors.As(err, &k) {
		return k.Kind()
	}
	return fmt.Sprintf("%T: %v", err, err)
}

// symlink makes link point at target and reports whether the platform let
// it. Windows needs Developer Mode or the symlink privilege (and Wine 8
// answers success and makes nothing); there the rows that need the link
// are left out. Anywhere else a failure fails the test.
func symlink(t testing.TB, target, link string) bool {
	t.Helper()
	err := os.Symlink(target, link)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Lstat(link); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			err = fmt.Errorf("%s is not a symlink after os.Symlink", link)
		}
	}
	if err != nil {
		if runtime.GOOS != "windows" {
			t.Fatal(err)
		}
		t.Logf("no symlink here, rows that need one are left out: %v", err)
		return false
	}
	return true
}

// relSlash is p relative to root with "/" between names, as the tests spell
// expected paths on every platform.
func relSlash(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// useJournalDir points the write journals at a directory of the test's own
// and lets go of this process's journal when the test ends (Windows
// cannot remove a directory holding an open file).
func useJournalDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	old := pendingWritesDir
	pendingWritesDir = dir
	t.Cleanup(func() {
		pendingWrites.mu.Lock()
		if pendingWrites.f != nil {
			pendingWrites.f.Close()
			pendingWrites.f = nil
		}
		pendingWrites.mu.Unlock()
		pendingWritesDir = old
	})
	return dir
}

// newFS returns an FS over a fresh root holding files (name -> content).
func newFS(t testing.TB, files map[string]string) (*FS, string) {
	t.Helper()
	roots, err := NewRoots([]string{t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { roots.Close() })
	root := roots.First()
	writeFiles(t, root, files)
	return New(roots, Options{}), root
}

func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// startChild runs this test binary's test named test as a child process,
// with env added, and waits up to wait for a line of its output that
// starts with prefix. It returns the running child and the rest of that
// line; the test fails, the child reaped, if the child ends first or the
// wait runs out.
func startChild(t *testing.T, test, prefix string, wait time.Duration, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
				line <- rest
				return
			}
		}
		close(line)
	}()
	select {
	case rest, ok := <-line:
		if !ok {
			cmd.Wait()
			t.Fatalf("%s exited before printing %q", test, prefix)
		}
		return cmd, rest
	case <-time.After(wait):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%s did not print %q within %v", test, prefix, wait)
	}
	return nil, ""
}
