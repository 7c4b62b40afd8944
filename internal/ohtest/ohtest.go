// Package ohtest holds what the golden tests of OpenHands' semantics share,
// V0's (ohactions) and V1's (ohtools): reading a JSONL file of cases, and
// preparing a case's workspace; and, for the tests of the faces that serve
// those tools, finding the command an agent runs and reading the process
// table and a process's figures from /proc, and mounting a faulty disk (a
// full or read-only tmpfs, on Linux) for the tests of disk faults. It is
// imported by tests only.
package ohtest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/workspace"
)

// Lines returns the non-blank lines of a JSONL file, with their line
// numbers for error messages.
func Lines(t testing.TB, file string) (lines [][]byte, numbers []int) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
		numbers = append(numbers, n)
	}
	return lines, numbers
}

// Setup is what a case prepares in its workspace before it runs: files to
// write, a bash script to run there, and a pause (for a command started
// earlier to finish).
type Setup struct {
	Files   map[string]string `json:"files"`
	Sh      string            `json:"sh"`
	SleepMs int               `json:"sleep_ms"`
}

// Apply prepares dir for the case named name; a nil Setup does nothing.
func (s *Setup) Apply(t testing.TB, dir, name string) {
	t.Helper()
	if s == nil {
		return
	}
	for file, content := range s.Files {
		p := filepath.Join(dir, file)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if s.Sh != "" {
		cmd := exec.Command("bash", "-c", s.Sh)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: setup: %v\n%s", name, err, out)
		}
	}
	if s.SleepMs > 0 {
		time.Sleep(time.Duration(s.SleepMs) * time.Millisecond)
	}
}

// Workspace returns a workspace over a fresh temporary directory, and the
// directory with symlinks resolved, as the texts under test show it.
func Workspace(t testing.TB) (*workspace.FS, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots, err := workspace.NewRoots([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { roots.Close() }) // Windows cannot remove a directory held open
	return workspace.New(roots, workspace.Options{}), dir
}

// EachFile runs fn for every *.jsonl file of dir, each in a parallel
// subtest named after the file; a dir without any fails the test.
func EachFile(t *testing.T, dir string, fn func(t *testing.T, file string)) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no fixtures in " + dir)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".jsonl"), func(t *testing.T) {
			t.Parallel()
			fn(t, file)
		})
	}
}

// Running reports whether a process runs with this command line (its
// arguments joined by spaces), as an agent's shell runs "sleep 30".
func Running(cmdline string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, _ := os.ReadFile(d)
		if strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ") == cmdline {
			return true
		}
	}
	return false
}
