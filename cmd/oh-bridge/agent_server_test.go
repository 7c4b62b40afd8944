package main_test

import (
	"bytes"
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
// agent-server's schema types that client ships (agent_server_schema.cjs),
// but for the answers that show a conversation: those types are
// agent-server 1.44.0's, whose LLM lacks fields the installed 1.58.2
// sends (stream_idle_timeout), and agentserver's
// TestStandInKeepsToTheRealServer holds those answers to the real server.
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
	// The stand-in: every request and answer recorded (--record) for the
	// schema check below.
	p := agentservertest.Start(t, "--script", scriptFile, "--session-api-key", "s3cret", "--record", record)
	runClient(t, exec.Command(node, filepath.Join(dir, "agent_server.cjs"), bin, p.URL, "s3cret", t.TempDir()))
	checked := filepath.Join(tmp, "checked.jsonl")
	if err := os.WriteFile(checked, withoutConversations(t, record), 0o644); err != nil {
		t.Fatal(err)
	}
	runClient(t, exec.Command(node, filepath.Join(dir, "agent_server_schema.cjs"), checked, t.TempDir()))
}

// withoutConversations is the stand-in's record less the answers that show
// a conversation (with its agent's LLM).
func withoutConversations(t *testing.T, record string) []byte {
	t.Helper()
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	dropped := 0
	for line := range bytes.Lines(data) {
		var r struct {
			Type string `json:"type"`
			Body struct {
				Agent json.RawMessage `json:"agent"`
				Items []struct {
					Agent json.RawMessage `json:"agent"`
				} `json:"items"`
			} `json:"body"`
		}
		json.Unmarshal(line, &r)
		if r.Type == "response" && (r.Body.Agent != nil || len(r.Body.Items) > 0 && r.Body.Items[0].Agent != nil) {
			dropped++
			continue
		}
		out = append(out, line...)
	}
	if dropped == 0 {
		t.Fatalf("the stand-in recorded no conversation in %s", record)
	}
	return out
}
