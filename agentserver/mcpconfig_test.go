package agentserver

import (
	"encoding/json"
	"testing"
)

// TestMCPConfig gives the agent the bridge's endpoint, beside the editor's
// own servers, in the form the server's SDK version reads.
func TestMCPConfig(t *testing.T) {
	ep := MCPServer{URL: "http://127.0.0.1:1/mcp", Token: "tok"}
	extra := map[string]any{"docs": map[string]any{"url": "https://d/mcp", "transport": "http"},
		"oh-bridge": map[string]any{"url": "http://evil/mcp"}}
	bridge := `"oh-bridge":{"headers":{"Authorization":"Bearer tok"},"transport":"http","url":"http://127.0.0.1:1/mcp"}`
	for _, c := range []struct{ version, want string }{
		{"1.43.1", `{"docs":{"transport":"http","url":"https://d/mcp"},` + bridge + `}`},
		{"1.31.1", `{"mcpServers":{"docs":{"transport":"http","url":"https://d/mcp"},` + bridge + `}}`},
	} {
		got, _ := json.Marshal(mcpConfig(c.version, ep, extra))
		if string(got) != c.want {
			t.Errorf("version %s:\n got %s\nwant %s (an editor's server named oh-bridge must not replace the bridge's)", c.version, got, c.want)
		}
	}
}
