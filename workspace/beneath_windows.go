package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/windows"
)

// Containment on Windows: each root is an os.Root, and every call names a
// path relative to it (beneath.go says why). os.Root opens one component
// at a time beneath the root's directory handle, follows symlinks and
// junctions itself, and refuses one that leads out, any absolute one, and
// device names.

// rootHandle is a root held open as an os.Root.
type rootHandle = *os.Root

// errEscapes is os.Root's error for a path that would leave the root. It
// is not exported, so the first root opened is asked for it (a Stat of
// ".."); until then, and if that fails, an escape answers as the
// *os.PathError it is: refused all the same, only named less well.
var (
	errEscapes     error
	errEscapesOnce sync.Once
)

// openRootDir holds a root open for the calls that follow.
func openRootDir(dir string) (rootHandle, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	errEscapesOnce.Do(func() {
		var pe *fs.PathError
		if _, err := root.Stat(".."); errors.As(err, &pe) {
			errEscapes = pe.Err
		}
	})
	return root, nil
}

// pathEqual compares names as NTFS looks them up: without regard to case.
func pathEqual(a, b string) bool { return strings.EqualFold(a, b) }

// linkTarget reads p if fi says it is a link Windows follows: a symlink,
// or a junction (a mount point, which Go reports as irregular). Other
// irregular entries (cloud-file placeholders, for one) cannot be read as
// links and are plain files.
func linkTarget(p string, fi fs.FileInfo) (target string, isLink bool, err error) {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err = os.Readlink(p)
		return target, true, err
	case fi.Mode()&fs.ModeIrregular != 0:
		if target, err := os.Readlink(p); err == nil {
			return target, true, nil
		}
	}
	return "", false, nil
}

// canonicalName is the existing path p with its last name spelled as the
// directory holds it: its case, and its long form for an 8.3 short name,
// as filepath.EvalSymlinks spells them. Windows finds "README.MD" as
// README.md, but the roots, the path locks and the overlay compare paths
// as strings. A p that cannot be looked up stays as it is.
func canonicalName(p string) string {
	name, err := syscall.UTF16PtrFromString(p)
	if err != nil {
		return p
	}
	var fd syscall.Win32finddata
	h, err := syscall.FindFirstFile(name, &fd)
	if err != nil {
		return p
	}
	syscall.FindClose(h)
	return filepath.Join(filepath.Dir(p), syscall.UTF16ToString(fd.FileName[:]))
}

// in returns the root holding the resolved path p and p relative to it.
func (r *Roots) in(p string) (*os.Root, string, error) {
	i, rel, err := r.locate(p)
	if err != nil {
		return nil, "", err
	}
	return r.handles[i], rel, nil
}

// beneathError turns an error from a call on an os.Root into the error
// callers branch on, as the Unix side gives it: an escape is
// *OutsideRootsError (a symlink or junction swapped in after Resolve, most
// likely), anything else an *os.PathError naming the full path p, its
// Windows error translated (posixErrno).
func (r *Roots) beneathError(op, p string, err error) error {
	err = bareError(err)
	if escaped(err) {
		return &OutsideRootsError{Path: p, Roots: r.List(), Swapped: true}
	}
	return &os.PathError{Op: op, Path: p, Err: posixErrno(err)}
}

// escaped reports whether err is os.Root's refusal of a path that leads out.
func escaped(err error) bool { return errEscapes != nil && errors.Is(err, errEscapes) }

// bareError is the cause inside an *os.PathError or *os.LinkError, which
// name the path relative to its os.Root.
func bareError(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

// posixErrno translates the Windows errors this package and faults.go
// branch on into the errnos the Unix side gets for the same fault, so both
// answer the same typed errors and kinds. The rest stay as they are.
func posixErrno(err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return err
	}
	switch errno {
	case windows.ERROR_DIR_NOT_EMPTY:
		return syscall.ENOTEMPTY
	case windows.ERROR_ACCESS_DENIED:
		return syscall.EACCES
	case windows.ERROR_DISK_FULL, windows.ERROR_HANDLE_DISK_FULL:
		return syscall.ENOSPC
	case windows.ERROR_DISK_QUOTA_EXCEEDED:
		return syscall.EDQUOT
	case windows.ERROR_WRITE_PROTECT:
		return syscall.EROFS
	case windows.ERROR_FILENAME_EXCED_RANGE:
		return syscall.ENAMETOOLONG
	case windows.ERROR_NOT_SAME_DEVICE:
		return syscall.EXDEV
	case windows.ERROR_DIRECTORY:
		return syscall.ENOTDIR
	}
	return err
}

// openRead opens the resolved path p beneath its root for reading. A
// symlink at the end is followed while it stays inside.
func (r *Roots) openRead(p string) (*os.File, error) {
	root, rel, err := r.in(p)
	if err != nil {
		return nil, err
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, r.beneathError("open", p, err)
	}
	return f, nil
}

// openDir opens the directory p beneath its root, for reading its entries.
func (r *Roots) openDir(p string) (*os.File, error) { return r.openRead(p) }

