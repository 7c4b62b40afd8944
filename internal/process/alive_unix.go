//go:build unix

package process

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Alive reports whether pid names a running process (or a zombie not yet
// reaped). Only ESRCH means gone: a process we may not signal (EPERM)
// exists. A pid that is not positive names no single process and counts
// as alive, so nothing is done on its account.
func Alive(pid int) bool {
	if pid <= 0 {
		return true
	}
	return !errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}
