//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// pollable is f (descriptor fd), read and written through the runtime's
// poller when it is a pipe or a socket (the editor's case). Go reads an
// inherited stdin, which is blocking, with a blocking read(2): the reading
// goroutine keeps its thread and its P in the system call, and a request's
// own goroutine waits for the scheduler to take that P back, ~30 µs a
// request on a 2-vCPU VM (docs/terminal-speed.md). A non-blocking
// duplicate parks the reader instead. A terminal or a file is left as it
// is: O_NONBLOCK belongs to the open file, and a tty is shared with the
// shell that started us.
func pollable(fd int, f *os.File) *os.File {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return f
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFIFO && t != unix.S_IFSOCK {
		return f
	}
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return f
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		return f
	}
	return os.NewFile(uintptr(dup), f.Name())
}

// closeInput closes in and the stdin it duplicates; the non-blocking
// duplicate's pending read returns at once.
func closeInput(in *os.File) {
	in.Close()
	if in != os.Stdin {
		os.Stdin.Close()
	}
}
