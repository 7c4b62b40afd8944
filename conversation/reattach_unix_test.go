//go:build unix

package conversation

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRecordsPlanted: records that are not the bridge's own are refused at
// once, whatever was planted in their place.
func TestRecordsPlanted(t *testing.T) {
	good := `{"bridge":"` + recordMark + `","conversation":"c1","url":"http://127.0.0.1:4711/mcp","token":"` + minted + `"}`
	cases := []struct {
		name  string
		plant func(p string) error
		root  bool
	}{
		{"a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o600) }, false},
		{"a link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, false},
		{"readable by others", func(p string) error { return writeMode(p, good, 0o644) }, false},
		{"writable by others", func(p string) error { return writeMode(p, good, 0o666) }, false},
		{"not the bridge's shape", func(p string) error {
			return writeMode(p, `{"url":"http://127.0.0.1:4711/mcp","token":"x"}`, 0o600)
		}, false},
		{"another conversation's", func(p string) error { return writeMode(p, strings.Replace(good, `"c1"`, `"c9"`, 1), 0o600) }, false},
		{"another user's", func(p string) error {
			if err := writeMode(p, good, 0o600); err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Getuid() != 0 {
				if os.Getenv("CI") != "" {
					t.Fatal("needs root")
				}
				t.Skip("needs root")
			}
			dir := filepath.Join(t.TempDir(), "endpoints")
			os.MkdirAll(dir, 0o700)
			if err := c.plant(filepath.Join(dir, "c1.json")); err != nil {
				t.Fatal(err)
			}
			_, _, err := named(attached("c1", agentNaming("4711", "**********")), dir)
			var unknown *EndpointUnknownError
			if !errors.As(err, &unknown) || !strings.Contains(err.Error(), "its record cannot be used") {
				t.Fatalf("a planted record: %v", err)
			}
		})
	}
	// A records directory left open to others is tightened.
	dir := filepath.Join(t.TempDir(), "endpoints")
	os.MkdirAll(dir, 0o777)
	os.Chmod(dir, 0o777)
	writeMode(filepath.Join(dir, "c1.json"), good, 0o600)
	if _, _, err := named(attached("c1", agentNaming("4711", "**********")), dir); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("the records directory is %04o, want tightened to 0700", st.Mode().Perm())
	}
}
