//go:build darwin || freebsd || netbsd || openbsd

package shellint

import "golang.org/x/sys/unix"

// The termios requests, by their BSD names.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)

// flushInput discards what was typed on the terminal fd and not yet read
// (tcflush(fd, TCIFLUSH): TIOCFLUSH with FREAD).
func flushInput(fd int) error {
	const fread = 1
	return unix.IoctlSetPointerInt(fd, unix.TIOCFLUSH, fread)
}
