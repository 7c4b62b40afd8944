package dial_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/dial"
	"github.com/oh-bridge/oh-bridge/dial/dialtest"
)

// peer is the stand-in; startPeer keeps the tests short.
type peer = dialtest.Peer

func startPeer(t *testing.T, args ...string) *peer { return dialtest.Start(t, args...) }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func query(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return q
}

func writeJSON(t *testing.T, v any) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "data.json")
	b, _ := json.Marshal(v)
	os.WriteFile(f, b, 0o644)
	return f
}

// nextEvent reads the next event named name, failing on anything else.
func nextEvent(t *testing.T, c *dial.Conn, name string) dial.Event {
	t.Helper()
	select {
	case e, ok := <-c.Events():
		if !ok {
			t.Fatalf("connection ended while waiting for %s: %v", name, c.Err())
		}
		if e.Name != name {
			t.Fatalf("got event %s, want %s", e.Name, name)
		}
		return e
	case <-time.After(15 * time.Second):
		t.Fatalf("no %s event", name)
	}
	return dial.Event{}
}

func eventID(t *testing.T, e dial.Event) int {
	var v struct{ ID int }
	if len(e.Args) == 0 || json.Unmarshal(e.Args[0], &v) != nil {
		t.Fatalf("event %s has no id: %s", e.Name, e.Args)
	}
	return v.ID
}

func TestRefusalIsReportedVerbatim(t *testing.T) {
	p := startPeer(t)
	_, err := dial.Dial(ctxT(t), dial.Options{URL: p.URL})
	var ce *dial.ConnectError
	if !errors.As(err, &ce) || ce.Message != "No conversation_id in query params" {
		t.Fatalf("got %v, want the server's refusal", err)
	}
}

