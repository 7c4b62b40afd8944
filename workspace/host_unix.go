//go:build unix

package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// linkCount is the file's number of hard links.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// readTarget opens p beneath its root by its name alone, following no
// symlink on the way or at the end, and reads up to limit bytes of it if it
// is a regular file: what is read is the file described, and it is the
// file at p, not one a link swapped in leads to. Each step is an openat of
// one name in the directory opened before, with O_NOFOLLOW (p is resolved
// and clean: no "..", no link left in it), so the walk cannot leave the
// root. A symlink met on the way or at p is described instead (linkAt,
// linkTo) and not followed; a name on the way that is no directory, or
// missing, leaves nothing there.
func (r *Roots) readTarget(p string, limit int64) (hostTarget, []byte, error) {
	i, rel, err := r.locate(p)
	if err != nil {
		return hostTarget{}, nil, err
	}
	defer runtime.KeepAlive(r) // r.handles holds the root's fd open
	names := splitPath(rel)
	if rel == "." || len(names) == 0 {
		t, err := r.inspectTarget(p)
		return t, nil, err
	}
	cur, err := unix.Openat(int(r.handles[i].Fd()), ".", dirFlags|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return hostTarget{}, nil, err
	}
	defer func() { unix.Close(cur) }()
	at := r.dirs[i]
	for _, name := range names[:len(names)-1] {
		at = filepath.Join(at, name)
		fd, err := unix.Openat(cur, name, dirFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		switch {
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
			// A symlink (O_PATH opens it, O_DIRECTORY refuses it) or a file.
			t, err := describeAt(cur, name, at)
			if err != nil || !t.symlnk {
				return hostTarget{}, nil, err
			}
			return t, nil, nil
		case errors.Is(err, fs.ErrNotExist):
			return hostTarget{}, nil, nil
		case err != nil:
			return hostTarget{}, nil, err
		}
		unix.Close(cur)
		cur = fd
	}
	name := names[len(names)-1]
	t, err := describeAt(cur, name, p)
	if err != nil || !t.exists() || t.symlnk || !t.fi.Mode().IsRegular() {
		return t, nil, err
	}
	fd, err := unix.Openat(cur, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		// Swapped since it was described: describe it again.
		t, derr := describeAt(cur, name, p)
		if derr != nil || !t.exists() || t.symlnk || !t.fi.Mode().IsRegular() {
			return t, nil, derr
		}
		return t, nil, err
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return hostTarget{}, nil, err
	}
	t = hostTarget{fi: fi, links: linkCount(fi)}
	if !fi.Mode().IsRegular() {
		return t, nil, nil
	}
	data, err := readAtMost(f, limit)
	return t, data, err
}

// describeAt lstats name in the directory fd dir, whose entry's path is at,
// and reads the link if it is one: nothing there is the zero hostTarget.
func describeAt(dir int, name, at string) (hostTarget, error) {
	fd, err := unix.Openat(dir, name, lstatFlags|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, unix.ENOTDIR):
		return hostTarget{}, nil
	case err != nil:
		return hostTarget{}, err
	}
	f := os.NewFile(uintptr(fd), at)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return hostTarget{}, err
	}
	t := hostTarget{fi: fi, links: linkCount(fi)}
	if fi.Mode()&fs.ModeSymlink != 0 {
		t.symlnk, t.linkAt = true, at
		buf := make([]byte, 4096)
		if n, err := unix.Readlinkat(dir, name, buf); err == nil {
			t.linkTo = string(buf[:n])
		}
	}
	return t, nil
}
