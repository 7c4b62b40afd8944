package agentserver

import (
	"encoding/json"
	"testing"
)

// TestBridgeMCP reads the bridge's endpoint in an agent's mcp_config, in
// each form the SDK takes, and no token where the server hides it.
func TestBridgeMCP(t *testing.T) {
	for _, c := range []struct {
		name, agent string
		want        MCPServer
		ok          bool
	}{
		{"flat", `{"mcp_config":{"oh-bridge":{"transport":"http","url":"http://127.0.0.1:5/mcp","headers":{"Authorization":"Bearer tok"}}}}`, MCPServer{"http://127.0.0.1:5/mcp", "tok"}, true},
		{"wrapped", `{"mcp_config":{"mcpServers":{"oh-bridge":{"url":"http://127.0.0.1:5/mcp","headers":{"authorization":"bearer tok"}}}}}`, MCPServer{"http://127.0.0.1:5/mcp", "tok"}, true},
		{"auth", `{"mcp_config":{"oh-bridge":{"url":"http://127.0.0.1:5/mcp","auth":{"strategy":"bearer","value":"tok"}}}}`, MCPServer{"http://127.0.0.1:5/mcp", "tok"}, true},
		{"redacted (the SDK's SecretStr headers)", `{"mcp_config":{"oh-bridge":{"url":"http://127.0.0.1:5/mcp","headers":{"Authorization":"**********"}}}}`, MCPServer{"http://127.0.0.1:5/mcp", ""}, true},
		{"redacted bearer value", `{"mcp_config":{"oh-bridge":{"url":"http://127.0.0.1:5/mcp","headers":{"Authorization":"Bearer **********"}}}}`, MCPServer{"http://127.0.0.1:5/mcp", ""}, true},
		{"stdio", `{"mcp_config":{"oh-bridge":{"command":"oh-bridge","args":["mcp"]}}}`, MCPServer{}, false},
		{"none", `{"mcp_config":{"docs":{"url":"https://d/mcp"}}}`, MCPServer{}, false},
		{"no agent", `null`, MCPServer{}, false},
	} {
		info := ConversationInfo{Agent: json.RawMessage(c.agent)}
		got, ok := info.BridgeMCP()
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
