package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/mcpserver"
)

// rawClient speaks Streamable HTTP by hand, as an agent does, so a test
// can drop its event stream the way a process that exits does.
type rawClient struct {
	t       *testing.T
	ep      *mcpserver.Endpoint
	session string
}

func (c *rawClient) post(body string) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.ep.URL, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.ep.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func (c *rawClient) initialize(name string) {
	c.t.Helper()
	resp, body := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`)
	if resp.StatusCode != 200 {
		c.t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// stream opens the session's event stream; the returned function drops
// it, as the end of the client's process does.
func (c *rawClient) stream() (drop func()) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.ep.URL, nil)
	req.Header.Set("Authorization", "Bearer "+c.ep.Token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		c.t.Fatalf("GET stream: %v %v", resp, err)
	}
	return func() { cancel(); resp.Body.Close() }
}

func listen(t *testing.T, srv *mcpserver.Server, grace time.Duration) *mcpserver.Endpoint {
	t.Helper()
	ep, err := srv.ListenHTTP(mcpserver.HTTPOptions{StreamGoneGrace: grace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close(context.Background()) })
	return ep
}

// TestGoneClientEndsItsSession: a client that held its event stream and
// exits without DELETE (Claude Code, Gemini CLI) leaves no session and no
// shell once the grace has passed; one that keeps its stream keeps its
// session however long it is quiet.
func TestGoneClientEndsItsSession(t *testing.T) {
	srv, sess, _ := newServer(t)
	ep := listen(t, srv, 300*time.Millisecond)
	gone, stays := &rawClient{t: t, ep: ep}, &rawClient{t: t, ep: ep}
	gone.initialize("gone")
	stays.initialize("stays")
	dropGone := gone.stream()
	dropStays := stays.stream()
	defer dropStays()
	for _, c := range []*rawClient{gone, stays} {
		if resp, body := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"terminal","arguments":{"command":"echo hi"}}}`); resp.StatusCode != 200 || !strings.Contains(body, "hi") {
			t.Fatalf("call: %d %s", resp.StatusCode, body)
		}
	}
	if n := len(sess.Agents()); n != 2 {
		t.Fatalf("%d agents, want 2", n)
	}
	dropGone()
	ohtest.WaitWithin(t, 10*time.Second, "the gone client's session to end", func() bool { return srv.Sessions() == 1 && len(sess.Agents()) == 1 })
	if a := sess.Agents(); a[0].Name != "stays 1" {
		t.Fatalf("the wrong session ended: %+v left", a)
	}
	// The other stays: its stream is open, and it has been quiet longer
	// than the grace too (since before the first was dropped).
}

// TestSessionCap: past MaxSessions, initialize is refused with a JSON-RPC
// error that says what to do, and the endpoint serves on.
func TestSessionCap(t *testing.T) {
	srv, _, _ := newServer(t)
	ep := listen(t, srv, 0)
	for i := range mcpserver.MaxSessions {
		(&rawClient{t: t, ep: ep}).initialize(fmt.Sprint("agent", i))
	}
	c := &rawClient{t: t, ep: ep}
	resp, body := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"one too many","version":"1"}}}`)
	var msg struct {
		Error struct{ Message string }
	}
	json.Unmarshal([]byte(body), &msg)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(msg.Error.Message, fmt.Sprintf("already serves %d MCP sessions", mcpserver.MaxSessions)) {
		t.Fatalf("session %d: %d %s", mcpserver.MaxSessions+1, resp.StatusCode, body)
	}
	if srv.Sessions() != mcpserver.MaxSessions {
		t.Fatalf("%d sessions, want %d", srv.Sessions(), mcpserver.MaxSessions)
	}
}

// TestIdleConnectionsAreCapped: keep-alive connections left idle after a
// refused request are not held without bound: past the cap, the oldest
// are closed.
func TestIdleConnectionsAreCapped(t *testing.T) {
	srv, _, _ := newServer(t)
	ep := listen(t, srv, 0)
	const n = 100
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ep.Port))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 0\r\n\r\n", ep.Port)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("connection %d: %v %v", i, resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		conns[i] = c
	}
	// A connection the server closed reads EOF at once; an open one
	// times out.
	var mu sync.Mutex
	closed := 0
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetReadDeadline(time.Now().Add(time.Second))
			if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
				mu.Lock()
				closed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if closed < n-64 {
		t.Fatalf("%d of %d idle connections closed, want at least %d", closed, n, n-64)
	}
}

// isTimeout says whether err is a read timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
