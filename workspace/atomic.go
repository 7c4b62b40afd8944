package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// testHookBeforeRename, when set by a test, runs once the temporary file
// holds the new content, just before it is renamed over the target.
var testHookBeforeRename func(tmp string)

// writeFileAtomic writes data to a temporary sibling of the resolved path
// target and renames it over target, so readers (and a crash) see the old or
// the new content, never a mix. keepMode applies mode; otherwise the file is
// created 0666 minus the umask, like any new file.
//
// Every step is taken in the target's directory held open beneath its root
// (writeDir, in beneath_unix.go and beneath_windows.go): the temporary file
// is created there by name (O_EXCL, no symlink followed) and renamed there,
// so a symlink swapped in on the way cannot send the bytes outside the
// roots. The temporary name is journaled (pendingWrites) while
// it exists, so a process killed mid-write has it removed at the next start.
// On failure the temporary file is removed and target is untouched.
//
// verify, when set, runs on its own goroutine while the temporary file is
// written and fsynced (the disk's wait), and the rename waits for it: an
// error from it leaves the target as it was and is returned as it is.
func (r *Roots) writeFileAtomic(target string, data []byte, mode fs.FileMode, keepMode bool, verify func() error) (err error) {
	dir, base, err := r.openWriteDir(target)
	if err != nil {
		return err
	}
	defer dir.Close()
	short := base
	if len(short) > 180 {
		short = short[:180] // keep the temp name under NAME_MAX
	}
	var tmpName, tmpPath string
	var tmp *os.File
	for range 100 {
		var rnd [8]byte
		rand.Read(rnd[:])
		tmpName = "." + short + tmpMarker + hex.EncodeToString(rnd[:])
		tmpPath = filepath.Join(filepath.Dir(target), tmpName)
		done := pendingWrites.begin(tmpPath)
		tmp, err = dir.create(tmpName, tmpPath)
		if err == nil {
			defer done()
			break
		}
		done()
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return &os.PathError{Op: "create", Path: tmpPath, Err: err}
	}
	var verified chan error
	if verify != nil {
		verified = make(chan error, 1)
		go func() { verified <- verify() }()
		defer func() {
			if verified != nil {
				<-verified // nothing outlives the call
			}
		}()
	}
	defer func() {
		if err != nil {
			tmp.Close()
			dir.remove(tmpName)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if keepMode {
		if err = tmp.Chmod(mode); err != nil {
			return err
		}
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if testHookBeforeRename != nil {
		testHookBeforeRename(tmpPath)
	}
	if verified != nil {
		err, verified = <-verified, nil
		if err != nil {
			return err
		}
	}
	if err = dir.rename(tmpName, base); err != nil {
		return &os.LinkError{Op: "rename", Old: tmpPath, New: target, Err: err}
	}
	// The rename is done: from here on the new content is in place, so a
	// failure to make it durable must not remove anything.
	if serr := dir.sync(); serr != nil {
		return &durabilityError{err: serr}
	}
	return nil
}

// durabilityError is a write whose new content is in place but whose
// directory could not be fsynced: a power cut could still bring the old
// content back.
type durabilityError struct{ err error }

func (e *durabilityError) Error() string {
	return "the new content is in place but could not be made durable: " + e.err.Error()
}

func (e *durabilityError) Unwrap() error { return e.err }

// testHookWrite, when set by a test, runs at the start of WriteTextFile,
// with the path's lock held: after the editor has read the file and before
// anything is written.
var testHookWrite func(p string)
