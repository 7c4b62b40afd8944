//go:build linux

package ohtest

import (
	"os"
	"path/filepath"
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
