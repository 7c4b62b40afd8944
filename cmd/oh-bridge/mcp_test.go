//go:build unix

package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPSDKClient drives `oh-bridge mcp` (stdio) and the editor bridge's
// MCP endpoint (Streamable HTTP) with the official MCP TypeScript SDK, and
// checks that HTTP calls land in the editor's session (test/node/mcp.cjs).
func TestMCPSDKClient(t *testing.T) {
	node, dir := nodeClients(t, "@modelcontextprotocol/sdk")
	runClient(t, exec.Command(node, filepath.Join(dir, "mcp.cjs"), bin,
		filepath.Join(repoRoot(t), "fixtures", "openhands-v1", "tools.json"), t.TempDir()))
}

// listening returns the TCP sockets a process listens on, from
// /proc/net/tcp and tcp6, as "address:port" in hex as the kernel writes it
// (0100007F:1F90 is 127.0.0.1:8080).
func listening(t *testing.T, pid int) []string {
	t.Helper()
	inodes := map[string]bool{}
	for _, s := range sockets(t, pid) {
		inodes[strings.TrimSuffix(strings.TrimPrefix(s, "socket:["), "]")] = true
	}
	var out []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			if inodes[fields[9]] {
				out = append(out, fields[1])
			}
		}
	}
	return out
}

type mcpEndpoint struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// TestMCPListensOnlyWhenAsked: no socket before mcp/start; then one, on
// 127.0.0.1 only; none again after mcp/stop.
func TestMCPListensOnlyWhenAsked(t *testing.T) {
	b := startBridge(t, "--workspace", t.TempDir())
	ctx := ctxT(t)
	if _, err := b.client.Initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	pid := b.cmd.Process.Pid
	if err := b.client.Call(ctx, "mcp/status", nil, nil); err != nil {
		t.Fatal(err)
	}
	if l := listening(t, pid); len(l) != 0 {
		t.Fatalf("the bridge listens before mcp/start: %v", l)
	}
	if s := sockets(t, pid); len(s) != 0 {
		t.Fatalf("the bridge holds sockets before mcp/start: %v", s)
	}
	var ep mcpEndpoint
	if err := b.client.Call(ctx, "mcp/start", nil, &ep); err != nil {
		t.Fatal(err)
	}
	var port int
	if _, err := fmt.Sscanf(ep.URL, "http://127.0.0.1:%d/mcp", &port); err != nil {
		t.Fatalf("mcp/start URL %q: %v", ep.URL, err)
	}
	want := fmt.Sprintf("0100007F:%04X", port)
	if l := listening(t, pid); len(l) != 1 || l[0] != want {
		t.Fatalf("after mcp/start the bridge listens on %v, want only %s (127.0.0.1:%d)", l, want, port)
	}
	if err := b.client.Call(ctx, "mcp/stop", nil, nil); err != nil {
		t.Fatal(err)
	}
	if l := listening(t, pid); len(l) != 0 {
		t.Fatalf("the bridge still listens after mcp/stop: %v", l)
	}
}

// TestMCPGuard: every request needs the token, a Host naming the endpoint
// and no foreign Origin.
func TestMCPGuard(t *testing.T) {
	b := startBridge(t, "--workspace", t.TempDir())
	ctx := ctxT(t)
	if _, err := b.client.Initialize(ctx, nil); err != nil {
		t.Fatal(err)
	}
	var ep mcpEndpoint
	if err := b.client.Call(ctx, "mcp/start", map[string]any{"port": 0}, &ep); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(ep.URL, "http://"), "/mcp")
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"guard-test","version":"1"}}}`
	for _, c := range []struct {
		name   string
		header map[string]string
		host   string
		path   string
		status int
		body   string // part of the answer
	}{
		{name: "no token", status: 401, body: "missing bearer token"},
		{name: "a wrong token", header: map[string]string{"Authorization": "Bearer nope"}, status: 401, body: "wrong bearer token"},
		{name: "another scheme", header: map[string]string{"Authorization": "Basic " + ep.Token}, status: 401, body: `uses "Basic"`},
		{name: "a token of another endpoint", header: map[string]string{"Authorization": "Bearer " + ep.Token[1:] + "x"}, status: 401},
		{name: "a foreign Origin", header: map[string]string{"Authorization": "Bearer " + ep.Token, "Origin": "https://evil.example"}, status: 403, body: `Origin "https://evil.example"`},
		{name: "a foreign Origin without a token", header: map[string]string{"Origin": "http://localhost:3000"}, status: 403},
		{name: "a rebinding Host", header: map[string]string{"Authorization": "Bearer " + ep.Token}, host: "evil.example:" + strings.Split(host, ":")[1], status: 403, body: "DNS rebinding"},
		{name: "a Host on another port", header: map[string]string{"Authorization": "Bearer " + ep.Token}, host: "127.0.0.1:1", status: 403},
		{name: "another path", header: map[string]string{"Authorization": "Bearer " + ep.Token}, path: "/other", status: 404},
		{name: "the token", header: map[string]string{"Authorization": "Bearer " + ep.Token}, status: 200},
		{name: "the token by localhost", header: map[string]string{"Authorization": "bearer " + ep.Token}, host: "localhost:" + strings.Split(host, ":")[1], status: 200},
	} {
		path := "/mcp"
		if c.path != "" {
			path = c.path
		}
		req, _ := http.NewRequest("POST", "http://"+host+path, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		if c.host != "" {
			req.Host = c.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(body), c.body) {
			t.Errorf("%s: %d %q, want %d and %q", c.name, resp.StatusCode, body, c.status, c.body)
		}
		if c.status == 200 && !strings.Contains(string(body), `"serverInfo"`) {
			t.Errorf("%s: the initialize answer lacks serverInfo: %s", c.name, body)
		}
	}
	// The bridge's own connection is unharmed by all that.
	if err := b.client.Call(ctx, "bridge/info", nil, nil); err != nil {
		t.Fatal(err)
	}
}

// TestMCPStdioExitLeavesNoProcess: when the agent closes stdin, `oh-bridge
// mcp` exits and the command its terminal was running dies with it.
func TestMCPStdioExitLeavesNoProcess(t *testing.T) {
	ws := t.TempDir()
	cmd := exec.Command(bin, "mcp", "--workspace", ws, "--log-level", "error")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	send := func(v any) {
		b, _ := json.Marshal(v)
		stdin.Write(append(b, '\n'))
	}
	dec := json.NewDecoder(stdout)
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}})
	var resp map[string]any
	if err := dec.Decode(&resp); err != nil {
		t.Fatal(err)
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	pidFile := filepath.Join(ws, "pid")
	send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
		"name": "terminal", "arguments": map[string]any{"command": "sleep 300 & echo $! > " + pidFile + "; wait", "timeout": 600}}})
	pid := waitPID(t, pidFile)
	stdin.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("oh-bridge mcp did not exit after stdin closed")
	}
	assertGone(t, pid)
}
