//go:build linux

package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// TestStartTheRealServer: the editor's bridge starts OpenHands' own
// agent-server (1.58.2's `agent-server` script, found on PATH) the way the
// person agreed to, in the bridge's state directory, never the project: a
// conversation on it keeps its files beneath the state directory, and
// nothing lands in the workspace (its defaults, relative to the working
// directory, put workspace/conversations in the project before).
func TestStartTheRealServer(t *testing.T) {
	venv := realserver.Need(t, realserver.Latest)
	holdDefaultPorts(t)
	home := t.TempDir()
	ws := t.TempDir()
	data := filepath.Join(home, ".local", "share")
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + data,
		"PATH=" + filepath.Join(venv, "bin") + ":/usr/bin:/bin", "OH_BRIDGE_SERVER_URL=", "OH_BRIDGE_SESSION_API_KEY=", "LOCAL_BACKEND_API_KEY=",
		"LITELLM_LOCAL_MODEL_COST_MAP=", "ANONYMIZED_TELEMETRY=", "OH_PRELOAD_TOOLS=", "OH_ENABLE_VSCODE="}
	b := startBridgeIn(t, ws, env, "--stdio", "--workspace", ws, "--config", filepath.Join(home, "none.json"))
	if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	var found struct {
		Ways []struct{ Kind, Command string }
	}
	must(t, b.client.Call(ctxT(t), "openhands/find_server", nil, &found))
	if len(found.Ways) == 0 || found.Ways[0].Kind != "installed" || !strings.HasPrefix(found.Ways[0].Command, filepath.Join(venv, "bin", "agent-server")) {
		t.Fatalf("ways: %+v", found.Ways)
	}
	ctx := ctxLong(t, realserver.StartTimeout+time.Minute)
	var started struct{ ServerURL, ServerVersion string }
	if err := b.client.Call(ctx, "openhands/start_server", map[string]any{"kind": "installed"}, &started); err != nil {
		t.Fatal(err)
	}
	if started.ServerVersion != "1.58.2" {
		t.Errorf("started %+v", started)
	}
	model := scriptedllm.Start(t, scriptedllm.Turn{ToolCalls: []scriptedllm.ToolCall{scriptedllm.Call("finish", map[string]any{"message": "done"})}})
	var conv struct{ ConversationID string }
	if err := b.client.Call(ctx, "openhands/connect", map[string]any{"serverUrl": started.ServerURL, "task": "Say done.",
		"llm": map[string]any{"model": "openai/oh-scripted", "base_url": model.URL, "api_key": "k", "num_retries": 0}}, &conv); err != nil {
		t.Fatal(err)
	}
	model.Wait(2 * time.Minute)
	state := filepath.Join(data, "oh-bridge", "agent-server")
	stored := filepath.Join(state, "conversations", strings.ReplaceAll(conv.ConversationID, "-", ""))
	if _, err := os.Stat(stored); err != nil {
		t.Errorf("the conversation is not kept in the bridge's state directory: %v", err)
	}
	entries, _ := os.ReadDir(ws)
	for _, e := range entries {
		t.Errorf("the started server left %s in the workspace", e.Name())
	}
}

// ctxLong is a context for a step that may take d.
func ctxLong(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
