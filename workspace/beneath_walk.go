//go:build unix

package workspace

import (
	"errors"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// walkBeneath opens rel beneath the directory fd root without openat2. It
// opens one component at a time relative to the previous one, with
// O_NOFOLLOW, so no symlink is ever followed by the kernel. A symlink met on
// the way is read and its target spliced into the rest of the walk: a
// relative target continues from the directory holding the link, an
// absolute one from the root if it names a place under rootPath. A ".." above
// the root, or an absolute target elsewhere, is an escape and answers EXDEV,
// as openat2's RESOLVE_BENEATH does. The directories walked so far are kept
// by name, so after a symlink the walk reopens them from the root fd, never
// by path.
func walkBeneath(root int, rootPath, rel string, flags int, mode uint32) (int, error) {
	rest := splitPath(rel)
	var done []string // components walked so far, beneath root
	cur, err := unix.Openat(root, ".", dirFlags|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer func() { unix.Close(cur) }()
	if len(rest) == 0 {
		return unix.Openat(cur, ".", flags, mode)
	}
	hops, retries := 0, 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		last := len(rest) == 0
		switch name {
		case ".":
			if last {
				return unix.Openat(cur, ".", flags, mode)
			}
			continue
		case "..":
			if len(done) == 0 {
				return -1, unix.EXDEV
			}
			done = done[:len(done)-1]
			if cur, err = reopenBeneath(root, done, cur); err != nil {
				return -1, err
			}
			if last {
				return unix.Openat(cur, ".", flags, mode)
			}
			continue
		}
		var fd int
		if last {
			lastFlags := flags
			if flags&openLinkFlag == 0 {
				lastFlags |= unix.O_NOFOLLOW
			}
			fd, err = unix.Openat(cur, name, lastFlags, mode)
		} else {
			fd, err = unix.Openat(cur, name, dirFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		if err == nil {
			if last {
				return fd, nil
			}
			retries = 0
			unix.Close(cur)
			cur = fd
			done = append(done, name)
			continue
		}
		// O_NOFOLLOW on a symlink fails with ELOOP (EMLINK on some BSDs,
		// ENOTDIR with O_DIRECTORY): see whether name is one, and follow it
		// ourselves. O_EXCL's EEXIST on a symlink stays an error, as open(2) has it.
		if !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.EMLINK) && !errors.Is(err, unix.ENOTDIR) {
			return -1, err
		}
		target, lerr := readlinkat(cur, name)
		if errors.Is(lerr, unix.EINVAL) && retries < 3 {
			// Not a symlink now, but the open saw one: name changed in
			// between. Open it again.
			retries++
			rest = append([]string{name}, rest...)
			continue
		}
		if lerr != nil {
			return -1, err // not a symlink: the open's own error stands
		}
		retries = 0
		if hops++; hops > maxSymlinkHops {
			return -1, unix.ELOOP
		}
		if filepath.IsAbs(target) {
			target = filepath.Clean(target)
			inner, ok := strings.CutPrefix(target, rootPath)
			if !ok || (inner != "" && !strings.HasPrefix(inner, "/") && rootPath != "/") {
				return -1, unix.EXDEV
			}
			done = nil
			if cur, err = reopenBeneath(root, done, cur); err != nil {
				return -1, err
			}
			target = inner
		}
		rest = append(splitPath(target), rest...)
		if len(rest) == 0 { // the link named the root itself
			return unix.Openat(cur, ".", flags, mode)
		}
	}
	return -1, unix.ENOENT // unreachable: the loop returns at the last component
}

// reopenBeneath closes cur and opens the directory names below root again,
// one component at a time with O_NOFOLLOW: after a symlink or "..", the
// walk must not trust any fd or path it held before.
func reopenBeneath(root int, names []string, cur int) (int, error) {
	unix.Close(cur)
	fd, err := unix.Openat(root, ".", dirFlags|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, n := range names {
		next, err := unix.Openat(fd, n, dirFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// readlinkat reads the symlink name in dir.
func readlinkat(dir int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}
