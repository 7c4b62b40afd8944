//go:build linux

package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
)

// TestACPFindsOrStartsAServer: `oh-bridge acp` with no server configured
// does what VS Code's bridge does, driven by the official ACP SDK
// (test/node/acp_local.cjs). With none running, the person is asked on a
// card of its own to start the installed agent-server; the conversation
// runs on it, "always" is kept, and the server ends with the agent. Then
// an Agent Canvas-shaped stack is found with no question.
func TestACPFindsOrStartsAServer(t *testing.T) {
	node, dir := nodeClients(t, "@agentclientprotocol/sdk")
	held := holdDefaultPorts(t)
	script := func(message string) string {
		f := filepath.Join(t.TempDir(), "script.json")
		b, _ := json.Marshal(map[string]any{"turns": [][]map[string]any{{{"message": message}}}})
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	path, pidFile := fakeAgentServerPath(t, "--script", script("Hello from the server the bridge started."))
	home := t.TempDir()
	ws := t.TempDir()
	choices := filepath.Join(home, ".config", "oh-bridge", "choices.json")
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"PATH="+path+":/usr/bin:/bin", "OH_BRIDGE_SERVER_URL=", "OH_BRIDGE_SESSION_API_KEY=", "LOCAL_BACKEND_API_KEY=", "LLM_MODEL=e2e/scripted")

	cmd := exec.Command(node, filepath.Join(dir, "acp_local.cjs"), bin, ws, "start", choices)
	cmd.Env = env
	runClient(t, cmd)
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	fmt.Sscan(string(data), &pid)
	if !waitGone(t, pid, 10*time.Second) {
		t.Fatalf("the agent-server the bridge started (pid %d) outlived it", pid)
	}

	// Agent Canvas: its key file, its agent-server on 18000.
	held["18000"].Close()
	canvasDir := filepath.Join(home, ".openhands", "agent-canvas")
	if err := os.MkdirAll(canvasDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(canvasDir, "api-key.txt"), []byte("canvas-acp-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The stand-in: Agent Canvas's agent-server on its fixed port (18000)
	// with its key (realserver picks a free port).
	agentservertest.Start(t, "--port", "18000", "--session-api-key", "canvas-acp-key", "--script", script("Hello from Agent Canvas."))
	cmd = exec.Command(node, filepath.Join(dir, "acp_local.cjs"), bin, ws, "canvas", choices)
	cmd.Env = env
	runClient(t, cmd)
}
