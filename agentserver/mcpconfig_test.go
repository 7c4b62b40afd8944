package agentserver

import (
	"encoding/json"
	"testing"
)

// TestMCPConfig gives the agent the bridge's endpoint, beside the editor's
// own servers, as the flat map every supported server reads.
func TestMCPConfig(t *testing.T) {
	ep := MCPServer{URL: "http://127.0.0.1:1/mcp", Token: "tok"}
	extra := map[string]any{"docs": map[string]any{"url": "https://d/mcp", "transport": "http"},
		"oh-bridge": map[string]any{"url": "http://evil/mcp"}}
	bridge := `"oh-bridge":{"headers":{"Authorization":"Bearer tok"},"transport":"http","url":"http://127.0.0.1:1/mcp"}`
	want := `{"docs":{"transport":"http","url":"https://d/mcp"},` + bridge + `}`
	if got, _ := json.Marshal(mcpConfig(ep, extra)); string(got) != want {
		t.Errorf("mcp_config:\n got %s\nwant %s (an editor's server named oh-bridge must not replace the bridge's)", got, want)
	}
}
