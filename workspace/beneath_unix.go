//go:build unix

package workspace

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Containment on Unix: each root is a directory fd and every call resolves
// beneath it (beneath.go says why; openBeneath is in beneath_linux.go and
// beneath_other.go).

// rootHandle is a root held open as a directory fd, for the *at calls that
// follow.
type rootHandle = *os.File

// openRootDir holds a root open for the *at calls that follow.
func openRootDir(dir string) (rootHandle, error) {
	fd, err := unix.Open(dir, dirFlags|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// pathEqual compares names byte for byte, as Linux does. (macOS's default
// file system ignores case: there a path spelled in another case than its
// root's is refused as outside, never let through.)
func pathEqual(a, b string) bool { return a == b }

// linkTarget reads p if fi says it is a symlink. EINVAL from the read
// means p changed since fi was taken.
func linkTarget(p string, fi fs.FileInfo) (target string, isLink bool, err error) {
	if fi.Mode()&fs.ModeSymlink == 0 {
		return "", false, nil
	}
	target, err = os.Readlink(p)
	return target, true, err
}

// canonicalName is p: Unix names are already spelled as the directory
// holds them.
func canonicalName(p string) string { return p }

// open opens the resolved path p beneath its root with flags (O_CLOEXEC is
// added) and returns the raw fd.
func (r *Roots) open(p string, flags int, mode uint32) (int, error) {
	i, rel, err := r.locate(p)
	if err != nil {
		return -1, err
	}
	fd, err := openBeneath(int(r.handles[i].Fd()), r.dirs[i], rel, flags|unix.O_CLOEXEC, mode)
	runtime.KeepAlive(r) // r.handles holds the root's fd open
	if err != nil {
		return -1, r.beneathError("open", p, err)
	}
	return fd, nil
}

// beneathError turns an errno from a resolution beneath a root into the
// error callers branch on: EXDEV means the path led out of the root (a
// symlink swapped in after Resolve, most likely).
func (r *Roots) beneathError(op, p string, err error) error {
	if errors.Is(err, unix.EXDEV) {
		return &OutsideRootsError{Path: p, Roots: r.List(), Swapped: true}
	}
	return &os.PathError{Op: op, Path: p, Err: err}
}

// openFile opens the resolved path p beneath its root as an *os.File.
func (r *Roots) openFile(p string, flags int, mode uint32) (*os.File, error) {
	fd, err := r.open(p, flags, mode)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), p), nil
}

