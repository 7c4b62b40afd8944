package shellint

import "golang.org/x/sys/unix"

// The termios requests, by their Linux names.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)

// flushInput discards what was typed on the terminal fd and not yet read
// (tcflush(fd, TCIFLUSH)).
func flushInput(fd int) error { return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH) }
