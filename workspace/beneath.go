package workspace

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/sys/unix"
)

// Containment without a race window.
//
// Roots.Resolve checks a path against the roots by name, but a name is only
// a promise: between that check and the system call, another process (or
// the agent's own shell command) can swap a directory on the way for a
// symlink leading out of the workspace, and a path-based open would follow
// it. So the FS never hands a path string to the kernel. Each root is held
// open as a directory fd (Roots.fds), and every open, create, rename and
// delete resolves the path relative to that fd with the kernel's guarantee
// that resolution stays beneath it: openat2 with RESOLVE_BENEATH on Linux
// 5.6+, or walkBeneath, which opens one component at a time with O_NOFOLLOW
// and follows symlinks itself, elsewhere. Creates, renames and deletes act on
// a single name inside a directory fd obtained that way (mkdirat, renameat,
// unlinkat), so the last step cannot be redirected either. A path that would
// leave the root answers *OutsideRootsError, as Resolve does.

// openRootDir holds a root open for the *at calls that follow.
func openRootDir(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, dirFlags|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// locate returns the innermost root holding the resolved path p (its fd and
// path) and p relative to it ("." for the root itself).
func (r *Roots) locate(p string) (fd int, root, rel string, err error) {
	best := -1
	for i, d := range r.dirs {
		if (p == d || d == "/" || strings.HasPrefix(p, d+string(filepath.Separator))) && (best < 0 || len(d) > len(r.dirs[best])) {
			best = i
		}
	}
	if best < 0 {
		return -1, "", "", &OutsideRootsError{Path: p, Roots: r.List()}
	}
	root = r.dirs[best]
	rel, err = filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return -1, "", "", &OutsideRootsError{Path: p, Roots: r.List()}
	}
	return int(r.fds[best].Fd()), root, rel, nil
}

// open opens the resolved path p beneath its root with flags (O_CLOEXEC is
// added) and returns the raw fd.
func (r *Roots) open(p string, flags int, mode uint32) (int, error) {
	rootFD, root, rel, err := r.locate(p)
	if err != nil {
		return -1, err
	}
	fd, err := openBeneath(rootFD, root, rel, flags|unix.O_CLOEXEC, mode)
	runtime.KeepAlive(r) // r.fds holds rootFD open
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

// parentDir opens the directory holding the resolved path p, for a *at call
// on base. sync asks for an fd that can be fsynced (O_PATH cannot).
func (r *Roots) parentDir(p string, sync bool) (dir *os.File, base string, err error) {
	flags := dirFlags | unix.O_DIRECTORY
	if sync {
		flags = unix.O_RDONLY | unix.O_DIRECTORY
	}
	base = filepath.Base(p)
	if r.isRoot(p) || base == "/" {
		// A root's parent is outside the roots; no caller may act on it.
		return nil, "", &RootOperationError{Path: p, Op: "change"}
	}
	dir, err = r.openFile(filepath.Dir(p), flags, 0)
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

// readFile is os.ReadFile beneath the root. O_NONBLOCK keeps a FIFO from
// blocking the open; callers only read files they have stat'ed as regular.
func (r *Roots) readFile(p string) ([]byte, error) {
	f, err := r.openFile(p, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// versionOfFile is Version of the file's bytes, read beneath the root in
// pieces and hashed as they come, without holding the whole file.
func (r *Roots) versionOfFile(p string) (string, error) {
	f, err := r.openFile(p, unix.O_RDONLY|unix.O_NONBLOCK, 0)
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

// mkdirAll is os.MkdirAll beneath the root: each missing directory is made
// with mkdirat in its parent, which was itself opened beneath the root.
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

// dirEntry is one entry of a directory listed beneath a root.
type dirEntry struct {
	name  string
	typ   fs.FileMode // the type bits the directory itself records
	size  int64       // lstat's, once statEntries has run
	mtime time.Time
}

// readDir reads the directory p beneath its root: its entries sorted by
// name, and the open directory, for statEntries.
func (r *Roots) readDir(p string) (*os.File, []dirEntry, error) {
	f, err := r.openFile(p, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, nil, err
	}
	ents, err := f.ReadDir(-1)
	out := make([]dirEntry, len(ents))
	for i, d := range ents {
		out[i] = dirEntry{name: d.Name(), typ: d.Type()}
	}
	slices.SortFunc(out, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	return f, out, err
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
