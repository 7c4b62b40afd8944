package localserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// readPids reads the "pids" line from r and returns the tree's four
// pids, then drains r.
func readPids(r io.Reader) ([]int, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var pids [4]int
		if n, _ := fmt.Sscanf(sc.Text(), "pids %d %d %d %d", &pids[0], &pids[1], &pids[2], &pids[3]); n == 4 {
			go io.Copy(io.Discard, r)
			return pids[:], nil
		}
	}
	return nil, fmt.Errorf("the server said no pids (%v)", sc.Err())
}

// treePids is readPids for the test's goroutine; every process of the
// tree is killed when the test ends.
func treePids(t *testing.T, r io.Reader) []int {
	t.Helper()
	pids, err := readPids(r)
	if err != nil {
		t.Fatal(err)
	}
	killAtEnd(t, pids)
	return pids
}

func killAtEnd(t *testing.T, pids []int) {
	t.Cleanup(func() {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

var treeNames = []string{"the server", "its child in its group, which ignores SIGTERM", "its child in a session of its own", "its double-forked grandchild in a session of its own"}

// stillThere names the processes of pids that have not ended within limit
// (one deadline for all), as the kernel reports it (a pidfd turns readable
// when its process exits).
func stillThere(t *testing.T, pids []int, names []string, limit time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(limit)
	var left []string
	for i, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err == unix.ESRCH {
			continue
		}
		if err != nil {
			t.Fatalf("pidfd_open %d: %v", pid, err)
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(max(time.Until(deadline), 0).Milliseconds()))
		for err == unix.EINTR {
			n, err = unix.Poll(fds, int(max(time.Until(deadline), 0).Milliseconds()))
		}
		unix.Close(fd)
		if n != 1 {
			left = append(left, fmt.Sprintf("%s (pid %d)", names[i], pid))
		}
	}
	return left
}

// TestSupervisedStopEndsTheTree: a server run under the supervisor (this
// test binary, through TestMain) has its own pid for PID; Stop ends it
// and its whole tree, the child that ignores SIGTERM and those that left
// its group and session too, and returns when all of it is gone and
// reaped; the server's status comes through. A server that ignores
// SIGTERM itself is killed after the grace.
func TestSupervisedStopEndsTheTree(t *testing.T) {
	if !selfSupervises {
		t.Fatal("TestMain did not make this binary a supervisor")
	}
	for _, c := range []struct {
		name, env, want string
	}{
		{"the server ends on SIGTERM", "", "signal: terminated"},
		{"the server ignores SIGTERM", "TREE_IGNORES_TERM=1", "signal: killed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := treeCommand()
			cmd.Env = append(os.Environ(), c.env)
			r, w := io.Pipe()
			cmd.Stdout, cmd.Stderr = w, io.Discard
			p, err := launch(cmd)
			if err != nil {
				t.Fatal(err)
			}
			pids := treePids(t, r)
			if p.pid() != pids[0] {
				t.Errorf("pid() = %d; the server's is %d", p.pid(), pids[0])
			}
			done := make(chan struct{})
			var werr error
			go func() { werr = p.wait(); close(done) }()
			start := time.Now()
			p.stop(done)
			t.Logf("Stop took %v", time.Since(start).Round(time.Millisecond))
			for i, pid := range pids {
				if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
					t.Errorf("%s (pid %d) is still there, or not reaped, when Stop returns: %v", treeNames[i], pid, err)
				}
			}
			if werr == nil || werr.Error() != c.want {
				t.Errorf("the server's end: %v; want %s", werr, c.want)
			}
		})
	}
}

// TestServerThatExitsLeavesNoTree: a server that exits before it answers
// is a StartError with its status and its last output, as soon as it has
// exited, although its children hold its output open; they end with it.
func TestServerThatExitsLeavesNoTree(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "agent-server")
	if err := os.WriteFile(script, []byte("#!/bin/bash\n"+treeScript), 0o755); err != nil {
		t.Fatal(err)
	}
	w := Way{Kind: "installed", Program: "/bin/bash", Args: []string{script, "3"}}
	r, log := io.Pipe()
	type read struct {
		pids []int
		err  error
	}
	pidsc := make(chan read, 1)
	go func() { pids, err := readPids(r); pidsc <- read{pids, err} }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := Start(ctx, w, StartOptions{Dir: dir, Log: log, StateDir: t.TempDir()})
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "it exited (exit status 3) before it answered") ||
		!strings.Contains(se.Tail, "No module named openhands.agent_server") {
		t.Fatalf("got %v", err)
	}
	got := <-pidsc
	if got.err != nil {
		t.Fatal(got.err)
	}
	killAtEnd(t, got.pids)
	if left := stillThere(t, got.pids, treeNames, 0); len(left) > 0 {
		t.Errorf("left behind by the server that exited: %s", strings.Join(left, ", "))
	}

	// A server that cannot be run at all is said so, as exec says it.
	os.Chmod(script, 0o644)
	_, err = Start(ctx, Way{Kind: "installed", Program: script}, StartOptions{Dir: dir, StateDir: t.TempDir()})
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "fork/exec "+script+": permission denied") {
		t.Errorf("a server that is not executable: %v", err)
	}
}

// TestSupervisorEndsTheTreeWhenTheBridgeIsKilled: a bridge (this test
// binary, holdTree) killed with SIGKILL, which it cannot catch, takes the
// server's whole tree with it, and the supervisor, which ends last. A
// bridge that starts its server directly leaves all but the server.
func TestSupervisorEndsTheTreeWhenTheBridgeIsKilled(t *testing.T) {
	bridge := exec.Command(os.Args[0], "-test.run=^$")
	bridge.Env = append(os.Environ(), holdTreeEnv+"=supervised")
	out, err := bridge.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	bridge.Stderr = os.Stderr
	if err := bridge.Start(); err != nil {
		t.Fatal(err)
	}
	defer bridge.Wait()
	defer bridge.Process.Kill()
	br := bufio.NewReader(out)
	line, _ := br.ReadString('\n')
	var sup int
	if _, err := fmt.Sscanf(line, "supervisor %d", &sup); err != nil {
		t.Fatalf("the bridge said %q", line)
	}
	t.Cleanup(func() { syscall.Kill(sup, syscall.SIGKILL) })
	pids := treePids(t, br)
	if err := bridge.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if left := stillThere(t, append(pids, sup), append(treeNames, "the supervisor"), 10*time.Second); len(left) > 0 {
		t.Fatalf("%d of the server's 4 processes and its supervisor outlived the bridge: %s", len(left), strings.Join(left, ", "))
	}
	t.Logf("all ended %v after the bridge was killed", time.Since(start).Round(time.Millisecond))
}
