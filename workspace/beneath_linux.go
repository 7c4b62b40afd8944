package workspace

import (
	"errors"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Flags for fds that only name a place: a directory to resolve beneath, or a
// file to fstat. O_PATH needs no read permission and opens FIFOs without
// blocking.
const (
	dirFlags   = unix.O_PATH
	statFlags  = unix.O_PATH
	lstatFlags = unix.O_PATH | unix.O_NOFOLLOW
	// openLinkFlag in an open's flags asks for a symlink itself.
	openLinkFlag = unix.O_NOFOLLOW
)

// resolveBeneath is what openat2 is told: stay beneath the directory fd
// (refusing "..", absolute symlinks and symlinks that climb out) and never
// follow /proc's magic links, which jump anywhere.
const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// openat2Works is false on kernels before 5.6 (ENOSYS) and in sandboxes
// whose seccomp filter refuses the call (EPERM); walkBeneath does the work
// there. Tests switch it off to exercise the walker on a kernel that has it.
var openat2Works atomic.Bool

func init() {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: resolveBeneath}
	fd, err := unix.Openat2(unix.AT_FDCWD, ".", &how)
	if err == nil {
		unix.Close(fd)
	}
	openat2Works.Store(!errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EPERM))
}

// openBeneath opens rel beneath the directory fd root (whose path is
// rootPath) and returns the new fd; EXDEV means rel leads out of root.
func openBeneath(root int, rootPath, rel string, flags int, mode uint32) (int, error) {
	if !openat2Works.Load() {
		return walkBeneath(root, rootPath, rel, flags, mode)
	}
	how := unix.OpenHow{Flags: uint64(flags), Mode: uint64(mode), Resolve: resolveBeneath}
	if flags&(unix.O_CREAT|unix.O_TMPFILE) == 0 {
		how.Mode = 0 // openat2 refuses a mode without O_CREAT
	}
	for tries := 0; ; tries++ {
		fd, err := unix.Openat2(root, rel, &how)
		// EAGAIN: a rename elsewhere raced with a ".." in the walk and the
		// kernel could not prove it stayed beneath; it asks us to retry.
		if (errors.Is(err, unix.EAGAIN) && tries < 64) || errors.Is(err, unix.EINTR) {
			continue
		}
		return fd, err
	}
}
