package main_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenHandsGoldenThroughVSCodeJSONRPC replays every fixtures/openhands
// case through the compiled binary with the vscode-jsonrpc client.
func TestOpenHandsGoldenThroughVSCodeJSONRPC(t *testing.T) {
	node, dir := nodeClients(t, "vscode-jsonrpc")
	fixtures := filepath.Join(repoRoot(t), "fixtures", "openhands")
	runClient(t, exec.Command(node, filepath.Join(dir, "openhands.cjs"), bin, fixtures, t.TempDir()))
}

// TestOpenHandsExecuteAction checks the method's framing with the Go test
// client: the observation dict's key order and the agent shell's lazy start.
func TestOpenHandsExecuteAction(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("HOME", t.TempDir()) // the agent shell reads ~/.bashrc
	b := startBridge(t, "--stdio", "--workspace", ws, "--log-level", "error")
	ctx := ctxT(t)
	res, err := b.client.Initialize(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	caps, _ := json.Marshal(res)
	if !strings.Contains(string(caps), `"openhands":{"actions":{`) {
		t.Errorf("initialize capabilities lack openhands.actions: %s", caps)
	}
	var raw json.RawMessage
	action := map[string]any{"action": map[string]any{"id": 7, "action": "run", "args": map[string]any{"command": "echo hi"}}}
	if err := b.client.Call(ctx, "openhands/execute_action", action, &raw); err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	keys := []string{`"id"`, `"timestamp"`, `"source"`, `"message"`, `"cause":7`, `"observation":"run"`, `"content":"hi"`, `"extras"`, `"success":true`}
	last := -1
	for _, k := range keys {
		i := strings.Index(s, k)
		if i <= last {
			t.Fatalf("%s missing or out of order in %s", k, s)
		}
		last = i
	}
	if err := b.client.Call(ctx, "openhands/execute_action", map[string]any{}, &raw); err == nil || !strings.Contains(err.Error(), "action") {
		t.Errorf("missing action: err = %v, want an invalid-params error naming action", err)
	}
}
