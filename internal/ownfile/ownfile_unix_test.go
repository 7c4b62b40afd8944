//go:build unix

package ownfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/ownfile"
)

// Each planted file is refused at once, in words that name it and why;
// none is read for long or held.
func TestReadRefusesWhatIsNotTheFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{}`), 0o600)
	cases := []struct {
		name   string
		plant  func(p string) error
		opts   ownfile.Options
		want   string // in the error
		asRoot bool
	}{
		{name: "fifo", plant: func(p string) error { return syscall.Mkfifo(p, 0o600) }, want: "is a FIFO"},
		{name: "dev-zero link", plant: func(p string) error { return os.Symlink("/dev/zero", p) }, opts: ownfile.Options{FollowLinks: true}, want: "character device"},
		{name: "link not followed", plant: func(p string) error { return os.Symlink(good, p) }, want: "symbolic link"},
		{name: "directory", plant: func(p string) error { return os.Mkdir(p, 0o700) }, want: "is a directory"},
		{name: "world-writable", plant: func(p string) error { return writeMode(p, 0o666) }, opts: ownfile.Options{OthersMayRead: true}, want: "writable by other users (mode 0666)"},
		{name: "group-writable", plant: func(p string) error { return writeMode(p, 0o620) }, want: "writable by other users (mode 0620)"},
		{name: "readable secret", plant: func(p string) error { return writeMode(p, 0o644) }, want: "readable by other users (mode 0644)"},
		{name: "too large", plant: func(p string) error { return os.WriteFile(p, make([]byte, 5000), 0o600) }, opts: ownfile.Options{Limit: 4096}, want: "over the 4096"},
		{name: "another user's", plant: func(p string) error {
			if err := writeMode(p, 0o600); err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		}, want: "is owned by user nobody (uid 65534)", asRoot: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.asRoot && os.Getuid() != 0 {
				if os.Getenv("CI") != "" {
					t.Fatal("needs root to chown")
				}
				t.Skip("needs root to chown")
			}
			p := filepath.Join(t.TempDir(), "f")
			if err := c.plant(p); err != nil {
				t.Fatal(err)
			}
			c.opts.What = "the test file"
			_, err := ownfile.Read(p, c.opts)
			var unsafe *ownfile.UnsafeError
			if !errors.As(err, &unsafe) || unsafe.Kind() != "unsafe_file" {
				t.Fatalf("Read: %v, want an unsafe_file error", err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "the test file") {
				t.Errorf("the error %q does not say %q and name the file", err, c.want)
			}
		})
	}
	if data, err := ownfile.Read(good, ownfile.Options{Limit: 10}); err != nil || string(data) != "{}" {
		t.Errorf("a good file: %q, %v", data, err)
	}
	if _, err := ownfile.Read(filepath.Join(dir, "none"), ownfile.Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want ErrNotExist", err)
	}
}

func writeMode(p string, mode os.FileMode) error {
	if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}

func TestDirTightensOrRefuses(t *testing.T) {
	base := t.TempDir()
	loose := filepath.Join(base, "loose")
	os.Mkdir(loose, 0o777)
	os.Chmod(loose, 0o777)
	if err := ownfile.Dir(loose, "the test directory"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(loose); fi.Mode().Perm() != 0o700 {
		t.Errorf("a loose directory of the person's is %04o, want tightened to 0700", fi.Mode().Perm())
	}
	fresh := filepath.Join(base, "a", "b")
	if err := ownfile.Dir(fresh, ""); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o700 {
		t.Errorf("a made directory is %04o, want 0700", fi.Mode().Perm())
	}
	link := filepath.Join(base, "link")
	os.Symlink(loose, link)
	if err := ownfile.Dir(link, ""); err == nil {
		t.Error("a symlink in place of the directory was taken")
	}
	if os.Getuid() == 0 {
		theirs := filepath.Join(base, "theirs")
		os.Mkdir(theirs, 0o700)
		os.Chown(theirs, 65534, 65534)
		err := ownfile.Dir(theirs, "the test directory")
		if err == nil || !strings.Contains(err.Error(), "owned by user nobody") {
			t.Errorf("another user's directory: %v", err)
		}
	}
	// Write and Create make 0600 files.
	p := filepath.Join(base, "w", "x.json")
	if err := ownfile.Write(p, []byte("1"), ""); err != nil {
		t.Fatal(err)
	}
	if err := ownfile.Create(p, []byte("2"), ""); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over a file: %v", err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("written %04o", fi.Mode().Perm())
	}
}
