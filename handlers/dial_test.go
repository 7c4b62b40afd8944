package handlers_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/handlers"
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

	p := agentservertest.Start(t)
	err = client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": p.URL, "conversationId": "7f1f0e52-35f3-4f4f-9d6a-0d7a2d0c3c55"}, nil)
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
	future := agentservertest.Start(t, "--version", "2.0.0")
	current := agentservertest.Start(t)
	_, client := serve(t, handlers.Config{Roots: []string{t.TempDir()}})
	client.Initialize(ctxT(t), nil)
	var e *rpc.Error
	err := client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": future.URL, "llm": map[string]any{"model": "m"}}, nil)
	if !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(e.Message, "speaks API version 2.0.0") ||
		!strings.Contains(string(*e.Data), `"kind":"unsupported_api_version"`) || !strings.Contains(string(*e.Data), `"serverVersion":"2.0.0"`) {
		t.Fatalf("a 2.x server: %v", err)
	}
	err = client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": current.URL}, nil)
	if !errors.As(err, &e) || e.Code != 1017 || !strings.Contains(e.Message, "needs the agent's LLM") || !strings.Contains(string(*e.Data), `"param":"llm"`) {
		t.Fatalf("no LLM: %v", err)
	}
	err = client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": current.URL, "confirmationPolicy": "Sometimes"}, nil)
	if !errors.As(err, &e) || e.Code != rpc.CodeInvalidParams || !strings.Contains(e.Message, "AlwaysConfirm") {
		t.Fatalf("a bad policy: %v", err)
	}
	err = client.Call(ctxT(t), "openhands/pause", map[string]any{}, nil)
	if !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(e.Message, "run openhands/connect first") {
		t.Fatalf("pause without a connection: %v", err)
	}
}
