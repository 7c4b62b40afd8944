//go:build unix

package main

import (
	"os"
	"testing"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestPollableStdio: a pipe is read through the poller (a non-blocking
// duplicate); a terminal is left blocking, since the shell that started
// the bridge shares it.
func TestPollableStdio(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rc, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	rc.Control(func(f uintptr) { fd = int(f) })
	unix.SetNonblock(fd, false)
	p := pollable(fd, r)
	if p == r {
		t.Fatal("a pipe was not made pollable")
	}
	defer p.Close()
	if nb, _ := isNonblock(t, p); !nb {
		t.Fatal("the pipe's duplicate is blocking")
	}
	w.Write([]byte("x"))
	if b := make([]byte, 1); func() bool { n, err := p.Read(b); return n != 1 || err != nil }() {
		t.Fatal("cannot read through the duplicate")
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if got := pollable(int(tty.Fd()), tty); got != tty {
		t.Fatal("a terminal was duplicated")
	}
	if nb, _ := isNonblock(t, tty); nb {
		t.Fatal("the terminal was made non-blocking")
	}
}

func isNonblock(t *testing.T, f *os.File) (bool, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	rc.Control(func(fd uintptr) { flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0) })
	return flags&unix.O_NONBLOCK != 0, err
}
