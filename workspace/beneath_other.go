//go:build darwin

package workspace

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Without O_PATH, fds that only name a place are read-only opens;
// O_NONBLOCK keeps a FIFO from blocking them. O_SYMLINK opens a symlink
// itself.
const (
	dirFlags   = unix.O_RDONLY
	statFlags  = unix.O_RDONLY | unix.O_NONBLOCK
	lstatFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_SYMLINK
	// openLinkFlag in an open's flags asks for a symlink itself.
	openLinkFlag = unix.O_SYMLINK
)

// openBeneath opens rel beneath the directory fd root: there is no
// openat2 here, so walkBeneath resolves it one component at a time.
func openBeneath(root int, rootPath, rel string, flags int, mode uint32) (int, error) {
	return walkBeneath(root, rootPath, rel, flags, mode)
}

// openat2Works is never set here; the tests read it.
var openat2Works atomic.Bool
