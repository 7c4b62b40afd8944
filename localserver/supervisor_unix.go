//go:build unix

package localserver

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// superviseMain is the supervisor. args are the server's program and its
// arguments; the lifeline and the reports are fds 3 and 4
// (supervised_unix.go). It starts the server in a process group of its
// own, and on Linux first becomes the subreaper of everything the server
// starts: a descendant that is orphaned, even one that left the group and
// the session or forked twice, becomes its child rather than init's. Then
// it waits for the server to end, or for the bridge to close the lifeline
// or die, or for a signal to end; when asked to end, it sends SIGTERM to
// the server's group and gives it stopGrace. As soon as the server has
// ended, or the grace is over, it kills whatever is left of the tree with
// SIGKILL, reaps it, reports how the server ended, and exits.
func superviseMain(args []string) int {
	os.Unsetenv(superviseEnv) // not the server's: its own children are no supervisors
	if len(args) == 0 || !isPipe(lifelineFD) || !isPipe(reportsFD) {
		fmt.Fprintf(os.Stderr, "oh-bridge: %s is set: this process is an agent-server's supervisor, which oh-bridge starts with the server's command and its pipes on fds 3 and 4; unset it to run oh-bridge\n", superviseEnv)
		return 2
	}
	syscall.CloseOnExec(lifelineFD) // the server's must not hold them
	syscall.CloseOnExec(reportsFD)
	lifeline := os.NewFile(lifelineFD, "lifeline")
	reports := os.NewFile(reportsFD, "reports")

	// A write to stdout or stderr, which are the bridge's output pipe,
	// after the bridge died would otherwise end this process with
	// SIGPIPE, leaving the tree behind. A handler, unlike SIG_IGN, is
	// not inherited by the server.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ask := make(chan os.Signal, 1)
	signal.Notify(ask, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	t := &tree{chld: make(chan os.Signal, 1)}
	signal.Notify(t.chld, syscall.SIGCHLD)
	bridgeGone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, lifeline)
		close(bridgeGone)
	}()

	if err := becomeReaper(); err != nil {
		fmt.Fprintf(os.Stderr, "oh-bridge: the agent-server's supervisor cannot gather the processes it leaves (%v): those that leave its process group may outlive it\n", err)
	}
	pid, err := startServer(args)
	if err != nil {
		fmt.Fprintf(reports, "failed %v\n", err)
		return 1
	}
	t.server = pid
	fmt.Fprintf(reports, "started %d\n", pid)

	var grace <-chan time.Time
	stopping := false
	stop := func() {
		if !stopping {
			stopping = true
			_ = syscall.Kill(-pid, syscall.SIGTERM)
			grace = time.After(stopGrace)
		}
	}
wait:
	for !t.ended {
		select {
		case <-bridgeGone:
			bridgeGone = nil
			stop()
		case <-ask:
			stop()
		case <-t.chld:
			t.reap()
		case <-grace:
			break wait
		}
	}
	t.sweep()
	how := "not ended: it did not end within " + sweepLimit.String() + " of SIGKILL"
	if t.ended {
		how = statusWords(t.status)
	}
	fmt.Fprintf(reports, "ended %s\n", how)
	return 0
}

// startServer starts the server from the supervisor's thread for good:
// the parent-death signal that ends the server if the supervisor itself
// is killed is sent when the thread that started it ends, and a Go
// program's threads come and go (golang/go#27505) unless one is locked.
// The main goroutine holds its thread until the process exits.
func startServer(args []string) (int, error) {
	runtime.LockOSThread()
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devNull.Close()
	pid, err := syscall.ForkExec(args[0], args, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{devNull.Fd(), 1, 2},
		Sys:   groupAttr(),
	})
	if err != nil {
		return 0, &os.PathError{Op: "fork/exec", Path: args[0], Err: err}
	}
	return pid, nil
}

// tree is the supervisor's view of the server's: the server's pid, and
// its status once reaped.
type tree struct {
	server int
	ended  bool
	status syscall.WaitStatus
	chld   chan os.Signal // SIGCHLD: a child ended
}

// reap collects every child that has ended, noting the server's status.
func (t *tree) reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
		if pid == t.server {
			t.ended, t.status = true, ws
		}
	}
}

// sweep kills what is left of the tree and reaps it, round after round
// (a process may fork while its parent is killed; a subreaper gets the
// new child once the parent has died), until nothing is left or
// sweepLimit has passed. A child's end wakes it; the ticker covers
// descendants whose ends no SIGCHLD of the supervisor's announces.
func (t *tree) sweep() {
	limit := time.NewTimer(sweepLimit)
	defer limit.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		t.reap()
		if left := killRest(t.server); left == 0 && t.ended {
			return
		}
		select {
		case <-t.chld:
		case <-tick.C:
		case <-limit.C:
			t.reap()
			return
		}
	}
}

// statusWords words a status as os.ProcessState does.
func statusWords(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return "exit status " + strconv.Itoa(ws.ExitStatus())
	case ws.Signaled():
		return "signal: " + ws.Signal().String()
	}
	return "status " + strconv.Itoa(int(ws))
}

// isPipe says whether fd is an open pipe.
func isPipe(fd int) bool {
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFIFO
}
