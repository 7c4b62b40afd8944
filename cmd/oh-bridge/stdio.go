package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// stdio joins stdin and stdout for the JSON-RPC faces; nothing else may
// write to stdout.
type stdio struct{ in, out *os.File }

// newStdio is the process's stdin and stdout, through the runtime's
// poller when they are pipes or sockets (the editor's case). Go reads an
// inherited stdin, which is blocking, with a blocking read(2): the reading
// goroutine keeps its thread and its P in the system call, and a request's
// own goroutine waits for the scheduler to take that P back, ~30 µs a
// request on a 2-vCPU VM (docs/terminal-speed.md). A non-blocking
// descriptor parks the reader instead. A terminal or a file is left as it
// is: O_NONBLOCK belongs to the open file, and a tty is shared with the
// shell that started us.
func newStdio() stdio {
	return stdio{in: pollable(0, os.Stdin), out: pollable(1, os.Stdout)}
}

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

func (s stdio) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.out.Write(p) }

// Close closes both descriptors of each side, so the client sees the end
// of our output.
func (s stdio) Close() error {
	s.in.Close()
	os.Stdin.Close()
	err := s.out.Close()
	if s.out != os.Stdout {
		os.Stdout.Close()
	}
	return err
}
