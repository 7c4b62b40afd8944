//go:build unix

package shellint

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Terminals run here: a PTY, process groups and sessions are at hand.
const terminalsSupported = true

// ptyProc is one process started as a session leader on its own PTY: the
// interactive shell, or one fallback `bash -c`.
type ptyProc struct {
	f      *os.File // PTY master, non-blocking (reads unblock on Close)
	cmd    *exec.Cmd
	pid    int
	waited chan struct{} // closed when the leader has been reaped
	exited chan struct{} // closed after leftovers were killed, output drained and onExit ran
	status int           // leader's exit status (128+signal when signalled)
}

// startProc starts argv on a new PTY. onData gets every chunk read (valid
// only during the call); onExit runs once the process is gone and its output
// has been drained.
func startProc(argv, env []string, dir string, cols, rows int, onData func(*ptyProc, []byte), onExit func(*ptyProc)) (*ptyProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	// StartWithSize makes the child a session leader (Setsid) with the
	// PTY as controlling terminal (Setctty), so job control works and the
	// whole session can be found and killed later.
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		return nil, err
	}
	// creack/pty leaves the master blocking; a blocking read cannot be
	// interrupted by Close. Re-open it through the runtime poller.
	fd, err := unix.FcntlInt(master.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err == nil {
		err = unix.SetNonblock(fd, true)
	}
	master.Close()
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	p := &ptyProc{
		f:      os.NewFile(uintptr(fd), "ptmx"),
		cmd:    cmd,
		pid:    cmd.Process.Pid,
		waited: make(chan struct{}),
		exited: make(chan struct{}),
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32<<10)
		for {
			n, err := p.f.Read(buf)
			if n > 0 {
				onData(p, buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		p.status = exitStatus(cmd.ProcessState)
		close(p.waited)
		// Background jobs keep the PTY open (no EOF) and would outlive
		// the shell; nothing may survive its session.
		killSession(p.pid)
		select {
		case <-readDone:
		case <-time.After(2 * time.Second):
			// Someone outside the session holds the slave open.
		}
		p.f.Close()
		<-readDone
		onExit(p)
		close(p.exited)
	}()
	return p, nil
}

func exitStatus(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// fgPgid returns the PTY's foreground process group, 0 if unknown.
func (p *ptyProc) fgPgid() int {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return 0
	}
	pg := 0
	_ = rc.Control(func(fd uintptr) {
		v, err := unix.IoctlGetInt(int(fd), unix.TIOCGPGRP)
		if err == nil {
			pg = v
		}
	})
	return pg
}

func (p *ptyProc) setSize(cols, rows int) error {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	})
	if err != nil {
		return err
	}
	return ioErr
}

// write writes b, giving up when the terminal stops taking input.
func (p *ptyProc) write(b []byte, timeout time.Duration) (int, error) {
	_ = p.f.SetWriteDeadline(time.Now().Add(timeout))
	n, err := p.f.Write(b)
	_ = p.f.SetWriteDeadline(time.Time{})
	return n, err
}

// terminate ends the process and everything in its session: SIGHUP first
// (what a closing terminal sends; interactive shells pass it on to their
// jobs), SIGKILL to whatever is left after grace. It returns once the
// process is reaped and its output drained.
func (p *ptyProc) terminate(grace time.Duration) {
	select {
	case <-p.exited:
		return
	default:
	}
	fg := p.fgPgid()
	_ = unix.Kill(-p.pid, unix.SIGHUP)
	if fg > 0 && fg != p.pid {
		_ = unix.Kill(-fg, unix.SIGHUP)
	}
	select {
	case <-p.waited:
	case <-time.After(grace):
		killSession(p.pid)
		_ = unix.Kill(-p.pid, unix.SIGKILL)
	}
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		// Unkillable (uninterruptible sleep); stop reading anyway.
		p.f.Close()
		<-p.exited
	}
}

// signalGroup sends sig to every process in the process group pg.
func signalGroup(pg int, sig syscall.Signal) error { return unix.Kill(-pg, sig) }

// killSession SIGKILLs every process whose session id is sid. Jobs that
// called setsid themselves have left the terminal on purpose and are spared.
func killSession(sid int) {
	for range 3 {
		pids := sessionMembers(sid)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// sessionMembers lists live (non-zombie) processes in session sid by
// reading /proc/<pid>/stat.
func sessionMembers(sid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.state == "Z" || st.session != sid {
			continue
		}
		out = append(out, pid)
	}
	return out
}

type procStat struct {
	state   string
	pgrp    int
	session int
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	// The command name is in parentheses and may contain anything.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 4 {
		return procStat{}, errors.New("malformed stat")
	}
	pg, _ := strconv.Atoi(f[2])
	sess, _ := strconv.Atoi(f[3])
	return procStat{state: f[0], pgrp: pg, session: sess}, nil
}

// setEcho turns the terminal's echo of typed input on or off. Termios
// requests on the master act on the terminal the shell holds.
func (p *ptyProc) setEcho(on bool) error {
	rc, err := p.f.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		t, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
		if err != nil {
			ioErr = err
			return
		}
		if (t.Lflag&unix.ECHO != 0) == on {
			return
		}
		if on {
			t.Lflag |= unix.ECHO
		} else {
			t.Lflag &^= unix.ECHO
		}
		ioErr = unix.IoctlSetTermios(int(fd), ioctlSetTermios, t)
	})
	if err != nil {
		return err
	}
	return ioErr
}
