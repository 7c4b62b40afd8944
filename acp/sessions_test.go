package acp

import (
	"encoding/json"
	"testing"
)

// TestMCPConfig turns the client's MCP servers into the agent's
// mcp_config entries, in the forms the OpenHands SDK reads.
func TestMCPConfig(t *testing.T) {
	var servers []mcpServer
	json.Unmarshal([]byte(`[
		{"name":"fs","command":"/usr/bin/mcp-fs","args":["--root","/w"],"env":[{"name":"TOKEN","value":"t"}]},
		{"type":"http","name":"docs","url":"https://docs.example/mcp","headers":[{"name":"Authorization","value":"Bearer x"}]},
		{"type":"sse","name":"old","url":"http://127.0.0.1:9/sse","headers":[]},
		{"name":"bare","command":"mcp-bare","args":[],"env":[]}]`), &servers)
	got, _ := json.Marshal(mcpConfig(servers))
	want := `{"bare":{"args":[],"command":"mcp-bare","env":{}},` +
		`"docs":{"headers":{"Authorization":"Bearer x"},"transport":"http","url":"https://docs.example/mcp"},` +
		`"fs":{"args":["--root","/w"],"command":"/usr/bin/mcp-fs","env":{"TOKEN":"t"}},` +
		`"old":{"headers":{},"transport":"sse","url":"http://127.0.0.1:9/sse"}}`
	if string(got) != want {
		t.Errorf("mcp_config:\n got %s\nwant %s", got, want)
	}
	if mcpConfig(nil) != nil {
		t.Error("no servers should add no entries")
	}
}
