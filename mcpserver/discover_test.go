package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

// statusLog records each HTTP request's JSON-RPC method header and status.
type statusLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *statusLog) RoundTrip(r *http.Request) (*http.Response, error) {
	var method string
	if r.Body != nil {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct{ Method string }
		json.Unmarshal(body, &m)
		method = m.Method
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	entry := r.Method + " " + method + " " + resp.Status
	if r.Method == http.MethodPost { // a POST's answer, JSON or one SSE event, ends
		body, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"error"`)) {
			entry += " error"
		}
	}
	l.mu.Lock()
	l.seen = append(l.seen, entry)
	l.mu.Unlock()
	return resp, err
}

// TestCurrentProtocolOverHTTP: a client of the current protocol
// (2026-07-28, as the Go SDK v1.8.0 and Claude Code speak it) asks
// server/discover first. The endpoint answers it, listing the versions
// with sessions, and the client goes on to a session without an error;
// its calls keep their shell.
func TestCurrentProtocolOverHTTP(t *testing.T) {
	srv, _, dir := newServer(t)
	ep := listen(t, srv, 0)
	log := &statusLog{}
	hc := &http.Client{Transport: ohtest.Bearer(ep.Token, log)}
	c, err := mcp.NewClient(&mcp.Implementation{Name: "current", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ep.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	log.mu.Lock()
	first := append([]string(nil), log.seen...)
	log.mu.Unlock()
	if len(first) == 0 || first[0] != "POST server/discover 200 OK" {
		t.Fatalf("the first request was %v, want server/discover answered with a result", first)
	}
	for _, s := range first {
		if !strings.Contains(s, " 2") || strings.HasSuffix(s, " error") {
			t.Fatalf("a request failed while connecting: %v", first)
		}
	}
	if v := c.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("negotiated %q, want the newest version with sessions", v)
	}
	shellKept(t, c, dir)
}

// TestCurrentProtocolOverStdio: on stdio, 2026-07-28 is served as it is,
// and the process's calls share its one shell.
func TestCurrentProtocolOverStdio(t *testing.T) {
	srv, _, dir := newServer(t)
	c := connect(t, srv, "stdio-current")
	if v := c.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q on stdio, want 2026-07-28", v)
	}
	shellKept(t, c, dir)
}

// shellKept checks that a client's calls share one shell: a cd sticks.
func shellKept(t *testing.T, c *mcp.ClientSession, dir string) {
	t.Helper()
	call := func(cmd string) string {
		r, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "terminal", Arguments: map[string]any{"command": cmd}})
		if err != nil {
			t.Fatal(err)
		}
		return text(r)
	}
	call("mkdir -p kept && cd kept")
	if got := call("pwd"); !strings.HasPrefix(got, dir+"/kept\n") {
		t.Fatalf("the shell was not kept: %s", got)
	}
}
