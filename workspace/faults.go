package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// IOError reports a system call on a path that failed for a reason outside
// the request: the disk is full, the file system is read-only, permissions
// forbid it, a name is too long. The message names the path, the cause as
// the system gives it, whether the old content survived, and what to do.
type IOError struct {
	Op   string // what was being done: "write", "read", "create directory", "delete", "move", "resolve"
	Path string // the path as the caller gave it
	Err  error  // the underlying error, usually wrapping a syscall.Errno
	// Unchanged reports that the file's old content is intact: writes
	// replace files atomically, so a failed write leaves the old bytes.
	Unchanged bool
}

func (e *IOError) Error() string {
	msg := fmt.Sprintf("cannot %s %s: %s", e.Op, e.Path, e.cause())
	if e.Unchanged {
		msg += " (the old content is unchanged)"
	}
	if fix := ioFixes[e.Kind()]; fix != "" {
		msg += "; " + fix
	}
	return msg
}

func (e *IOError) Unwrap() error { return e.Err }

// cause is the errno's text ("no space left on device") when there is
// one, else the whole underlying message.
func (e *IOError) cause() string {
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		return errno.Error()
	}
	return e.Err.Error()
}

// Kind returns "no_space", "read_only_file_system", "access_denied",
// "name_too_long", "symlink_loop", "cross_device" or, for anything else,
// "io_error".
func (e *IOError) Kind() string {
	switch {
	case errors.Is(e.Err, syscall.ENOSPC), errors.Is(e.Err, syscall.EDQUOT):
		return "no_space"
	case errors.Is(e.Err, syscall.EROFS):
		return "read_only_file_system"
	case errors.Is(e.Err, syscall.EACCES), errors.Is(e.Err, syscall.EPERM):
		return "access_denied"
	case errors.Is(e.Err, syscall.ENAMETOOLONG):
		return "name_too_long"
	case errors.Is(e.Err, syscall.ELOOP):
		return "symlink_loop"
	case errors.Is(e.Err, syscall.EXDEV):
		return "cross_device"
	}
	return "io_error"
}

// Data returns the path and the operation, for error.data.
func (e *IOError) Data() map[string]any {
	return map[string]any{"path": e.Path, "op": e.Op, "unchanged": e.Unchanged}
}

var ioFixes = map[string]string{
	"no_space":              "free space and retry",
	"read_only_file_system": "the file system is mounted read-only; remount it read-write or work on a copy elsewhere",
	"access_denied":         "the bridge's user may not do this; check the permissions and attributes of the path and its directory (ls -ld, lsattr)",
	"name_too_long":         "use names of at most 255 bytes and paths of at most 4095",
	"symlink_loop":          "a symlink on the way points back into itself; fix or remove it",
	"cross_device":          "the destination is on another file system; copy the file and delete the original instead",
	"io_error":              "check the disk and retry",
}

// faultError turns a failed system call on path into an *IOError, leaving
// errors that already say what they are (a typed error with a Kind, a
// cancelled context) as they are.
func faultError(op, path string, err error, unchanged bool) error {
	var k interface{ Kind() string }
	switch {
	case errors.As(err, &k):
		return err
	case errors.Is(err, syscall.EISDIR):
		return &IsDirectoryError{Path: path}
	case errors.Is(err, fs.ErrNotExist):
		return &NotFoundError{Path: path, Hint: "it was removed meanwhile"}
	}
	return &IOError{Op: op, Path: path, Err: err, Unchanged: unchanged}
}

// writeFault is faultError for an atomic write: the old content is intact
// unless the rename went through and only its fsync failed.
func writeFault(path string, err error) error {
	var d *durabilityError
	return faultError("write", path, err, !errors.As(err, &d))
}
