package facekit_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/conversation"
	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/session"
)

// newSession is a real session over a directory of its own, with o.
func newSession(t *testing.T, o session.Options) *session.Session {
	t.Helper()
	o.Roots = session.Candidates("the test", t.TempDir())
	sess, err := session.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(context.Background()) })
	return sess
}

func newMCP(t *testing.T) *facekit.MCP {
	m := &facekit.MCP{Start: mcpserver.Starter(mcpserver.Options{Version: "test"}, nil)}
	t.Cleanup(func() { m.Stop(context.Background()) })
	return m
}

// answers says how the endpoint at ep.URL answers a request with token:
// its HTTP status, or 0 when nothing listens there.
func answers(t *testing.T, url, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			return 0
		}
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// freePort is a port on 127.0.0.1 nothing listens on.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// show is an endpoint in a failure's words, its token left out.
func show(ep conversation.Endpoint) string {
	return fmt.Sprintf("%s (Close set: %v)", ep.URL, ep.Close != nil)
}

func kind(err error) string {
	var k interface{ Kind() string }
	if errors.As(err, &k) {
		return k.Kind()
	}
	return ""
}

// TestSharedEndpoint: the editor's endpoint is started once, by mcp/start
// or a new conversation, and stays when a conversation ends (the link
// gets it without Close); an attached conversation's agent gets it when
// it is where the agent reaches its tools, an endpoint of its own there
// otherwise (closed with the link), and the shared one there when none
// runs.
func TestSharedEndpoint(t *testing.T) {
	ctx := context.Background()
	sess := newSession(t, session.Options{})
	m := newMCP(t)
	forConv := m.Shared(sess)

	ep, err := forConv(ctx, conversation.Listen{})
	if err != nil {
		t.Fatal(err)
	}
	if ep.Close != nil {
		t.Error("a new conversation's link got the shared endpoint with Close: it would close it when the conversation ends")
	}
	running, ok := m.Running()
	if !ok || running.URL != ep.URL || running.Token != ep.Token || running.Close == nil || running.Sessions == nil {
		t.Fatalf("running: %s, %v; the conversation got %s", show(running), ok, show(ep))
	}
	if code := answers(t, ep.URL, ep.Token); code == 0 || code == http.StatusUnauthorized {
		t.Fatalf("a ping with the token: HTTP %d; want it past the guard", code)
	}
	if code := answers(t, ep.URL, "wrong"); code != http.StatusUnauthorized {
		t.Errorf("a ping with a wrong token: HTTP %d; want 401 (the guard)", code)
	}
	again, err := m.Serve(sess, 0, nil)
	if err != nil || again.URL != ep.URL {
		t.Errorf("mcp/start again: %s, %v; want the running one", show(again), err)
	}
	if _, err := m.Serve(sess, freePort(t), nil); kind(err) != "mcp_unavailable" || !strings.Contains(err.Error(), "call mcp/stop first") {
		t.Errorf("mcp/start on another port: %v (kind %q)", err, kind(err))
	}

	same, err := forConv(ctx, conversation.Listen{Port: ep.Port(), Token: ep.Token})
	if err != nil || same.URL != ep.URL || same.Close != nil {
		t.Errorf("attached where the shared endpoint is: %s, %v; want it, without Close", show(same), err)
	}
	port := freePort(t)
	own, err := forConv(ctx, conversation.Listen{Port: port, Token: "an-earlier-token"})
	if err != nil {
		t.Fatal(err)
	}
	if own.Port() != port || own.Token != "an-earlier-token" || own.Close == nil {
		t.Fatalf("attached elsewhere: %s; want an endpoint of its own at port %d, with Close", show(own), port)
	}
	if running, _ := m.Running(); running.URL != ep.URL {
		t.Errorf("the shared endpoint moved to %s", running.URL)
	}
	own.Close(ctx)
	if code := answers(t, own.URL, own.Token); code != 0 {
		t.Errorf("the conversation's own endpoint answers HTTP %d once closed", code)
	}

	m.Stop(ctx)
	if _, ok := m.Running(); ok {
		t.Error("an endpoint runs after Stop")
	}
	if code := answers(t, ep.URL, ep.Token); code != 0 {
		t.Errorf("the shared endpoint answers HTTP %d after Stop", code)
	}
	port = freePort(t)
	there, err := forConv(ctx, conversation.Listen{Port: port, Token: "an-earlier-token"})
	if err != nil {
		t.Fatal(err)
	}
	if running, ok := m.Running(); !ok || running.Port() != port || there.Close != nil {
		t.Errorf("attached with none running: %s; running %s, %v; want the shared endpoint started there", show(there), show(running), ok)
	}
}

// TestPrivateEndpoints: each ACP session's conversation has an endpoint
// of its own, closed with its link; none is shared.
func TestPrivateEndpoints(t *testing.T) {
	ctx := context.Background()
	m := newMCP(t)
	forConv := m.Private(newSession(t, session.Options{}))
	a, err := forConv(ctx, conversation.Listen{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := forConv(ctx, conversation.Listen{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	if a.URL == b.URL || a.Token == b.Token || a.Close == nil || b.Close == nil {
		t.Fatalf("two conversations' endpoints: %s and %s (the same token: %v)", show(a), show(b), a.Token == b.Token)
	}
	if _, ok := m.Running(); ok {
		t.Error("a private endpoint is the shared one")
	}
	a.Close(ctx)
	if code := answers(t, a.URL, a.Token); code != 0 {
		t.Errorf("closed, the endpoint answers HTTP %d", code)
	}
	if code := answers(t, b.URL, b.Token); code == 0 || code == http.StatusUnauthorized {
		t.Errorf("the other endpoint answers HTTP %d", code)
	}
}

// TestNoMCP: a build without MCP says so, with the kind the faces map.
func TestNoMCP(t *testing.T) {
	ctx := context.Background()
	m := &facekit.MCP{}
	sess := newSession(t, session.Options{})
	_, err1 := m.Serve(sess, 0, nil)
	_, err2 := m.Shared(sess)(ctx, conversation.Listen{Port: 1, Token: "t"})
	_, err3 := m.Private(sess)(ctx, conversation.Listen{})
	for _, err := range []error{err1, err2, err3} {
		if kind(err) != "mcp_unavailable" || !strings.Contains(err.Error(), "without MCP") {
			t.Errorf("%v (kind %q)", err, kind(err))
		}
	}
}
