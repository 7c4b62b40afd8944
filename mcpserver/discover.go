package mcpserver

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP 2026-07-28 is stateless: no initialize, no session, every request
// carrying its version in _meta, and a server/discover request to learn
// what a server speaks. Its answer to state that spans calls is a handle
// the server mints and the model passes back as a tool argument (SEP-2567);
// OpenHands' tools have no such argument, and an agent's shell, cwd and
// task list are exactly such state. So:
//   - on stdio, where the process is the client's alone, 2026-07-28 is
//     served as it is: its requests share the one agent of the process;
//   - over HTTP, where one endpoint serves many agents, server/discover is
//     answered, listing the versions with sessions, so a client that asks
//     first (Claude Code does) goes on to initialize without an error, and
//     each agent keeps its own shell; any other 2026-07-28 request without
//     a session is answered with the SDK's unsupported-version error
//     (-32022) and the same list.

const protocolStateless = "2026-07-28"

// sessionVersions are the versions served over HTTP.
func sessionVersions() []string {
	return slices.DeleteFunc(slices.Clone(ProtocolVersions), func(v string) bool { return v >= protocolStateless })
}

// statelessRequest reads a request without a session: its id and method,
// and whether it speaks 2026-07-28 or later.
func statelessRequest(r *http.Request, body []byte) (id json.RawMessage, method string, stateless bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return nil, "", false
	}
	stateless = r.Header.Get("MCP-Protocol-Version") >= protocolStateless
	if v, ok := m.Params.Meta[mcp.MetaKeyProtocolVersion]; ok {
		var s string
		json.Unmarshal(v, &s)
		stateless = stateless || s >= protocolStateless
	}
	return m.ID, m.Method, stateless || m.Method == "server/discover"
}

// answerStateless answers a 2026-07-28 request over HTTP (see above).
func (s *Server) answerStateless(w http.ResponseWriter, id json.RawMessage, method string) {
	if len(id) == 0 {
		w.WriteHeader(http.StatusAccepted) // a notification
		return
	}
	if method != "server/discover" {
		writeJSON(w, http.StatusOK, rpcError(id, mcp.CodeUnsupportedProtocolVersion,
			"this endpoint serves MCP with sessions (one shell per agent): send initialize with one of the supported versions",
			mcp.UnsupportedProtocolVersionData{Supported: sessionVersions(), Requested: protocolStateless}))
		return
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{
		"resultType":        "complete",
		"supportedVersions": sessionVersions(),
		"capabilities":      map[string]any{"tools": map[string]any{}},
		"instructions":      s.instructions(),
		"_meta":             map[string]any{mcp.MetaKeyServerInfo: s.implementation()},
	}})
	writeJSON(w, http.StatusOK, b)
}
