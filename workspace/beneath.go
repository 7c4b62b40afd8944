package workspace

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cespare/xxhash/v2"
)

// Containment without a race window.
//
// Roots.Resolve checks a path against the roots by name, but a name is only
// a promise: between that check and the system call, another process (or
// the agent's own shell command) can swap a directory on the way for a
// symlink leading out of the workspace, and a path-based open would follow
// it. So the FS never hands a path string to the kernel. Each root is held
// open (Roots.handles), and every open, create, rename and delete resolves
// the path relative to it with a guarantee that resolution stays beneath it:
//
//   - Unix (beneath_unix.go): the root is a directory fd; openat2 with
//     RESOLVE_BENEATH on Linux 5.6+ (beneath_linux.go), or walkBeneath,
//     which opens one component at a time with O_NOFOLLOW and follows
//     symlinks itself, elsewhere (beneath_other.go, beneath_walk.go).
//     Creates, renames and deletes act on a single name inside a directory
//     fd obtained that way (mkdirat, renameat, unlinkat), so the last step
//     cannot be redirected either.
//   - Windows (beneath_windows.go): the root is an os.Root, which opens
//     one component at a time beneath the root's directory handle, follows
//     symlinks and junctions itself, and refuses any that leads out (and
//     any absolute one), as well as device names such as NUL.
//
// A path that would leave the root answers *OutsideRootsError, as Resolve
// does. This file holds what both sides share.

// within reports whether the clean absolute path p is d or lies beneath it.
// A root that ends in a separator ("/", `C:\`) holds its whole volume.
// Names compare as the platform's file system does (pathEqual).
func within(p, d string) bool {
	if len(p) < len(d) || !pathEqual(p[:len(d)], d) {
		return false
	}
	return len(p) == len(d) || os.IsPathSeparator(d[len(d)-1]) || os.IsPathSeparator(p[len(d)])
}

// locate returns the innermost root holding the resolved path p (its index
// in r.dirs) and p relative to it ("." for the root itself). p is clean,
// so rel has no ".." in it.
func (r *Roots) locate(p string) (i int, rel string, err error) {
	best := -1
	for i, d := range r.dirs {
		if within(p, d) && (best < 0 || len(d) > len(r.dirs[best])) {
			best = i
		}
	}
	if best < 0 {
		return -1, "", &OutsideRootsError{Path: p, Roots: r.List()}
	}
	return best, relTo(r.dirs[best], p), nil
}

// relTo is p relative to d, a root within which p lies ("." for d itself).
func relTo(d, p string) string {
	rel := p[len(d):]
	if rel != "" && os.IsPathSeparator(rel[0]) {
		rel = rel[1:]
	}
	if rel == "" {
		rel = "."
	}
	return rel
}

// parentOf splits the resolved path p into the directory holding it and its
// name, for a call that acts on the name in the directory. A root's parent
// is outside the roots: no caller may act on a root itself.
func (r *Roots) parentOf(p string) (dir, base string, err error) {
	if r.isRoot(p) || filepath.Dir(p) == p {
		return "", "", &RootOperationError{Path: p, Op: "change"}
	}
	return filepath.Dir(p), filepath.Base(p), nil
}

// versionOfFile is Version of the file's bytes, read beneath the root in
// pieces and hashed as they come, without holding the whole file. Only a
// regular file is read (openRegular).
func (r *Roots) versionOfFile(p string) (string, error) {
	f, _, err := r.openRegular(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := xxhash.New()
	buf := make([]byte, 64<<10)
	if _, err := io.CopyBuffer(h, readerOnly{f}, buf); err != nil {
		return "", err
	}
	return formatVersion(h.Sum64()), nil
}

// readerOnly hides *os.File's WriterTo, so io.CopyBuffer uses the buffer.
type readerOnly struct{ io.Reader }

// mkdirAll is os.MkdirAll beneath the root: each missing directory is made
// in its parent, which was itself opened beneath the root.
func (r *Roots) mkdirAll(p string, mode uint32) error {
	if fi, err := r.stat(p); err == nil {
		if !fi.IsDir() {
			return &os.PathError{Op: "mkdir", Path: p, Err: syscall.ENOTDIR}
		}
		return nil
	}
	if r.isRoot(p) {
		return nil
	}
	if err := r.mkdirAll(filepath.Dir(p), mode); err != nil {
		return err
	}
	if err := r.mkdir(p, mode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := r.stat(p)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &os.PathError{Op: "mkdir", Path: p, Err: syscall.ENOTDIR}
	}
	return nil
}

// dirEntry is one entry of a directory listed beneath a root.
type dirEntry struct {
	name  string
	typ   fs.FileMode // the type bits the directory itself records
	size  int64       // lstat's, once statEntries has run
	mtime time.Time
}
