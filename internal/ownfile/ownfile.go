// Package ownfile reads and writes the bridge's own files, and the files
// of the person's other programs it reads for itself (its config file,
// choices.json, the endpoint records, a started server's secret key,
// Agent Canvas's key file, the OpenHands CLI's settings), as the files
// they should be, and nothing else:
//
//   - opened without blocking (a FIFO with no writer does not hold the
//     bridge) and checked through the open descriptor to be a regular
//     file before a byte is read (a link to /dev/zero is refused, not
//     read for ever);
//   - read up to a cap;
//   - owned by the person (or root) and writable by no one else: a file
//     another user wrote, or could have, is refused in words, since it
//     could point the bridge at their server or hand it their token.
//
// The directories the bridge keeps these files in are its own: made 0700,
// tightened to 0700 when the bridge finds one of its own looser, refused
// when another user owns them.
//
// Out of scope, deliberately: a file the person's own processes wrote.
// The agent runs commands as the person, and what it plants in the
// person's home is the person's; it is checked for shape (regular, small,
// the bridge's JSON), not for who wrote it.
package ownfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Options say how a file is read.
type Options struct {
	// What names the file for the person: "the config file".
	What string
	// Limit caps its size in bytes.
	Limit int64
	// FollowLinks takes a symlink to the file (a config file kept with
	// the person's dotfiles); the bridge's own files never are links, and
	// one found is refused.
	FollowLinks bool
	// OthersMayRead allows group and world read bits (a settings file
	// written with the default umask); write bits are never allowed.
	// Without it, a file readable by others is refused too: it holds a
	// secret.
	OthersMayRead bool
}

// UnsafeError is a file refused: what it is, why, and what to do.
type UnsafeError struct {
	Path, What, Why, Fix string
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("%s %s %s, so the bridge does not use it; %s", e.What, e.Path, e.Why, e.Fix)
}

// Kind is "unsafe_file".
func (e *UnsafeError) Kind() string { return "unsafe_file" }

// Read reads the file at path as o says. A file that is not there is an
// error satisfying errors.Is(err, fs.ErrNotExist).
func Read(path string, o Options) ([]byte, error) {
	if o.What == "" {
		o.What = "the file"
	}
	f, err := openNonBlocking(path, o.FollowLinks)
	if err != nil {
		if isLoop(err) {
			return nil, &UnsafeError{Path: path, What: o.What, Why: "is a symbolic link", Fix: "it is read only as a file in its own right, never through a link: put the file itself in the link's place"}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		// A socket cannot be opened at all (ENXIO): name what is there.
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
			return nil, notRegular(path, o.What, fi.Mode())
		}
		return nil, fmt.Errorf("%s %s cannot be read: %w", o.What, path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s %s cannot be read: %w", o.What, path, err)
	}
	if fi.IsDir() {
		return nil, &UnsafeError{Path: path, What: o.What, Why: "is a directory", Fix: "remove it, or give the file's path"}
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, o.What, fi.Mode())
	}
	if err := checkOwner(path, o, fi); err != nil {
		return nil, err
	}
	if o.Limit > 0 && fi.Size() > o.Limit {
		return nil, tooLarge(path, o, fi.Size())
	}
	r := io.Reader(f)
	if o.Limit > 0 {
		r = io.LimitReader(f, o.Limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s %s cannot be read: %w", o.What, path, err)
	}
	if o.Limit > 0 && int64(len(data)) > o.Limit {
		return nil, tooLarge(path, o, int64(len(data)))
	}
	return data, nil
}

func tooLarge(path string, o Options, size int64) error {
	return &UnsafeError{Path: path, What: o.What, Why: fmt.Sprintf("is %d bytes or more, over the %d such a file holds at most", size, o.Limit),
		Fix: "it is not the file the bridge expects: remove it, or replace it with the right one"}
}

func notRegular(path, what string, m fs.FileMode) error {
	t := "not a regular file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		t = "a FIFO (named pipe), not a regular file"
	case m&fs.ModeSocket != 0:
		t = "a socket, not a regular file"
	case m&fs.ModeCharDevice != 0:
		t = "a character device, not a regular file"
	case m&fs.ModeDevice != 0:
		t = "a block device, not a regular file"
	}
	return &UnsafeError{Path: path, What: what, Why: "is " + t, Fix: "remove it, and write the file again as a regular file"}
}

// Dir makes path, and the missing directories above it, mode 0700, or
// checks the one there: a directory of the person's looser than 0700 is
// tightened to 0700; one of another user's, or a symlink, is refused.
func Dir(path, what string) error {
	if what == "" {
		what = "the directory"
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(path, 0o700); err != nil {
			return fmt.Errorf("%s %s cannot be made: %w", what, path, err)
		}
		fi, err = os.Lstat(path)
	}
	if err != nil {
		return fmt.Errorf("%s %s cannot be read: %w", what, path, err)
	}
	if !fi.IsDir() {
		return &UnsafeError{Path: path, What: what, Why: "is not a directory (" + fi.Mode().Type().String() + ")", Fix: "remove it; the bridge makes the directory itself"}
	}
	if err := checkDirOwner(path, what, fi); err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o700); err != nil {
			return &UnsafeError{Path: path, What: what, Why: fmt.Sprintf("is open to other users (mode %04o) and cannot be tightened (%v)", fi.Mode().Perm(), err),
				Fix: "`chmod 700 " + path + "`"}
		}
	}
	return nil
}

// Write replaces path with data, mode 0600, atomically (a temporary file
// in its directory, renamed over it), in a directory Dir accepts.
func Write(path string, data []byte, dirWhat string) error {
	dir := filepath.Dir(path)
	if err := Dir(dir, dirWhat); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Create makes path with data, mode 0600, failing with fs.ErrExist when it
// is there, in a directory Dir accepts.
func Create(path string, data []byte, dirWhat string) error {
	if err := Dir(filepath.Dir(path), dirWhat); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}
