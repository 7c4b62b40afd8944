package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Reading only regular files.
//
// Whatever the bridge reads, for the agent (a file's text) or for itself
// (a .gitignore), is opened beneath its root (beneath.go) without blocking
// (O_NONBLOCK: opening a FIFO with no writer returns at once instead of
// waiting for one) and checked through the open fd to be a regular file
// before a byte is read. A FIFO, a socket or a device (/dev/urandom, which
// never ends; /dev/zero) is refused with *SpecialFileError, and what is
// read is capped, so neither a hang nor unbounded memory can be planted in
// the workspace by a shell command (`mkfifo .gitignore`,
// `ln -s /dev/urandom .gitignore`: an absolute link leads out of the root
// and is refused before anything is opened).

// openRegular opens the resolved path p beneath its root for reading and
// returns it with its fstat, if it is a regular file. A directory is
// *IsDirectoryError and anything else that is not a regular file
// *SpecialFileError, both naming p.
func (r *Roots) openRegular(p string) (*os.File, fs.FileInfo, error) {
	file, err := r.openRead(p)
	if err != nil {
		// A socket cannot be opened (ENXIO), nor a device without its
		// driver: name what is there rather than the errno.
		if fi, serr := r.stat(p); serr == nil && !fi.IsDir() && !fi.Mode().IsRegular() {
			return nil, nil, &SpecialFileError{Path: p, Type: typeOf(fi.Mode())}
		}
		return nil, nil, err
	}
	fi, err := file.Stat()
	switch {
	case err != nil:
	case fi.IsDir():
		err = &IsDirectoryError{Path: p}
	case !fi.Mode().IsRegular():
		err = &SpecialFileError{Path: p, Type: typeOf(fi.Mode())}
	default:
		return file, fi, nil
	}
	file.Close()
	return nil, nil, err
}

// errOverCap is readFile's refusal of a file larger than its cap.
type errOverCap struct{ size, limit int64 }

func (e *errOverCap) Error() string {
	return fmt.Sprintf("%d bytes or more, over the cap of %d", e.size, e.limit)
}

// readFile reads the regular file p beneath its root, refusing one of more
// than limit bytes with *errOverCap (its size as stat gave it, or as far as
// it grew while read).
func (r *Roots) readFile(p string, limit int64) ([]byte, error) {
	f, fi, err := r.openRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &errOverCap{size: fi.Size(), limit: limit}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &errOverCap{size: int64(len(data)), limit: limit}
	}
	return data, nil
}

// regularError is pathError for openRegular's errors: its typed refusals
// take the caller's spelling of the path.
func regularError(err error, display string) error {
	var nr *SpecialFileError
	var dir *IsDirectoryError
	switch {
	case errors.As(err, &nr):
		return &SpecialFileError{Path: display, Type: nr.Type}
	case errors.As(err, &dir):
		return &IsDirectoryError{Path: display}
	}
	return pathError(err, display)
}
