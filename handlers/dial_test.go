package handlers_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/handlers"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/rpc"
)

func TestConnectFailuresInPlainWords(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	_, client := serve(t, handlers.Config{Roots: []string{t.TempDir()}})
	client.Initialize(ctxT(t), nil)

	err := client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": "http://" + addr, "llm": map[string]any{"model": "m"}}, nil)
	var e *rpc.Error
	want := "cannot reach the OpenHands agent-server at http://" + addr + ": connection refused: is the agent-server running (python -m openhands.agent_server, port 8000 by default)?"
	if !errors.As(err, &e) || e.Code != 1019 || e.Message != want || !strings.Contains(string(*e.Data), `"kind":"server_unreachable"`) {
		t.Fatalf("got %v, want 1019 %q", err, want)
	}
	if err := client.Call(ctxT(t), "openhands/connect", map[string]any{}, nil); !errors.As(err, &e) || e.Code != rpc.CodeInvalidParams {
		t.Fatalf("no serverUrl: %v", err)
	}
	if err := client.Call(ctxT(t), "openhands/send_message", map[string]any{"text": "hi"}, nil); !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(e.Message, "run openhands/connect first") {
		t.Fatalf("send without a connection: %v", err)
	}

	p := realserver.Shared(t, realserver.Latest)
	err = client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": p.URL, "sessionApiKey": p.Key, "conversationId": "7f1f0e52-35f3-4f4f-9d6a-0d7a2d0c3c55"}, nil)
	if !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(e.Message, "conversation 7f1f0e52-35f3-4f4f-9d6a-0d7a2d0c3c55 was not found") {
		t.Fatalf("unknown conversation: %v", err)
	}
}

// TestConnectV0IsRetired: protocol "v0" answers why it is gone and what
// to use instead, and the connection serves on.
func TestConnectV0IsRetired(t *testing.T) {
	_, client := serve(t, handlers.Config{Roots: []string{t.TempDir()}})
	client.Initialize(ctxT(t), nil)
	var e *rpc.Error
	err := client.Call(ctxT(t), "openhands/connect", map[string]any{"protocol": "v0", "serverUrl": "http://127.0.0.1:3000"}, nil)
	if !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(string(*e.Data), `"kind":"protocol_retired"`) {
		t.Fatalf("protocol v0: got %v, want 1019 protocol_retired", err)
	}
	for _, words := range []string{`protocol "v0" is retired`, "April 2026", "agent-server", "oh-bridge mcp", "openhands/execute_action"} {
		if !strings.Contains(e.Message, words) {
			t.Errorf("the retirement error does not say %q: %s", words, e.Message)
		}
	}
	var st map[string]any
	if err := client.Call(ctxT(t), "openhands/status", nil, &st); err != nil || st["state"] != "disconnected" {
		t.Fatalf("after the refusal the status is %v (%v); want disconnected", st, err)
	}
}

// TestConnectV1Failures: the agent-server dial's failures keep their
// words, with a kind and the facts the editor needs in error.data.
func TestConnectV1Failures(t *testing.T) {
	// The stand-in: a server of an API version the bridge does not speak.
	future := agentservertest.Start(t, "--version", "2.0.0")
	current := realserver.Shared(t, realserver.Latest)
	_, client := serve(t, handlers.Config{Roots: []string{t.TempDir()}})
	client.Initialize(ctxT(t), nil)
	var e *rpc.Error
	err := client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": future.URL, "llm": map[string]any{"model": "m"}}, nil)
	if !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(e.Message, "speaks API version 2.0.0") ||
		!strings.Contains(string(*e.Data), `"kind":"unsupported_api_version"`) || !strings.Contains(string(*e.Data), `"serverVersion":"2.0.0"`) {
		t.Fatalf("a 2.x server: %v", err)
	}
	err = client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": current.URL, "sessionApiKey": current.Key}, nil)
	if !errors.As(err, &e) || e.Code != 1017 || !strings.Contains(e.Message, "needs the agent's LLM") || !strings.Contains(string(*e.Data), `"param":"llm"`) {
		t.Fatalf("no LLM: %v", err)
	}
	err = client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": current.URL, "sessionApiKey": current.Key, "confirmationPolicy": "Sometimes"}, nil)
	if !errors.As(err, &e) || e.Code != rpc.CodeInvalidParams || !strings.Contains(e.Message, "AlwaysConfirm") {
		t.Fatalf("a bad policy: %v", err)
	}
	err = client.Call(ctxT(t), "openhands/pause", map[string]any{}, nil)
	if !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(e.Message, "run openhands/connect first") {
		t.Fatalf("pause without a connection: %v", err)
	}
}

// TestListConversations: openhands/list_conversations answers this
// workspace's conversations on the agent-server, the latest active first,
// and none of another directory's; its failures keep their kinds.
func TestListConversations(t *testing.T) {
	p := realserver.Shared(t, realserver.Latest)
	root := t.TempDir()
	_, client := serve(t, handlers.Config{Roots: []string{root}})
	client.Initialize(ctxT(t), nil)

	start := func(dir string) string {
		body, _ := json.Marshal(map[string]any{
			"agent":     map[string]any{"kind": "Agent", "llm": map[string]any{"model": "openai/unused"}, "tools": []any{}},
			"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": dir},
		})
		req, _ := http.NewRequest(http.MethodPost, p.URL+"/api/conversations", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Session-API-Key", p.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var info struct {
			ID string `json:"id"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("starting a conversation: HTTP %d, %v", resp.StatusCode, err)
		}
		return info.ID
	}
	first := start(root)
	start(t.TempDir())
	second := start(root + "/")

	var res struct {
		Conversations []struct {
			ConversationID, WorkingDir, UpdatedAt string
		}
		Next string
	}
	if err := client.Call(ctxT(t), "openhands/list_conversations", map[string]any{"serverUrl": p.URL, "sessionApiKey": p.Key}, &res); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range res.Conversations {
		if c.WorkingDir != root || c.UpdatedAt == "" {
			t.Errorf("listed %+v: want working dir %s and a time", c, root)
		}
		ids = append(ids, c.ConversationID)
	}
	if strings.Join(ids, ",") != second+","+first || res.Next != "" {
		t.Fatalf("listed %v (next %q); want [%s %s], the latest first", ids, res.Next, second, first)
	}

	var e *rpc.Error
	if err := client.Call(ctxT(t), "openhands/list_conversations", map[string]any{"serverUrl": "localhost:8000"}, nil); !errors.As(err, &e) || e.Code != rpc.CodeInvalidParams {
		t.Fatalf("a URL without a scheme: %v", err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	err := client.Call(ctxT(t), "openhands/list_conversations", map[string]any{"serverUrl": "http://" + addr}, nil)
	if !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(string(*e.Data), `"kind":"server_unreachable"`) {
		t.Fatalf("no server: got %v, want 1019 server_unreachable", err)
	}
	// The connection serves on.
	var st map[string]any
	if err := client.Call(ctxT(t), "openhands/status", nil, &st); err != nil || st["state"] != "disconnected" {
		t.Fatalf("status after the listings: %v (%v)", st, err)
	}
}
