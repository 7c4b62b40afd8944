//go:build unix

package shellint

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	f *os.File // PTY master, non-blocking (reads unblock on Close)
	// tty is the PTY's terminal side, held open for its line discipline
	// (line_unix.go): its termios, its input queue. Closed once the
	// leader is reaped, so that the master then reads EOF.
	tty    *os.File
	cmd    *exec.Cmd
	pid    int
	waited chan struct{} // closed when the leader has been reaped
	exited chan struct{} // closed after leftovers were killed, output drained and onExit ran
	status int           // leader's exit status (128+signal when signalled)

	// line is the line discipline the shell started with (saveLine);
	// nil: none saved, the terminal's settings are left as they are.
	line *unix.Termios

	// wmu orders writes against the leader's exit, so that what the
	// shell had read when it died is known exactly (input.go, reader.go).
	wmu      sync.Mutex
	sent     int64 // bytes written to the terminal
	lineSeq  int   // the command whose line was written last (writeLine)
	lineEnd  int64 // sent just after that line
	gone     bool  // the leader has exited: nothing more is written
	consumed int64 // once gone: the bytes the shell had read of sent
}

// startProc starts argv on a new PTY. A non-empty secret is handed to it
// on file descriptor 3, a pipe that holds the secret and then ends: no
// environment block or file ever holds it (the integration scripts read
// it and close the descriptor). onData gets every chunk read (valid only
// during the call); onExit runs once the process is gone and its output
// has been drained.
func startProc(argv, env []string, secret []byte, dir string, cols, rows int, onData func(*ptyProc, []byte), onExit func(*ptyProc)) (*ptyProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = dir
	if len(secret) > 0 {
		r, err := secretPipe(secret)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		cmd.ExtraFiles = []*os.File{r}
	}
	master, tty, err := pty.Open()
	if err != nil {
		return nil, err
	}
	if err := pty.Setsize(master, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		master.Close()
		tty.Close()
		return nil, err
	}
	// The child is a session leader (Setsid) with the PTY as controlling
	// terminal (Setctty, its fd 0), so job control works and the whole
	// session can be found and killed later. This is pty.StartWithSize,
	// keeping the terminal side open here.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		master.Close()
		tty.Close()
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
		tty.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	p := &ptyProc{
		f:      os.NewFile(uintptr(fd), "ptmx"),
		tty:    tty,
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
		p.leaderGone()
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

// writeLine writes b, the line that submits command seq (0: not a
// line, input), giving up when the terminal stops taking input.
func (p *ptyProc) writeLine(seq int, b []byte, timeout time.Duration) (int, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.gone {
		return 0, errLeaderGone
	}
	_ = p.f.SetWriteDeadline(time.Now().Add(timeout))
	n, err := p.f.Write(b)
	_ = p.f.SetWriteDeadline(time.Time{})
	p.sent += int64(n)
	if seq != 0 && err == nil {
		p.lineSeq, p.lineEnd = seq, p.sent
	}
	return n, err
}

// leaderGone records, once the leader is reaped, how much of what was
// written it had read (what the terminal still queues was not), refuses
// later writes, and lets go of the terminal side so the master reads EOF
// once the session's other members are gone too.
func (p *ptyProc) leaderGone() {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.gone = true
	p.consumed = p.sent - int64(p.takeUnread())
	p.tty.Close()
}

// readLine reports whether the leader read the whole line of command
// seq before it exited: false if that line was never written, or the
// terminal still held part of it. Valid once the leader is reaped.
func (p *ptyProc) readLine(seq int) bool {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return p.gone && p.lineSeq == seq && p.consumed >= p.lineEnd
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

// killGroups SIGKILLs what is left of the process groups groups in
// session sid (only members of the session count, so that a group id
// taken again by someone else's group is spared) and waits until it is
// gone, or deadline passes; it returns how many processes were left then.
// A group already empty costs one kill(2) probe, and no walk of /proc.
func killGroups(sid int, groups []int, deadline time.Time) int {
	var live []int
	for _, pg := range groups {
		if pg != sid && unix.Kill(-pg, 0) == nil {
			live = append(live, pg)
		}
	}
	if len(live) == 0 {
		return 0
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		// No /proc (macOS): members cannot be told from zombies, which
		// answer kill(2) until they are reaped. One SIGKILL to each group.
		for _, pg := range live {
			_ = unix.Kill(-pg, unix.SIGKILL)
		}
		return 0
	}
	for {
		pids := groupMembers(sid, live)
		if len(pids) == 0 || time.Now().After(deadline) {
			return len(pids)
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// groupMembers lists the live (non-zombie) processes of session sid
// whose process group is one of groups.
func groupMembers(sid int, groups []int) []int {
	var out []int
	eachProc(func(pid int, st procStat) {
		if st.session == sid && slices.Contains(groups, st.pgrp) {
			out = append(out, pid)
		}
	})
	return out
}

// killSession SIGKILLs every process whose session id is sid, until none
// is left or a second has passed: a member that a loaded machine had not
// yet shown in /proc, or that forked as it was killed, is taken on a later
// pass. Jobs that called setsid themselves have left the terminal on
// purpose and are spared.
func killSession(sid int) {
	deadline := time.Now().Add(time.Second)
	for {
		pids := sessionMembers(sid)
		if len(pids) == 0 || time.Now().After(deadline) {
			return
		}
		for _, pid := range pids {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sessionMembers lists live (non-zombie) processes in session sid by
// reading /proc/<pid>/stat.
func sessionMembers(sid int) []int {
	var out []int
	eachProc(func(pid int, st procStat) {
		if st.session == sid {
			out = append(out, pid)
		}
	})
	return out
}

// eachProc calls fn for every live (non-zombie) process in /proc.
func eachProc(fn func(pid int, st procStat)) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil && st.state != "Z" {
			fn(pid, st)
		}
	}
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

// secretPipe returns the read end of a pipe that holds secret and then
// ends. The secret fits in the pipe's buffer, so nothing waits to write.
func secretPipe(secret []byte) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_, err = w.Write(secret)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}