// stat is os.Stat beneath the root: a symlink at the end is followed, but
// only while it stays inside.
func (r *Roots) stat(p string) (fs.FileInfo, error) {
	root, rel, err := r.in(p)
	if err != nil {
		return nil, err
	}
	fi, err := root.Stat(rel)
	if err != nil {
		return nil, r.beneathError("stat", p, err)
	}
	return fi, nil
}

// lstat is os.Lstat beneath the root.
func (r *Roots) lstat(p string) (fs.FileInfo, error) {
	if r.isRoot(p) {
		return r.stat(p)
	}
	root, rel, err := r.in(p)
	if err != nil {
		return nil, err
	}
	fi, err := root.Lstat(rel)
	if err != nil {
		return nil, r.beneathError("lstat", p, err)
	}
	return fi, nil
}

// changeable is in for a call that acts on p's name (create, delete,
// rename): never on a root itself.
func (r *Roots) changeable(p string) (*os.Root, string, error) {
	if _, _, err := r.parentOf(p); err != nil {
		return nil, "", err
	}
	return r.in(p)
}

// mkdir is os.Mkdir beneath the root.
func (r *Roots) mkdir(p string, mode uint32) error {
	root, rel, err := r.changeable(p)
	if err != nil {
		return err
	}
	if err := root.Mkdir(rel, fs.FileMode(mode)); err != nil {
		return r.beneathError("mkdir", p, err)
	}
	return nil
}

// remove is os.Remove beneath the root: a symlink or junction is removed,
// never its target.
func (r *Roots) remove(p string) error {
	root, rel, err := r.changeable(p)
	if err != nil {
		return err
	}
	if err := root.Remove(rel); err != nil {
		return r.beneathError("remove", p, err)
	}
	return nil
}

// removeAll is os.RemoveAll beneath the root: links met on the way are
// removed, never followed.
func (r *Roots) removeAll(p string) error {
	root, rel, err := r.changeable(p)
	if err != nil {
		return err
	}
	if err := root.RemoveAll(rel); err != nil {
		return r.beneathError("remove", p, err)
	}
	return nil
}

// rename is os.Rename beneath the roots. An os.Root renames within itself,
// so both names are taken in the innermost root holding both; two paths in
// unrelated roots answer EXDEV, as two file systems would on Unix (copy,
// then delete).
func (r *Roots) rename(src, dst string) error {
	if _, _, err := r.parentOf(src); err != nil {
		return err
	}
	if _, _, err := r.parentOf(dst); err != nil {
		return err
	}
	best := -1
	for i, d := range r.dirs {
		if within(src, d) && within(dst, d) && (best < 0 || len(d) > len(r.dirs[best])) {
			best = i
		}
	}
	if best < 0 {
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: syscall.EXDEV}
	}
	if err := r.handles[best].Rename(relTo(r.dirs[best], src), relTo(r.dirs[best], dst)); err != nil {
		if err = bareError(err); escaped(err) {
			return &OutsideRootsError{Path: src, Roots: r.List(), Swapped: true}
		}
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: posixErrno(err)}
	}
	return nil
}

// listedEntry is what the directory listing records of d: Windows returns
// each entry's size and times with its name, for the entry itself (a link
// is not followed), so nothing is looked up again by path.
func listedEntry(d fs.DirEntry) dirEntry {
	e := dirEntry{name: d.Name(), typ: d.Type()}
	if fi, err := d.Info(); err == nil {
		e.size, e.mtime = fi.Size(), fi.ModTime()
	}
	return e
}

// statEntries has nothing left to do: listedEntry took size and time from
// the listing.
func statEntries(*os.File, []dirEntry) {}

// writeDir is the directory of a file being replaced (writeFileAtomic),
// opened as an os.Root beneath its root: the temporary file is created,
// renamed and removed by name in it.
type writeDir struct{ root *os.Root }

// openWriteDir opens the directory holding the resolved path p and
// returns p's name in it.
func (r *Roots) openWriteDir(p string) (writeDir, string, error) {
	dir, base, err := r.parentOf(p)
	if err != nil {
		return writeDir{}, "", err
	}
	root, rel, err := r.in(dir)
	if err != nil {
		return writeDir{}, "", err
	}
	sub, err := root.OpenRoot(rel)
	if err != nil {
		return writeDir{}, "", r.beneathError("open", dir, err)
	}
	return writeDir{sub}, base, nil
}

// create makes name, which must not exist (nor be a link), for writing.
func (d writeDir) create(name, _ string) (*os.File, error) {
	f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, posixErrno(bareError(err))
	}
	return f, nil
}

func (d writeDir) remove(name string) error { return posixErrno(bareError(d.root.Remove(name))) }

// rename replaces to with from; Windows replaces an existing file (POSIX
// semantics where the file system has them), unless another process holds
// to open without sharing deletion.
func (d writeDir) rename(from, to string) error {
	return posixErrno(bareError(d.root.Rename(from, to)))
}

// sync does nothing: Windows cannot flush a directory (FlushFileBuffers
// takes files and volumes), so the rename is as durable as NTFS's own
// metadata journal makes it.
func (d writeDir) sync() error { return nil }

func (d writeDir) Close() error { return d.root.Close() }
