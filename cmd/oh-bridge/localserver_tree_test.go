//go:build linux

package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/internal/ohtest/logbuf"
)

// serverTree is the processes of a started fake agent-server: the server
// itself and the three children its wrapper leaves behind it.
type serverTree struct {
	server, group, session, daemon int
}

func (tr serverTree) each() map[string]int {
	return map[string]int{
		"the server": tr.server,
		"its child in its process group, which ignores SIGTERM": tr.group,
		"its child in a session of its own":                     tr.session,
		"its double-forked grandchild in a session of its own":  tr.daemon,
	}
}

// fakeAgentServerWithChildren is fakeAgentServerPath's `agent-server`
// with what a real server's tree holds beyond its own process (the real
// one runs tmux and bash; uvx runs Python under it): before it becomes
// the stand-in it starts a child that stays in its process group and
// ignores SIGTERM, a child that calls setsid, and a grandchild that a
// subshell leaves behind (double fork) in a session of its own. All keep
// the server's stdout, as a real server's children do. It writes the
// four pids to the file returned.
func fakeAgentServerWithChildren(t *testing.T, standInArgs ...string) (dir, pidsFile string) {
	dir, _ = fakeAgentServerPath(t, standInArgs...)
	pidsFile = filepath.Join(dir, "pids")
	// The children say their pid on a FIFO the wrapper holds open (fd 3)
	// once they are placed (SIGTERM ignored, the session left), and only
	// then does the wrapper go on.
	script := fmt.Sprintf(`#!/bin/bash
host=127.0.0.1 port=8000
while [ $# -gt 0 ]; do case "$1" in --host) host=$2; shift 2;; --port) port=$2; shift 2;; *) shift;; esac; done
%secho "$$ $group $session $daemon" > %q
echo "agent-server stand-in starting on $host:$port"
exec %q %q --host "$host" --port "$port" --session-api-key "$OH_SESSION_API_KEYS_0" %s
`, ohtest.LeaveTree, pidsFile, agentservertest.SystemPython, agentservertest.Script(), shellWords(standInArgs))
	if err := os.WriteFile(filepath.Join(dir, "agent-server"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, pidsFile
}

// readTree reads the pids the wrapper wrote, checks that the children are
// placed as the test means them to be, and kills whatever is left of the
// tree when the test ends.
func readTree(t *testing.T, pidsFile string) serverTree {
	t.Helper()
	data, err := os.ReadFile(pidsFile)
	if err != nil {
		t.Fatal(err)
	}
	var tr serverTree
	if n, _ := fmt.Sscan(string(data), &tr.server, &tr.group, &tr.session, &tr.daemon); n != 4 {
		t.Fatalf("the wrapper's pids: %q", data)
	}
	t.Cleanup(func() {
		for _, pid := range tr.each() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	procs := ohtest.Procs()
	server, group, session, daemon := procs[tr.server], procs[tr.group], procs[tr.session], procs[tr.daemon]
	if server.PID == 0 || group.PPID != tr.server || group.Session != server.Session ||
		session.PPID != tr.server || session.Session != tr.session || daemon.PPID == tr.server || daemon.Session != tr.daemon {
		t.Fatalf("the server's tree is not as meant: server %+v, group child %+v, session child %+v, daemon %+v", server, group, session, daemon)
	}
	return tr
}

// survivors waits until each process of the tree has ended, within one
// limit for all, and names those that have not.
func survivors(t *testing.T, tr serverTree, limit time.Duration) []string {
	t.Helper()
	deadline := time.Now().Add(limit)
	var left []string
	for what, pid := range tr.each() {
		if !waitGone(t, pid, max(time.Until(deadline), 0)) {
			left = append(left, fmt.Sprintf("%s (pid %d)", what, pid))
		}
	}
	return left
}

// TestStartedServerTreeEndsWithTheBridge: the agent-server the bridge
// starts, from the editor face (openhands/start_server) and from the ACP
// face (a prompt with no server, the start allowed), ends with every
// process under it, those that left its process group and session
// included, when the connection ends and when the bridge is killed with
// SIGKILL, which it cannot catch. The pid the bridge logs is the
// server's.
func TestStartedServerTreeEndsWithTheBridge(t *testing.T) {
	holdDefaultPorts(t)
	for _, face := range []string{"editor", "acp"} {
		for _, ending := range []string{"the connection ends", "the bridge is killed"} {
			t.Run(face+"/"+ending, func(t *testing.T) {
				var b *treeBridge
				var pidsFile string
				if face == "editor" {
					b, pidsFile = startServerFromEditor(t)
				} else {
					b, pidsFile = startServerFromACP(t)
				}
				tr := readTree(t, pidsFile)
				if ending == "the connection ends" {
					b.stdin.Close()
				} else {
					b.cmd.Process.Kill()
				}
				select {
				case <-b.done:
				case <-time.After(15 * time.Second):
					t.Fatalf("the bridge did not exit within 15s after %s", ending)
				}
				if left := survivors(t, tr, 10*time.Second); len(left) > 0 {
					t.Fatalf("%d of the 4 processes of the server's tree outlived the bridge (%s): %s", len(left), ending, strings.Join(left, ", "))
				}
				// Read once the bridge has exited, when all it wrote is in.
				if log := b.stderr.String(); !strings.Contains(log, "pid="+strconv.Itoa(tr.server)) {
					t.Errorf("the bridge's log does not name the server's pid %d:\n%s", tr.server, log)
				}
			})
		}
	}
}

// treeBridge is the bridge process of TestStartedServerTreeEndsWithTheBridge.
type treeBridge struct {
	cmd    *exec.Cmd
	stdin  interface{ Close() error }
	stderr *logbuf.Buffer
	done   chan struct{}
}

// startServerFromEditor runs the bridge for an editor and has it start
// the fake server through openhands/start_server.
func startServerFromEditor(t *testing.T) (*treeBridge, string) {
	path, pidsFile := fakeAgentServerWithChildren(t)
	home := t.TempDir()
	b := startBridgeEnv(t, []string{"HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data"), "PATH=" + path + ":/usr/bin:/bin",
		"OH_BRIDGE_SERVER_URL=", "OH_BRIDGE_SESSION_API_KEY=", "LOCAL_BACKEND_API_KEY="},
		"--stdio", "--workspace", t.TempDir(), "--config", filepath.Join(home, "none.json"))
	if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	var started struct{ ServerURL string }
	if err := b.client.Call(ctxT(t), "openhands/start_server", map[string]any{"kind": "installed"}, &started); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { <-b.done; close(done) }()
	return &treeBridge{cmd: b.cmd, stdin: b.stdin, stderr: b.stderr, done: done}, pidsFile
}

// startServerFromACP runs `oh-bridge acp` with no server to find, and has
// a prompt start the fake server, the client allowing it once.
func startServerFromACP(t *testing.T) (*treeBridge, string) {
	scriptFile := filepath.Join(t.TempDir(), "script.json")
	script, _ := json.Marshal(map[string]any{"turns": [][]map[string]any{{{"message": "Hello from the started server."}}}})
	if err := os.WriteFile(scriptFile, script, 0o600); err != nil {
		t.Fatal(err)
	}
	path, pidsFile := fakeAgentServerWithChildren(t, "--script", scriptFile)
	home := t.TempDir()
	cmd := exec.Command(bin, "acp", "--log-file", "-", "--log-level", "info")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "PATH="+path+":/usr/bin:/bin",
		"OH_BRIDGE_SERVER_URL=", "OH_BRIDGE_SESSION_API_KEY=", "LOCAL_BACKEND_API_KEY=", "LLM_MODEL=e2e/scripted")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	b := &treeBridge{cmd: cmd, stdin: stdin, stderr: &logbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(b.done) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-b.done
		if t.Failed() {
			t.Logf("oh-bridge acp stderr:\n%s", b.stderr.String())
		}
	})
	c := &byPathClient{acpLines: newACPLines(stdin), t: t, answer: "allow_once"}
	go c.read(stdout, c.handle)
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "tree-test", "version": "1"}}, 10*time.Second)
	c.prompt(t.TempDir(), 60*time.Second)
	c.mu.Lock()
	asked := len(c.permissions)
	c.mu.Unlock()
	if asked != 1 {
		t.Fatalf("the client was asked %d questions; want the one to start the server", asked)
	}
	return b, pidsFile
}
