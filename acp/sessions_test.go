package acp

import (
	"context"
	"encoding/json"
	"strings"
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

// TestTerminalOutputCapability reads clientCapabilities._meta.terminal_output
// leniently: only a JSON true turns display terminals on, and whatever else
// a client puts in _meta does not fail initialize.
func TestTerminalOutputCapability(t *testing.T) {
	cases := []struct {
		caps string
		want bool
	}{
		{`{"fs":{"readTextFile":true},"terminal":true,"_meta":{"terminal_output":true,"terminal-auth":true}}`, true},
		{`{"_meta":{"terminal_output":false}}`, false},
		{`{"_meta":{"terminal_output":"true"}}`, false},
		{`{"_meta":{"other":{"x":1}}}`, false},
		{`{"_meta":null}`, false},
		{`{"_meta":[1,2]}`, false},
		{`{}`, false},
	}
	for _, c := range cases {
		var p initializeParams
		if err := json.Unmarshal([]byte(`{"protocolVersion":1,"clientCapabilities":`+c.caps+`}`), &p); err != nil {
			t.Errorf("%s: initialize params do not parse: %v", c.caps, err)
			continue
		}
		a := New(Config{})
		if _, err := a.initialize(context.Background(), &p); err != nil {
			t.Errorf("%s: initialize failed: %v", c.caps, err)
		}
		if got := a.capabilities().terminalOutput(); got != c.want {
			t.Errorf("%s: terminalOutput = %v, want %v", c.caps, got, c.want)
		}
	}
}

// TestSessionCapabilities: initialize advertises session/list, resume and
// close as ACP v1 asks ({} each), and the method table serves them.
func TestSessionCapabilities(t *testing.T) {
	a := New(Config{})
	res, err := a.initialize(context.Background(), &initializeParams{ProtocolVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	var out struct {
		AgentCapabilities struct {
			SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
	}
	json.Unmarshal(b, &out)
	for _, name := range []string{"list", "resume", "close"} {
		if got := string(out.AgentCapabilities.SessionCapabilities[name]); got != "{}" {
			t.Errorf("sessionCapabilities.%s = %s, want {}", name, got)
		}
		if _, ok := a.Methods()["session/"+name]; !ok {
			t.Errorf("session/%s is advertised but not served", name)
		}
	}
}

// TestSessionsWithoutServer: with no agent-server configured there is no
// session to list, and resuming or closing one says why.
func TestSessionsWithoutServer(t *testing.T) {
	a := New(Config{HowToConfigure: "Give --server."})
	got, err := a.listSessions(context.Background(), &listSessionsParams{Cwd: "/w"})
	if b, _ := json.Marshal(got); err != nil || string(b) != `{"sessions":[]}` {
		t.Errorf("session/list = %s, %v; want no sessions", b, err)
	}
	if _, err := a.listSessions(context.Background(), &listSessionsParams{Cwd: "w"}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("a relative cwd: %v", err)
	}
	if _, err := a.resumeSession(context.Background(), &loadSessionParams{SessionID: "x", Cwd: "/w"}); err == nil ||
		!strings.Contains(err.Error(), "cannot resume session x: no OpenHands agent-server is configured. Give --server.") {
		t.Errorf("session/resume: %v", err)
	}
	if _, err := a.closeSession(context.Background(), &closeSessionParams{SessionID: "x"}); err == nil || !strings.Contains(err.Error(), "nothing to close") {
		t.Errorf("session/close of a session never opened: %v", err)
	}
}
