//go:build unix

package workspace

import (
	"errors"
	"io/fs"
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

// readTarget opens p beneath its root without following a final symlink
// and reads up to limit bytes of it if it is a regular file: what is read
// is the file described.
func (r *Roots) readTarget(p string, limit int64) (hostTarget, []byte, error) {
	f, err := r.openFile(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	switch {
	case errors.Is(err, unix.ELOOP):
		t, err := r.inspectTarget(p)
		return t, nil, err
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return hostTarget{}, nil, nil
	case err != nil:
		return hostTarget{}, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return hostTarget{}, nil, err
	}
	t := hostTarget{fi: fi, links: linkCount(fi)}
	if !fi.Mode().IsRegular() {
		return t, nil, nil
	}
	data, err := readAtMost(f, limit)
	return t, data, err
}