func TestReplayBeforeConnectArrivesInOrder(t *testing.T) {
	var events []map[string]any
	for i := range 6 {
		events = append(events, map[string]any{"id": i, "action": "message", "source": "user", "args": map[string]any{"content": fmt.Sprint("m", i)}})
	}
	p := startPeer(t, "--events", writeJSON(t, map[string]any{"c1": events}), "--connect-delay", "0.3")
	c, err := dial.Dial(ctxT(t), dial.Options{URL: p.URL, Query: query("conversation_id", "c1", "latest_event_id", "2")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.SID() == "" {
		t.Fatal("no sid")
	}
	for want := 3; want <= 5; want++ {
		if got := eventID(t, nextEvent(t, c, "oh_event")); got != want {
			t.Fatalf("replayed event %d, want %d", got, want)
		}
	}
	// A user action comes back as the next event, acknowledged with [] as
	// OpenHands' handler returns None.
	ack, err := c.Call(ctxT(t), "oh_user_action", map[string]any{"action": "message", "args": map[string]any{"content": "hi"}})
	if err != nil || len(ack) != 0 {
		t.Fatalf("ack %s, %v; want []", ack, err)
	}
	if got := eventID(t, nextEvent(t, c, "oh_event")); got != 6 {
		t.Fatalf("new event id %d, want 6", got)
	}
}

func TestSessionAPIKey(t *testing.T) {
	p := startPeer(t, "--session-api-key", "s3cret")
	c, err := dial.Dial(ctxT(t), dial.Options{URL: p.URL, Query: query("conversation_id", "c", "session_api_key", "s3cret")})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	_, err = dial.Dial(ctxT(t), dial.Options{URL: p.URL, Query: query("conversation_id", "c", "session_api_key", "wrong")})
	var ce *dial.ConnectError
	if !errors.As(err, &ce) || ce.Message != "invalid_session_api_key" {
		t.Fatalf("wrong key: %v", err)
	}
	// Without the key OpenHands hangs; the client's deadline turns that
	// into a clear timeout.
	_, err = dial.Dial(ctxT(t), dial.Options{URL: p.URL, Query: query("conversation_id", "c"), ConnectTimeout: 2 * time.Second})
	var te *dial.TimeoutError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "CONNECT reply") {
		t.Fatalf("missing key: %v, want a CONNECT timeout", err)
	}
}

func TestHeartbeatKeepsTheConnection(t *testing.T) {
	p := startPeer(t, "--ping", "0.5")
	c, err := dial.Dial(ctxT(t), dial.Options{URL: p.URL, Query: query("conversation_id", "c")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-c.Done():
		t.Fatalf("connection dropped: %v", c.Err())
	case <-time.After(3 * time.Second): // six ping intervals
	}
	if _, err := c.Call(ctxT(t), "oh_user_action", map[string]any{"action": "message", "args": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
}

func TestServerDeathEndsTheConnection(t *testing.T) {
	p := startPeer(t, "--ping", "0.5")
	c, err := dial.Dial(ctxT(t), dial.Options{URL: p.URL, Query: query("conversation_id", "c")})
	if err != nil {
		t.Fatal(err)
	}
	p.Cmd.Process.Kill()
	select {
	case <-c.Done():
		if c.Err() == nil {
			t.Fatal("Done without a reason")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not notice the server died")
	}
	if _, err := c.Call(ctxT(t), "oh_user_action", map[string]any{}); err == nil {
		t.Fatal("Call on a dead connection succeeded")
	}
}

func TestServerCallIsAcknowledged(t *testing.T) {
	script := writeJSON(t, []map[string]any{{"action": "run", "args": map[string]any{"command": "echo hi"}}})
	p := startPeer(t, "--script", script)
	c, err := dial.Dial(ctxT(t), dial.Options{URL: p.URL, Query: query("conversation_id", "c")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ack, err := c.Call(ctxT(t), "oh_runtime_register", map[string]any{"workspace": "w"})
	var reg struct{ RuntimeID string }
	if err != nil || len(ack) != 1 || json.Unmarshal(ack[0], &reg) != nil || !strings.HasPrefix(reg.RuntimeID, "rt-") {
		t.Fatalf("register: %s %v", ack, err)
	}
	// The action is broadcast as a conversation event first, as in OpenHands.
	if got := nextEvent(t, c, "oh_event"); !strings.Contains(string(got.Args[0]), `"echo hi"`) {
		t.Fatalf("the broadcast action is %s", got.Args[0])
	}
	e := nextEvent(t, c, "oh_runtime_action")
	if !e.WantsAck() {
		t.Fatal("the server's call did not ask for an ack")
	}
	if err := e.Ack(ctxT(t), map[string]any{"observation": "run", "cause": eventID(t, e), "content": "hi"}); err != nil {
		t.Fatal(err)
	}
	got := p.AwaitLine(t, "OBSERVATION ")
	if !strings.Contains(got, `"how": "ack"`) || !strings.Contains(got, `"content": "hi"`) {
		t.Fatalf("the stand-in recorded %s", got)
	}
}

func TestPathPrefix(t *testing.T) {
	p := startPeer(t, "--prefix", "/oh")
	c, err := dial.Dial(ctxT(t), dial.Options{URL: p.URL + "/oh/", Query: query("conversation_id", "c")})
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	_, err = dial.Dial(ctxT(t), dial.Options{URL: p.URL, Query: query("conversation_id", "c")})
	var he *dial.HandshakeError
	if !errors.As(err, &he) || he.Status != http.StatusForbidden {
		t.Fatalf("without the prefix: %v, want HTTP 403 as Starlette answers", err)
	}
}

func TestUnreachableServerIsExplained(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	_, err := dial.Dial(ctxT(t), dial.Options{URL: "http://" + addr})
	var ue *dial.UnreachableError
	want := "cannot reach OpenHands at http://" + addr + ": connection refused — is the OpenHands server running?"
	if !errors.As(err, &ue) || err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
}

func TestNotOpenHands(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := dial.Dial(ctxT(t), dial.Options{URL: srv.URL})
	var he *dial.HandshakeError
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "is this the OpenHands server's URL?") {
		t.Fatalf("got %v", err)
	}
	if _, err := dial.Dial(ctxT(t), dial.Options{URL: "ftp://x"}); err == nil || !strings.Contains(err.Error(), "use http:// or https://") {
		t.Fatalf("bad scheme: %v", err)
	}
}

func TestREST(t *testing.T) {
	p := startPeer(t, "--session-api-key", "k", "--prefix", "/oh")
	r := &dial.REST{BaseURL: p.URL + "/oh", SessionAPIKey: "k", Header: http.Header{"Cookie": {"a=b"}}}
	id, err := r.CreateConversation(ctxT(t), "fix the tests")
	if err != nil || len(id) != 32 {
		t.Fatalf("create: %q %v", id, err)
	}
	conv, err := r.GetConversation(ctxT(t), id)
	if err != nil || conv.ConversationID != id || conv.Status != "RUNNING" {
		t.Fatalf("get: %+v %v", conv, err)
	}
	// The task arrives as the conversation's first event.
	c, err := dial.Dial(ctxT(t), dial.Options{URL: p.URL + "/oh", Query: query("conversation_id", id, "session_api_key", "k")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if e := nextEvent(t, c, "oh_event"); !strings.Contains(string(e.Args[0]), "fix the tests") {
		t.Fatalf("first event %s", e.Args[0])
	}

	_, err = r.GetConversation(ctxT(t), "nope")
	var nf *dial.NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "conversation nope was not found") {
		t.Fatalf("unknown conversation: %v", err)
	}
	bad := &dial.REST{BaseURL: p.URL + "/oh", SessionAPIKey: "wrong"}
	_, err = bad.CreateConversation(ctxT(t), "")
	var ke *dial.APIKeyError
	if !errors.As(err, &ke) || ke.Status != http.StatusUnauthorized {
		t.Fatalf("wrong key: %v", err)
	}
	noPrefix := &dial.REST{BaseURL: p.URL, SessionAPIKey: "k"}
	if _, err := noPrefix.GetConversation(ctxT(t), id); err == nil || !strings.Contains(err.Error(), "path prefix") {
		t.Fatalf("without the prefix: %v", err)
	}
}
