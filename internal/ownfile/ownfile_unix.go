//go:build unix

package ownfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

func openNonBlocking(path string, follow bool) (*os.File, error) {
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	for {
		fd, err := unix.Open(path, flags, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

// isLoop: O_NOFOLLOW met a symlink (ELOOP; some BSDs say EMLINK).
func isLoop(err error) bool {
	return errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK)
}

func ownerOf(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

func trustedUID(uid int) bool { return uid == os.Getuid() || uid == 0 }

func userWords(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		return fmt.Sprintf("user %s (uid %d)", u.Username, uid)
	}
	return fmt.Sprintf("uid %d", uid)
}

func checkOwner(path string, o Options, fi fs.FileInfo) error {
	if uid, ok := ownerOf(fi); ok && !trustedUID(uid) {
		return &UnsafeError{Path: path, What: o.What, Why: fmt.Sprintf("is owned by %s, not by you (%s): another user could have written it", userWords(uid), userWords(os.Getuid())),
			Fix: "remove it, or if it is yours, `chown " + strconv.Itoa(os.Getuid()) + " " + path + "`"}
	}
	perm := fi.Mode().Perm()
	if perm&0o022 != 0 {
		return &UnsafeError{Path: path, What: o.What, Why: fmt.Sprintf("is writable by other users (mode %04o): another user could change it", perm),
			Fix: "`chmod go-w " + path + "`"}
	}
	if !o.OthersMayRead && perm&0o044 != 0 {
		return &UnsafeError{Path: path, What: o.What, Why: fmt.Sprintf("is readable by other users (mode %04o), and it holds a secret", perm),
			Fix: "`chmod 600 " + path + "`, and consider the secret seen: remove the file for a new one to be made"}
	}
	return nil
}

func checkDirOwner(path, what string, fi fs.FileInfo) error {
	if uid, ok := ownerOf(fi); ok && !trustedUID(uid) {
		return &UnsafeError{Path: path, What: what, Why: fmt.Sprintf("is owned by %s, not by you (%s)", userWords(uid), userWords(os.Getuid())),
			Fix: "remove it (the bridge makes it again), or if it is yours, `chown " + strconv.Itoa(os.Getuid()) + " " + path + "`"}
	}
	return nil
}
