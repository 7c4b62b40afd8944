package shellint

import "golang.org/x/sys/unix"

// The termios requests, by their Linux names.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
