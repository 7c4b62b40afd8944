package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/mcpserver"
)

type filler byte

func (b filler) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestOverLimitLineIsAnsweredUnderItsID: on stdio, a line a MiB over
// MaxMessageSize is answered -32600 with kind message_too_large, its size
// and the limit, under its id when its first bytes name it (the SDK's
// own stdio, and this face before, answered with id null); one whose id
// comes after its params is answered with id null; the next request is
// answered. The lines are streamed, never held by the test.
func TestOverLimitLineIsAnsweredUnderItsID(t *testing.T) {
	srv, _, _ := newServer(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.ServeStdio(ctx, mcpserver.StdioTransport(inR, outW))
	t.Cleanup(func() { inW.Close() })
	next := ohtest.JSONMessages(t, outR, "the face", time.Minute)
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	next()
	io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")

	size := int64(mcpserver.MaxMessageSize + 1<<20)
	for i, c := range []struct{ head, tail, id string }{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"file_editor","arguments":{"command":"create","path":"/x","file_text":"`, `"}}}`, "7"},
		{`{"jsonrpc":"2.0","method":"ping","params":{"s":"`, `"},"id":8}`, "<nil>"},
	} {
		go func() {
			io.WriteString(inW, c.head)
			io.Copy(inW, io.LimitReader(filler('y'), size-int64(len(c.head)+len(c.tail))))
			io.WriteString(inW, c.tail+"\n")
		}()
		m := next()
		e, _ := m["error"].(map[string]any)
		data, _ := e["data"].(map[string]any)
		want := fmt.Sprintf("line %d of the input: a message of %d bytes was skipped: messages are limited to %d bytes (16 MiB); send smaller ones", i+3, size, mcpserver.MaxMessageSize)
		if fmt.Sprint(m["id"]) != c.id || e["code"] != -32600.0 || e["message"] != want ||
			data["kind"] != "message_too_large" || data["size"] != float64(size) || data["limit"] != float64(mcpserver.MaxMessageSize) {
			t.Fatalf("answered %v; want id %s, -32600, %q and data {kind message_too_large, size, limit}", m, c.id, want)
		}
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":9,"method":"ping"}`+"\n")
	if m := next(); m["id"] != 9.0 || m["error"] != nil {
		t.Fatalf("the next request: %v", m)
	}
}

// listenWith opens an endpoint whose bodies must arrive within bodyTimeout.
func listenWith(t *testing.T, srv *mcpserver.Server, bodyTimeout time.Duration) *mcpserver.Endpoint {
	t.Helper()
	ep, err := srv.ListenHTTP(mcpserver.HTTPOptions{BodyTimeout: bodyTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close(context.Background()) })
	return ep
}

// TestTricklingBodyIsCutOff: a client that sends its headers, then its
// body a byte every 100 ms, is answered 408 (or its connection closed)
// once the body timeout has passed (401 without the token: net/http reads
// what is left of a small body before it answers, and that read is under
// the deadline too), and the endpoint serves another client meanwhile. Before, nothing cut it
// off: it held its connection and a goroutine for as long as it liked.
func TestTricklingBodyIsCutOff(t *testing.T) {
	srv, _, _ := newServer(t)
	const bodyTimeout = 500 * time.Millisecond
	ep := listenWith(t, srv, bodyTimeout)
	for _, auth := range []string{"Bearer " + ep.Token, ""} {
		t.Run(fmt.Sprintf("token %v", auth != ""), func(t *testing.T) {
			conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ep.Port))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"slow","version":"1"}}}`
			header := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n", ep.Port, len(body))
			if auth != "" {
				header += "Authorization: " + auth + "\r\n"
			}
			begin := time.Now()
			io.WriteString(conn, header+"\r\n")
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for i := 0; i < len(body); i++ {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
					}
					if _, err := conn.Write([]byte{body[i]}); err != nil {
						return
					}
				}
			}()
			// Another client is served while the body trickles.
			other := &rawClient{t: t, ep: ep}
			other.initialize("other")
			if resp, out := other.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"terminal","arguments":{"command":"echo served"}}}`); resp.StatusCode != 200 || !strings.Contains(out, "served") {
				t.Fatalf("another client's call: %d %s", resp.StatusCode, out)
			}
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			took := time.Since(begin)
			switch {
			case isTimeout(err):
				t.Fatalf("the trickling client was not cut off in %v", took.Round(time.Millisecond))
			case err == nil && auth != "" && resp.StatusCode != http.StatusRequestTimeout:
				t.Fatalf("the trickling client got %d after %v, want 408", resp.StatusCode, took.Round(time.Millisecond))
			case err == nil && auth == "" && resp.StatusCode != http.StatusUnauthorized:
				t.Fatalf("the trickling client without a token got %d after %v, want 401", resp.StatusCode, took.Round(time.Millisecond))
			case took < bodyTimeout:
				t.Fatalf("cut off after %v, before the body timeout of %v", took, bodyTimeout)
			}
			t.Logf("cut off after %v: %v", took.Round(time.Millisecond), statusOf(resp, err))
		})
	}
}

