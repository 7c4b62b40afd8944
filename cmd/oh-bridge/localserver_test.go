//go:build linux

package main_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"golang.org/x/sys/unix"
)

// holdDefaultPorts makes 127.0.0.1:8000 and :18000 (the default port and
// Agent Canvas's) answer as something other than an agent-server for the
// test's length, so that nothing this machine runs there is found.
func holdDefaultPorts(t *testing.T) map[string]*http.Server {
	held := map[string]*http.Server{}
	for _, port := range []string{"8000", "18000"} {
		l, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			t.Skipf("port %s is in use here: %v", port, err)
		}
		srv := &http.Server{Handler: http.NotFoundHandler()}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
		held[port] = srv
	}
	return held
}

// fakeAgentServerPath is a directory with an `agent-server` that is the
// stand-in behind a wrapper reading --host, --port and
// OH_SESSION_API_KEYS_0 as the real script does; it records its pid.
func fakeAgentServerPath(t *testing.T, standInArgs ...string) (dir, pidFile string) {
	if err := agentservertest.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	dir = t.TempDir()
	pidFile = filepath.Join(dir, "pid")
	script := fmt.Sprintf(`#!/bin/bash
host=127.0.0.1 port=8000
while [ $# -gt 0 ]; do case "$1" in --host) host=$2; shift 2;; --port) port=$2; shift 2;; *) shift;; esac; done
echo $$ > %q
echo "agent-server stand-in starting on $host:$port"
exec %q %q --host "$host" --port "$port" --session-api-key "$OH_SESSION_API_KEYS_0" %s
`, pidFile, agentservertest.SystemPython, agentservertest.Script(), shellWords(standInArgs))
	if err := os.WriteFile(filepath.Join(dir, "agent-server"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, pidFile
}

// shellWords quotes args for a bash command line.
func shellWords(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func gone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }

// waitGone waits for the process to end, as the kernel reports it (a
// pidfd turns readable when it exits); false if it is still there after
// limit.
func waitGone(t *testing.T, pid int, limit time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
		return true
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(limit.Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 1
	}
}

// TestFindAndStartAServer: with no server anywhere, openhands/find_server
// says what it looked at and offers the installed agent-server;
// openhands/start_server starts it (its output comes to the editor), a
// conversation runs on it with the key the bridge keeps, and it ends with
// the bridge: when the editor closes the connection, and when the bridge
// is killed.
func TestFindAndStartAServer(t *testing.T) {
	holdDefaultPorts(t)
	path, pidFile := fakeAgentServerPath(t)
	for _, ending := range []string{"the editor closes", "the bridge is killed"} {
		t.Run(ending, func(t *testing.T) {
			home := t.TempDir()
			b := startBridgeEnv(t, []string{"HOME=" + home, "PATH=" + path + ":/usr/bin:/bin", "OH_BRIDGE_SERVER_URL=", "OH_BRIDGE_SESSION_API_KEY=", "LOCAL_BACKEND_API_KEY="},
				"--stdio", "--workspace", t.TempDir(), "--config", filepath.Join(home, "none.json"))
			if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
				t.Fatal(err)
			}
			var found struct {
				Found *struct{ ServerURL string }
				Tried []struct{ Source, ServerURL, Why string }
				Ways  []struct{ Kind, Command, Description string }
			}
			if err := b.client.Call(ctxT(t), "openhands/find_server", nil, &found); err != nil {
				t.Fatal(err)
			}
			if found.Found != nil || len(found.Tried) != 1 || found.Tried[0].Source != "default port" || !strings.Contains(found.Tried[0].Why, "not an OpenHands agent-server") {
				t.Fatalf("found %+v", found)
			}
			if len(found.Ways) == 0 || found.Ways[0].Kind != "installed" || found.Ways[0].Command != filepath.Join(path, "agent-server")+" --host 127.0.0.1 --port 0" {
				t.Fatalf("ways %+v", found.Ways)
			}
			var started struct{ ServerURL, Source, KeySource, Description string }
			ctx := ctxT(t)
			if err := b.client.Call(ctx, "openhands/start_server", map[string]any{"kind": "installed"}, &started); err != nil {
				t.Fatal(err)
			}
			if started.Source != "started" || !strings.HasPrefix(started.ServerURL, "http://127.0.0.1:") || strings.Contains(started.Description, "key the bridge made") == false {
				t.Fatalf("started %+v", started)
			}
			if _, err := b.client.AwaitNotification(ctx, "openhands/server_output", func(raw json.RawMessage) bool {
				return strings.Contains(string(raw), "agent-server stand-in starting on 127.0.0.1")
			}); err != nil {
				t.Errorf("the server's output did not come: %v", err)
			}
			// The key stays in the bridge: the editor names the URL only.
			var listed struct{ Conversations []any }
			if err := b.client.Call(ctx, "openhands/list_conversations", map[string]any{"serverUrl": started.ServerURL}, &listed); err != nil {
				t.Fatalf("listing on the started server without giving its key: %v", err)
			}
			var again struct{ Found *struct{ ServerURL string } }
			if err := b.client.Call(ctx, "openhands/find_server", nil, &again); err != nil || again.Found == nil || again.Found.ServerURL != started.ServerURL {
				t.Fatalf("finding again: %+v, %v", again, err)
			}
			data, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			var pid int
			fmt.Sscan(string(data), &pid)
			if gone(pid) {
				t.Fatalf("the server (pid %d) is not running", pid)
			}
			if ending == "the editor closes" {
				b.stdin.Close()
				b.wait(t, 15*time.Second)
			} else {
				b.cmd.Process.Kill()
				b.wait(t, 5*time.Second)
			}
			if !waitGone(t, pid, 10*time.Second) {
				t.Fatalf("the agent-server (pid %d) outlived the bridge (%s)", pid, ending)
			}
		})
	}
}
