package agentserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
)

// kinded errors name their kind for the editor's error data.
type kinded interface{ Kind() string }

// TestConnectFailures: each way a first connection fails comes back at
// once, naming the server and what to do, with a kind the editor can act on.
func TestConnectFailures(t *testing.T) {
	b := newBridge(t)
	keyed := sharedServer(t, realserver.Latest)
	// The stand-in: a server of an API version the bridge does not speak.
	future := agentservertest.Start(t, "--version", "2.0.0")
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"title": "Some other API", "version": "1.0.0"}`))
	}))
	defer other.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String()
	ln.Close()

	cases := []struct {
		name  string
		edit  func(o *agentserver.Options)
		kind  string
		words []string
	}{
		{"nothing listens", func(o *agentserver.Options) { o.ServerURL = closed }, "server_unreachable",
			[]string{"cannot reach the OpenHands agent-server at " + closed, "connection refused", "is the agent-server running"}},
		{"not a URL", func(o *agentserver.Options) { o.ServerURL = "localhost:8000" }, "",
			[]string{`"localhost:8000" is not an http(s) URL of an OpenHands agent-server`}},
		{"a 404 server", func(o *agentserver.Options) { o.ServerURL = notFound.URL }, "not_openhands",
			[]string{notFound.URL + " is not an OpenHands agent-server (GET /server_info answered 404)", "V0 servers are retired"}},
		{"another API", func(o *agentserver.Options) { o.ServerURL = other.URL }, "not_openhands",
			[]string{"did not describe an agent-server"}},
		{"a wrong key", func(o *agentserver.Options) { o.ServerURL, o.SessionAPIKey = keyed.URL, "wrong" }, "api_key_rejected",
			[]string{"refused the session API key (HTTP 401)", "OH_SESSION_API_KEYS_0"}},
		{"no key", func(o *agentserver.Options) { o.ServerURL = keyed.URL }, "api_key_rejected",
			[]string{"refused the session API key"}},
		{"a 2.x server", func(o *agentserver.Options) { o.ServerURL = future.URL }, "unsupported_api_version",
			[]string{"speaks API version 2.0.0", "the agent-server API of version 1 (1.x)"}},
		{"an unknown conversation", func(o *agentserver.Options) {
			o.ServerURL, o.SessionAPIKey, o.ConversationID = keyed.URL, keyed.Key, "7f1f0e52-35f3-4f4f-9d6a-0d7a2d0c3c55"
		}, "conversation_not_found",
			[]string{"conversation 7f1f0e52-35f3-4f4f-9d6a-0d7a2d0c3c55 was not found on the agent-server"}},
		{"no LLM", func(o *agentserver.Options) { o.ServerURL, o.SessionAPIKey, o.LLM = keyed.URL, keyed.Key, nil }, "missing_parameter",
			[]string{"needs the agent's LLM", `llm {"model": …, "api_key": …}`}},
		{"an LLM without a model", func(o *agentserver.Options) {
			o.ServerURL, o.SessionAPIKey, o.LLM = keyed.URL, keyed.Key, json.RawMessage(`{"api_key": "x"}`)
		}, "server_error", []string{"POST /api/conversations with HTTP 422: agent.llm: Value error, model must be specified in LLM"}},
		{"an agent that is not an object", func(o *agentserver.Options) {
			o.ServerURL, o.SessionAPIKey, o.Agent = keyed.URL, keyed.Key, json.RawMessage(`["tools"]`)
		}, "invalid_option", []string{"agent must be a JSON object"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRecorder()
			o := connectOptions(b, "", r)
			c.edit(&o)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s, err := agentserver.Connect(ctx, o)
			if err == nil {
				s.Close()
				t.Fatal("connected")
			}
			for _, w := range c.words {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			var k kinded
			if errors.As(err, &k) != (c.kind != "") || (c.kind != "" && k.Kind() != c.kind) {
				t.Errorf("error %q has kind %v; want %q", err, k, c.kind)
			}
		})
	}
}

// TestLostConversationEndsTheSession: a conversation that disappears
// under a live session ends it with a plain error, without retrying for
// ever.
func TestLostConversationEndsTheSession(t *testing.T) {
	b := newBridge(t)
	state := t.TempDir()
	// The stand-in: a server that comes back on its port in a second
	// without the conversation (another --state); the real one takes
	// 10-40 s to start.
	p := agentservertest.Start(t, "--state", state)
	port := p.URL[strings.LastIndex(p.URL, ":")+1:]
	r := newRecorder()
	o := connectOptions(b, p.URL, r)
	s := connect(t, o)
	p.Stop()
	// The server comes back without the conversation.
	agentservertest.Start(t, "--state", t.TempDir(), "--port", port)
	r.await(t, "the session to fail", func(_ []json.RawMessage, st []agentserver.Status) bool {
		return last(st).State == agentserver.StateFailed
	})
	if st := s.Status(); !strings.Contains(st.Error, "conversation "+s.ConversationID()+" was not found") {
		t.Errorf("status error %q", st.Error)
	}
	err := s.SendMessage(context.Background(), "hello")
	if err == nil || !strings.Contains(err.Error(), "was not found") {
		t.Errorf("sending to a lost conversation: %v", err)
	}
}
