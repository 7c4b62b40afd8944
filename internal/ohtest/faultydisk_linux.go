//go:build linux

package ohtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// FaultyDisk mounts a tmpfs with these options (its size: "size=512k" is
// one a write of a MiB fills) on a fresh directory for the test's
// duration, and unmounts it after. Outside CI a test that cannot mount is
// skipped, saying why; in CI (CI=true) it fails, so a disk-fault test
// never silently stops running there.
func FaultyDisk(t *testing.T, opts string) string {
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

// RemountReadOnly makes a FaultyDisk read-only: its files stay readable,
// and every write fails with EROFS.
func RemountReadOnly(t *testing.T, dir string) {
	t.Helper()
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount read-only: %v", err)
	}
}

// FaultyFile is the disk-fault tests' file: name with content on a new
// FaultyDisk of these options, remounted read-only after when readOnly. It
// returns the file's path.
func FaultyFile(t *testing.T, opts string, readOnly bool, name, content string) string {
	t.Helper()
	root := FaultyDisk(t, opts)
	p := filepath.Join(root, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if readOnly {
		RemountReadOnly(t, root)
	}
	return p
}

// FileEditorFault is a file_editor edit that a FaultyFile refuses, as the
// faces that serve the V1 SDK's FileEditor (ACP, MCP) test it.
type FileEditorFault struct {
	Name     string // the subtest's
	Opts     string // the FaultyDisk's options
	ReadOnly bool
	NewStr   string // the edit's new text: more than fits, or any
	Kind     string // the bridge's kind for the fault
	// Text matches FileEditor's words for the fault on path, Python's
	// OSError in them.
	Text func(path string) *regexp.Regexp
}

// FileEditorFaults are an edit on a full disk and one on a read-only disk.
var FileEditorFaults = []FileEditorFault{
	{"disk full", "size=512k", false, strings.Repeat("x", 1<<20), "no_space", func(p string) *regexp.Regexp {
		return regexp.MustCompile("^" + regexp.QuoteMeta("Ran into [Errno 28] No space left on device while trying to write to "+p) + "$")
	}},
	// FileEditor opens a temporary file beside the path, a random name of
	// Python's tempfile alphabet.
	{"read-only file system", "size=1m", true, "beta", "read_only_file_system", func(p string) *regexp.Regexp {
		return regexp.MustCompile("^" + regexp.QuoteMeta("Ran into [Errno 30] Read-only file system: '"+filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".")) +
			"[a-z0-9_]{8}" + regexp.QuoteMeta(".tmp' while trying to write to "+p) + "$")
	}},
}
