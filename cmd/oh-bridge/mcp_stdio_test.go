//go:build unix

package main_test

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

// TestMCPStdioSurvivesBadLines: `oh-bridge mcp` answers each line that is
// not a JSON-RPC message with a JSON-RPC error and goes on serving; a
// call running meanwhile is answered, in the same shell.
func TestMCPStdioSurvivesBadLines(t *testing.T) {
	stdin, stdout := startMCPProcess(t, t.TempDir())
	next := ohtest.JSONMessages(t, stdout, "oh-bridge mcp", 20*time.Second)
	send := func(line string) { stdin.Write([]byte(line + "\n")) }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	next()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"terminal","arguments":{"command":"export KEPT=yes; echo begun; sleep 1; echo ended"}}}`)
	bad := []struct {
		line string
		code float64
	}{
		{`{not json}`, -32700},
		{`[]`, -32600},
		{`null`, -32600},
		{`{"jsonrpc":"2.0","id":{"an":"object"},"method":"ping"}`, -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}", -32700},
	}
	for _, b := range bad {
		send(b.line)
	}
	var errs []map[string]any
	var call map[string]any
	for call == nil || len(errs) < len(bad) {
		m := next()
		if m["id"] == nil {
			errs = append(errs, m)
		} else if m["id"] == 2.0 {
			call = m
		}
	}
	for i, e := range errs {
		er, _ := e["error"].(map[string]any)
		if er == nil || er["code"] != bad[i].code || !strings.Contains(er["message"].(string), "send one JSON-RPC 2.0 message per line") {
			t.Errorf("line %q answered %v, want error %v naming the fix", bad[i].line, e, bad[i].code)
		}
	}
	if text := toolText(call); !strings.HasPrefix(text, "begun\nended\n[The command completed with exit code 0.]") {
		t.Fatalf("the call running while bad lines came answered %v", call)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"terminal","arguments":{"command":"echo $KEPT"}}}`)
	if text := toolText(next()); !strings.HasPrefix(text, "yes\n") {
		t.Fatalf("the shell did not survive: %q", text)
	}
}

func toolText(m map[string]any) string {
	r, _ := m["result"].(map[string]any)
	content, _ := r["content"].([]any)
	var b strings.Builder
	for _, c := range content {
		if c, ok := c.(map[string]any); ok {
			s, _ := c["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// TestMCPStdioCancelledGetsNoAnswer: a request the client cancelled gets
// no answer (MCP: the receiver should not respond), and the next call runs.
func TestMCPStdioCancelledGetsNoAnswer(t *testing.T) {
	stdin, stdout := startMCPProcess(t, t.TempDir())
	dec := json.NewDecoder(stdout)
	var got []map[string]any
	until := func(id float64) map[string]any {
		t.Helper()
		for {
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				t.Fatalf("reading: %v (so far %v)", err, got)
			}
			got = append(got, m)
			if m["id"] == id {
				return m
			}
		}
	}
	send := func(line string) { stdin.Write([]byte(line + "\n")) }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	until(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"terminal","arguments":{"command":"echo started; sleep 30","timeout":60}}}`)
	// The call is running once a ping round trip shows the server busy
	// with it only; cancel it then.
	send(`{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	until(8)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"gave up"}}`)
	send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"terminal","arguments":{"command":"echo next"}}}`)
	if text := toolText(until(9)); !strings.HasPrefix(text, "next\n[The command completed with exit code 0.]") {
		t.Fatalf("the call after the cancel answered %q", text)
	}
	send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	until(10)
	for _, m := range got {
		if m["id"] == 7.0 {
			t.Fatalf("the cancelled request was answered: %v", m)
		}
	}
}

// startMCPProcess starts `oh-bridge mcp` on workspace ws, killed at the
// test's end.
func startMCPProcess(t *testing.T, ws string) (io.WriteCloser, io.Reader) {
	t.Helper()
	cmd := exec.Command(bin, "mcp", "--workspace", ws, "--log-level", "error")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return stdin, stdout
}
