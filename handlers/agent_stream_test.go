package handlers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/handlers"
)

// TestAgentShellIsStreamed checks that the OpenHands agent's own shell is
// mirrored as terminal "oh-agent" when the client streams terminals, so an
// editor can show the agent's commands live.
func TestAgentShellIsStreamed(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", root) // no slow user prompt hooks
	_, client := serve(t, handlers.Config{Roots: []string{root}})
	if _, err := client.Initialize(ctxT(t), map[string]any{"capabilities": map[string]any{"terminal": map[string]any{"streaming": true}}}); err != nil {
		t.Fatal(err)
	}
	action := map[string]any{"action": "run", "id": 7, "args": map[string]any{"command": "echo agent-$((6*7))", "blocking": true}, "timeout": 30}
	if err := client.Call(ctxT(t), "openhands/execute_action", map[string]any{"action": action}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AwaitNotification(ctxT(t), "terminal/did_output", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"terminalId":"oh-agent"`) && strings.Contains(string(p), "agent-42")
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AwaitNotification(ctxT(t), "terminal/did_change_state", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"terminalId":"oh-agent"`) && strings.Contains(string(p), `"state":"idle"`)
	}); err != nil {
		t.Fatal(err)
	}
}

// TestAgentShellIsNotStreamedWithoutTheCapability keeps notifications off
// for clients that did not ask for them.
func TestAgentShellIsNotStreamedWithoutTheCapability(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", root)
	_, client := serve(t, handlers.Config{Roots: []string{root}})
	client.Initialize(ctxT(t), nil)
	action := map[string]any{"action": "run", "id": 1, "args": map[string]any{"command": "echo quiet", "blocking": true}, "timeout": 30}
	if err := client.Call(ctxT(t), "openhands/execute_action", map[string]any{"action": action}, nil); err != nil {
		t.Fatal(err)
	}
	// bridge/info is answered after any notification sent before it.
	client.Call(ctxT(t), "bridge/info", nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	if m, err := client.AwaitNotification(ctx, "terminal/did_output", nil); err == nil {
		t.Fatalf("unexpected streaming without the capability: %s", m.Params)
	}
}
