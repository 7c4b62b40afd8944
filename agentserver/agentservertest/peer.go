// Package agentservertest runs the stand-in for an OpenHands agent-server
// (fixtures/peers/agent_server_standin.py, on Debian's python3-fastapi)
// for tests, in the spirit of net/http/httptest.
//
// The real agent-server (internal/realserver) is what tests use by
// default. The stand-in is for what the real one cannot be made to do: a
// scripted agent with no model, a server restarted in a second on the same
// port, an interrupt that lands late, another version than the installed
// ones, a second server in the same test at no cost. Each test that starts
// it says which. agentserver's TestStandInKeepsToTheRealServer runs one
// scenario against both and fails on any difference in the REST answers'
// shapes or the events streamed.
package agentservertest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
)

// SystemPython is the interpreter that has Debian's python3-fastapi;
// a pyenv python3 earlier on PATH would not.
const SystemPython = "/usr/bin/python3"

// Version is the agent-server version the stand-in follows unless given
// --version: the newest that `task openhands` installs, to which
// agentserver's TestStandInKeepsToTheRealServer holds it.
const Version = "1.58.2"

// Peer is a running stand-in.
type Peer struct {
	URL string
	Cmd *exec.Cmd

	mu     sync.Mutex
	cond   *sync.Cond
	lines  []string
	stderr logbuf.Buffer // what the stand-in writes on stderr
}

// Script is the path of the agent-server stand-in.
func Script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "fixtures", "peers", "agent_server_standin.py")
}

// Start runs the stand-in with args and waits until it listens. CI must
// have the Python packages; elsewhere their absence skips the test.
func Start(t testing.TB, args ...string) *Peer {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	p, err := Launch(args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("stand-in stderr:\n%s", p.Stderr())
		}
	})
	return p
}

// Available reports whether the stand-in can run here.
func Available() error {
	if err := exec.Command(SystemPython, "-c", "import fastapi, uvicorn, websockets").Run(); err != nil {
		return errors.New("the agent-server stand-in needs Debian's python3-fastapi, python3-uvicorn and python3-websockets (apt-get install python3-fastapi python3-uvicorn python3-websockets)")
	}
	return nil
}

// Launch runs the stand-in and waits until it listens; Stop ends it.
func Launch(args ...string) (*Peer, error) {
	script := Script()
	cmd := exec.Command(SystemPython, append([]string{script}, args...)...)
	// A test binary killed by its timeout runs no cleanup: the stand-in
	// must not outlive it.
	dieWithParent(cmd)
	stdout, _ := cmd.StdoutPipe()
	p := &Peer{Cmd: cmd}
	cmd.Stderr = &p.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.cond = sync.NewCond(&p.mu)
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "PORT ") {
				port <- strings.TrimPrefix(line, "PORT ")
				continue
			}
			p.mu.Lock()
			p.lines = append(p.lines, line)
			p.cond.Broadcast()
			p.mu.Unlock()
		}
	}()
	select {
	case n := <-port:
		p.URL = "http://127.0.0.1:" + n
		return p, nil
	case <-time.After(20 * time.Second):
		p.Stop()
		return nil, fmt.Errorf("the stand-in %s did not start: %s", filepath.Base(script), p.Stderr())
	}
}

// Stop kills the stand-in.
func (p *Peer) Stop() {
	p.Cmd.Process.Kill()
	p.Cmd.Wait()
}

// Stderr is what the stand-in printed on stderr.
func (p *Peer) Stderr() string { return p.stderr.String() }

// AwaitLine waits for a stdout line with the given prefix, consumes it and
// returns the rest of it.
func (p *Peer) AwaitLine(t testing.TB, prefix string) string {
	t.Helper()
	line, err := p.WaitLine(prefix, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// WaitLine is AwaitLine with an error instead of a test failure.
func (p *Peer) WaitLine(prefix string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	timer := time.AfterFunc(timeout, func() { p.mu.Lock(); p.cond.Broadcast(); p.mu.Unlock() })
	defer timer.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		for i, l := range p.lines {
			if strings.HasPrefix(l, prefix) {
				p.lines = append(p.lines[:i:i], p.lines[i+1:]...)
				return strings.TrimPrefix(l, prefix), nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the stand-in never printed %q; it printed %q", prefix, p.lines)
		}
		p.cond.Wait()
	}
}
