//go:build darwin || freebsd || netbsd || openbsd

package shellint

import "golang.org/x/sys/unix"

// The termios requests, by their BSD names.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
