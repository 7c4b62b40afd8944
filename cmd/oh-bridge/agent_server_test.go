package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
)

// TestAgentServerClients runs the agent-server stand-in under two
// independent clients, with the compiled bridge's tools: OpenHands' own
// TypeScript client and the editor's vscode-jsonrpc dialing through the
// bridge (test/node/agent_server.cjs). Then every request both sent and
// every answer and event the stand-in gave are checked against the
// agent-server's schema types that client ships (agent_server_schema.cjs).
func TestAgentServerClients(t *testing.T) {
	node, dir := nodeClients(t, "@openhands/typescript-client")
	script, _ := json.Marshal(map[string]any{"turns": [][]map[string]any{
		{{"tool": "terminal", "arguments": map[string]any{"command": "echo hi >> hello.txt && cat hello.txt"}, "thought": "Append hi."}},
		{{"message": "hello.txt has hi."}},
	}})
	tmp := t.TempDir()
	scriptFile := filepath.Join(tmp, "script.json")
	record := filepath.Join(tmp, "record.jsonl")
	os.WriteFile(scriptFile, script, 0o644)
	p := agentservertest.Start(t, "--script", scriptFile, "--session-api-key", "s3cret", "--record", record)
	runClient(t, exec.Command(node, filepath.Join(dir, "agent_server.cjs"), bin, p.URL, "s3cret", t.TempDir()))
	runClient(t, exec.Command(node, filepath.Join(dir, "agent_server_schema.cjs"), record, t.TempDir()))
}
