//go:build unix

package shellint

import "golang.org/x/sys/unix"

// The terminal's line discipline, asked and set through the PTY's
// terminal side (ptyProc.tty), where every request means what it means
// for a program on that terminal: termios, and the input queue of what
// was typed and not yet read.
//
// A program may leave the line discipline in a state the shell cannot
// read a line in: a crashed full-screen program leaves `stty raw` (no
// line ends, no Ctrl-C), `stty -icrnl` makes Enter a plain character,
// `stty -icanon min 0 time 0` makes every read return at once (bash then
// reads end-of-input and exits). So before each line is submitted the
// bridge puts back the settings the shell started with (saveLine), if a
// program changed them, and drops input nobody read (a Ctrl-C typed for a
// command that ended without reading it would start the next line).

// control runs fn on the terminal side's descriptor.
func (p *ptyProc) control(fn func(fd int) error) error {
	rc, err := p.tty.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	if err := rc.Control(func(fd uintptr) { ioErr = fn(int(fd)) }); err != nil {
		return err
	}
	return ioErr
}

// saveLine remembers the line discipline as it is now: the shell's, once
// it shows its first prompt. Called once, under the terminal's mutex,
// before any line is submitted.
func (p *ptyProc) saveLine() {
	_ = p.control(func(fd int) error {
		t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
		if err == nil {
			p.line = t
		}
		return err
	})
}

// prepareLine readies the terminal for a submitted line: the saved line
// discipline back if it changed, ECHO off (the line is not echoed; the
// mirror shows the command instead, mirror.go), and unread input
// discarded. It costs two requests when nothing changed: one to read
// the settings, one to flush.
func (p *ptyProc) prepareLine() error {
	return p.control(func(fd int) error {
		t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
		if err != nil {
			return err
		}
		want := *t
		if p.line != nil {
			want = *p.line
		}
		want.Lflag &^= unix.ECHO
		if want != *t {
			if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &want); err != nil {
				return err
			}
		}
		return flushInput(fd)
	})
}

// setEcho turns the terminal's echo of typed input on or off.
func (p *ptyProc) setEcho(on bool) error {
	return p.control(func(fd int) error {
		t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
		if err != nil {
			return err
		}
		if (t.Lflag&unix.ECHO != 0) == on {
			return nil
		}
		if on {
			t.Lflag |= unix.ECHO
		} else {
			t.Lflag &^= unix.ECHO
		}
		return unix.IoctlSetTermios(fd, ioctlSetTermios, t)
	})
}

// takeUnread takes what was typed on the terminal and never read, once
// the shell is gone, and returns how many bytes it was (0 if it cannot
// tell). It reads through a descriptor of its own, non-blocking: a read
// first waits for input still on its way into the queue, which asking
// the queue's length (FIONREAD) would miss. Called before ptyProc.tty,
// which keeps the terminal side open, is closed.
func (p *ptyProc) takeUnread() int {
	fd, err := unix.Open(p.tty.Name(), unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	var buf [4096]byte
	total := 0
	for {
		n, err := unix.Read(fd, buf[:])
		if n <= 0 || err != nil {
			return total
		}
		total += n
	}
}