func statusOf(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	b, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%s %s", resp.Status, strings.TrimSpace(string(b)))
}

// TestStreamsOutliveTheBodyDeadline: the deadline is on bodies only. A
// call whose answer streams for seconds, and a session's event stream
// (a GET held open), both go on well past it; a ReadTimeout on the
// server, or a deadline left on the connection, would end them, since
// net/http's read in the background then fails and cancels the request.
func TestStreamsOutliveTheBodyDeadline(t *testing.T) {
	srv, _, _ := newServer(t)
	const bodyTimeout = 300 * time.Millisecond
	ep := listenWith(t, srv, bodyTimeout)
	c := &rawClient{t: t, ep: ep}
	c.initialize("long")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ep.URL, nil)
	req.Header.Set("Authorization", "Bearer "+ep.Token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	streamEnded := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		streamEnded <- err
	}()
	begin := time.Now()
	r, out := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"terminal","arguments":{"command":"sleep 2; echo slept"}}}`)
	took := time.Since(begin)
	if r.StatusCode != 200 || !strings.Contains(out, `slept\n[The command completed with exit code 0.]`) {
		t.Fatalf("the call that answers after 2 s, with a body timeout of %v: %d %s", bodyTimeout, r.StatusCode, out)
	}
	if took < 2*time.Second {
		t.Fatalf("the call answered after %v; the test needs it to outlast the body timeout", took)
	}
	select {
	case err := <-streamEnded:
		t.Fatalf("the event stream ended within %v (%v); it must stay open", time.Since(begin), err)
	default:
	}
}

// TestBodyBounds: a body of 6 MiB (a file_editor create of a 6 MiB
// file) is taken, where the SDK's own limit of 4 MiB refused it; a body over MaxMessageSize is
// refused 413 with a message saying the limit, and the endpoint serves
// on.
func TestBodyBounds(t *testing.T) {
	srv, _, dir := newServer(t)
	ep := listenWith(t, srv, 0)
	c := &rawClient{t: t, ep: ep}
	c.initialize("big")
	path := filepath.Join(dir, "big.txt")
	text := strings.Repeat("0123456789abcde\n", 6<<20/16)
	args, _ := json.Marshal(map[string]any{"command": "create", "path": path, "file_text": text})
	resp, out := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"file_editor","arguments":` + string(args) + `}}`)
	if resp.StatusCode != 200 || !strings.Contains(out, "File created successfully") {
		t.Fatalf("a 6 MiB create: %d %.300s", resp.StatusCode, out)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != text {
		t.Fatalf("the 6 MiB file: %d bytes, %v", len(got), err)
	}
	over := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"s":"` + strings.Repeat("y", mcpserver.MaxMessageSize) + `"}}`
	resp, out = c.post(over)
	want := fmt.Sprintf("a request's body over %d bytes (16 MiB): refused; MCP messages are limited to 16 MiB here, send smaller ones", mcpserver.MaxMessageSize)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || strings.TrimSpace(out) != want {
		t.Fatalf("a body over the limit: %d %q, want 413 %q", resp.StatusCode, out, want)
	}
	if resp, out := c.post(`{"jsonrpc":"2.0","id":4,"method":"ping"}`); resp.StatusCode != 200 || !strings.Contains(out, `"id":4`) {
		t.Fatalf("the next request: %d %s", resp.StatusCode, out)
	}
}
