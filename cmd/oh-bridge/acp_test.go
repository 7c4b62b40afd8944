package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
)

// TestACPClient drives `oh-bridge acp` with the official ACP TypeScript
// SDK through full prompt turns against the agent-server stand-in
// (test/node/acp.cjs): the client's fs on and off, a rejected permission,
// a cancel in the middle of a command, a cancel during a permission
// question, session/load, and no server.
func TestACPClient(t *testing.T) {
	node, dir := nodeClients(t, "@agentclientprotocol/sdk")
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	os.Mkdir(ws, 0o755)
	notes := filepath.Join(ws, "notes.txt")
	// Each conversation plays the same script: its first prompt reads,
	// edits, runs a command and plans; its second runs a long command.
	script, _ := json.Marshal(map[string]any{"turns": [][]map[string]any{
		{
			{"tool": "file_editor", "arguments": map[string]any{"command": "view", "path": notes}, "thought": "Look at the notes first."},
			{"tool": "file_editor", "arguments": map[string]any{"command": "str_replace", "path": notes, "old_str": "alpha", "new_str": "beta"}},
			{"tool": "terminal", "arguments": map[string]any{"command": "echo out-$((6*7)) | tee ran.txt"}},
			{"tool": "task_tracker", "arguments": map[string]any{"command": "plan", "task_list": []map[string]any{
				{"title": "Read the notes", "status": "done"}, {"title": "Run the tests", "status": "in_progress"}}}},
		},
		{{"message": "Done."}},
		{{"tool": "terminal", "arguments": map[string]any{"command": "echo started; sleep 31.5; echo never"}}},
		{{"message": "After the long one."}},
	}})
	scriptFile := filepath.Join(tmp, "script.json")
	os.WriteFile(scriptFile, script, 0o644)
	// The stand-in, for speed: a scripted agent for a whole ACP client
	// session, beside the one below; its events are held to the real
	// server's by agentserver's TestStandInKeepsToTheRealServer.
	p := agentservertest.Start(t, "--script", scriptFile)
	// The cancel during a question: the agent's next step is another tool
	// call, and the interrupt acts late (up to 200 ms), so the agent could
	// take that step before it lands.
	cancelScript, _ := json.Marshal(map[string]any{"turns": [][]map[string]any{
		{{"tool": "terminal", "arguments": map[string]any{"command": "echo first > " + filepath.Join(ws, "cancel-first.txt")}}},
		{{"tool": "file_editor", "arguments": map[string]any{"command": "create", "path": filepath.Join(ws, "cancel-second.txt"), "file_text": "second\n"}}},
		{{"message": "Done."}},
	}})
	cancelFile := filepath.Join(tmp, "cancel.json")
	os.WriteFile(cancelFile, cancelScript, 0o644)
	// The stand-in: an interrupt that lands late (--interrupt-delay).
	c := agentservertest.Start(t, "--script", cancelFile, "--interrupt-delay", "0.2")
	runClient(t, exec.Command(node, filepath.Join(dir, "acp.cjs"), bin, p.URL, ws, c.URL))
	if line, err := c.WaitLine(`TOOL_RESULT {"tool": "file_editor"`, 0); err == nil {
		t.Errorf("the agent made its second call after the cancel (the stand-in answered it: %s)", line)
	}
}