// openRead opens the resolved path p beneath its root for reading. A
// symlink at the end is followed while it stays inside. O_NONBLOCK keeps a
// FIFO (or a terminal) from blocking the open, and O_NOCTTY keeps a
// terminal device from becoming the bridge's controlling terminal; the
// caller checks what it opened (openRegular).
func (r *Roots) openRead(p string) (*os.File, error) {
	return r.openFile(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
}

// openDir opens the directory p beneath its root, for reading its entries.
func (r *Roots) openDir(p string) (*os.File, error) {
	return r.openFile(p, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}

// parentDir opens the directory holding the resolved path p, for a *at call
// on base. sync asks for an fd that can be fsynced (O_PATH cannot).
func (r *Roots) parentDir(p string, sync bool) (dir *os.File, base string, err error) {
	flags := dirFlags | unix.O_DIRECTORY
	if sync {
		flags = unix.O_RDONLY | unix.O_DIRECTORY
	}
	parent, base, err := r.parentOf(p)
	if err != nil {
		return nil, "", err
	}
	dir, err = r.openFile(parent, flags, 0)
	return dir, base, err
}

// stat is os.Stat beneath the root: a symlink at the end is followed, but
// only while it stays inside.
func (r *Roots) stat(p string) (fs.FileInfo, error) {
	f, err := r.openFile(p, statFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// lstat is os.Lstat beneath the root.
func (r *Roots) lstat(p string) (fs.FileInfo, error) {
	if r.isRoot(p) {
		return r.stat(p)
	}
	f, err := r.openFile(p, lstatFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// mkdir is os.Mkdir beneath the root.
func (r *Roots) mkdir(p string, mode uint32) error {
	dir, base, err := r.parentDir(p, false)
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := unix.Mkdirat(int(dir.Fd()), base, mode); err != nil {
		return &os.PathError{Op: "mkdir", Path: p, Err: err}
	}
	return nil
}

// remove is os.Remove beneath the root: the name is unlinked in its
// parent's fd, so a symlink is removed, never its target.
func (r *Roots) remove(p string) error {
	dir, base, err := r.parentDir(p, false)
	if err != nil {
		return err
	}
	defer dir.Close()
	err = unix.Unlinkat(int(dir.Fd()), base, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		if derr := unix.Unlinkat(int(dir.Fd()), base, unix.AT_REMOVEDIR); derr != unix.ENOTDIR {
			err = derr
		}
	}
	if err != nil {
		return &os.PathError{Op: "remove", Path: p, Err: err}
	}
	return nil
}

// removeAll is os.RemoveAll beneath the root.
func (r *Roots) removeAll(p string) error {
	dir, base, err := r.parentDir(p, false)
	if err != nil {
		return err
	}
	defer dir.Close()
	if err := removeAllAt(int(dir.Fd()), base); err != nil {
		return &os.PathError{Op: "remove", Path: p, Err: err}
	}
	return nil
}

// removeAllAt removes name in dir and, if it is a directory, everything
// under it, descending by fds opened with O_NOFOLLOW: a symlink met on the
// way is unlinked, never followed.
func removeAllAt(dir int, name string) error {
	err := unix.Unlinkat(dir, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return err
	}
	fd, oerr := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if oerr != nil {
		if errors.Is(oerr, unix.ENOENT) {
			return nil
		}
		return err
	}
	sub := os.NewFile(uintptr(fd), name)
	for {
		names, rerr := sub.Readdirnames(256)
		for _, n := range names {
			if err := removeAllAt(fd, n); err != nil {
				sub.Close()
				return err
			}
		}
		if rerr != nil {
			break
		}
	}
	sub.Close()
	if err := unix.Unlinkat(dir, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}

// rename is os.Rename beneath the roots: both names are taken in parent
// directories opened beneath their roots.
func (r *Roots) rename(src, dst string) error {
	sdir, sbase, err := r.parentDir(src, false)
	if err != nil {
		return err
	}
	defer sdir.Close()
	ddir, dbase, err := r.parentDir(dst, false)
	if err != nil {
		return err
	}
	defer ddir.Close()
	if err := unix.Renameat(int(sdir.Fd()), sbase, int(ddir.Fd()), dbase); err != nil {
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: err}
	}
	return nil
}

// listedEntry is what the directory itself records of d: its name and
// type. Size and time come from statEntries, for the entries kept.
func listedEntry(d fs.DirEntry) dirEntry {
	return dirEntry{name: d.Name(), typ: d.Type()}
}

// statParallelMin is the batch from which statEntries spreads the work
// over the CPUs.
const statParallelMin = 512

// statEntries fills in size and mtime of ents, entries of the open
// directory dir, as lstat gives them: fstatat on the directory's fd, one
// name each and no symlink followed, so nothing is resolved by path (as
// os.DirEntry.Info would) and nothing outside the directory is reached.
// An entry that vanished meanwhile keeps zeros. Large batches are split
// over GOMAXPROCS goroutines: the calls are independent and each costs a
// system call.
func statEntries(dir *os.File, ents []dirEntry) {
	fd := int(dir.Fd())
	stat := func(part []dirEntry) {
		var st unix.Stat_t
		for i := range part {
			if unix.Fstatat(fd, part[i].name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				part[i].size = st.Size
				part[i].mtime = time.Unix(st.Mtim.Unix())
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(ents)/statParallelMin)
	if workers <= 1 {
		stat(ents)
		runtime.KeepAlive(dir)
		return
	}
	var wg sync.WaitGroup
	chunk := (len(ents) + workers - 1) / workers
	for part := range slices.Chunk(ents, chunk) {
		wg.Go(func() { stat(part) })
	}
	wg.Wait()
	runtime.KeepAlive(dir)
}

// writeDir is the directory of a file being replaced (writeFileAtomic),
// held open beneath its root: the temporary file is created, renamed and
// removed by name in it, with the *at calls.
type writeDir struct{ f *os.File }

// openWriteDir opens the directory holding the resolved path p, as an fd
// that can be fsynced, and returns p's name in it.
func (r *Roots) openWriteDir(p string) (writeDir, string, error) {
	dir, base, err := r.parentDir(p, true)
	return writeDir{dir}, base, err
}

// create makes name, which must not exist (nor be a symlink), for writing;
// path names the file in errors.
func (d writeDir) create(name, path string) (*os.File, error) {
	fd, err := unix.Openat(int(d.f.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

func (d writeDir) remove(name string) error { return unix.Unlinkat(int(d.f.Fd()), name, 0) }

func (d writeDir) rename(from, to string) error {
	return unix.Renameat(int(d.f.Fd()), from, int(d.f.Fd()), to)
}

// sync makes a rename in the directory durable. A file system that cannot
// fsync a directory answers EINVAL; there is nothing more to do there.
func (d writeDir) sync() error {
	if err := d.f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

func (d writeDir) Close() error { return d.f.Close() }
