package conversation

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver"
)

func attached(id, agent string) *agentserver.ConversationInfo {
	return &agentserver.ConversationInfo{ID: id, Agent: json.RawMessage(agent)}
}

// TestNamedEndpoint: the token the agent-server shows, else the one this
// machine's bridge recorded for the conversation; a hidden token without a
// record, or an endpoint no bridge here serves, says so.
func TestNamedEndpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "endpoints")
	shown := `{"mcp_config":{"oh-bridge":{"url":"http://127.0.0.1:4711/mcp","headers":{"Authorization":"Bearer shown"}}}}`
	hidden := `{"mcp_config":{"oh-bridge":{"url":"http://127.0.0.1:4711/mcp","headers":{"Authorization":"**********"}}}}`

	ep, ok, err := named(attached("c1", shown), dir)
	if err != nil || !ok || ep.Token != "shown" || ep.Port() != 4711 {
		t.Fatalf("shown token: %+v %v %v", ep, ok, err)
	}
	if _, _, err := named(attached("c1", hidden), dir); err == nil || !strings.Contains(err.Error(), "no record") {
		t.Fatalf("hidden token, no record: %v", err)
	}
	if err := writeRecord(dir, "c1", Endpoint{URL: "http://127.0.0.1:4711/mcp", Token: "recorded"}); err != nil {
		t.Fatal(err)
	}
	ep, ok, err = named(attached("c1", hidden), dir)
	if err != nil || !ok || ep.Token != "recorded" {
		t.Fatalf("hidden token, recorded: %+v %v %v", ep, ok, err)
	}
	for path, mode := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "c1.json"): 0o600} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v (%v)", path, st.Mode().Perm(), mode, err)
		}
	}
	// A record of another endpoint is not this one's.
	other := strings.Replace(hidden, "4711", "4712", 1)
	if _, _, err := named(attached("c1", other), dir); err == nil {
		t.Fatal("a record for another URL gave its token")
	}
	// A record others can read is not trusted.
	os.Chmod(filepath.Join(dir, "c1.json"), 0o644)
	if _, _, err := named(attached("c1", hidden), dir); err == nil {
		t.Fatal("a record of mode 0644 was read")
	}
	if _, _, err := named(attached("c2", `{"mcp_config":{"oh-bridge":{"url":"http://10.0.0.1:4711/mcp","headers":{"Authorization":"Bearer x"}}}}`), dir); err == nil {
		t.Fatal("an endpoint on another host was taken as this bridge's")
	}
	if _, ok, err := named(attached("c3", `{"mcp_config":{}}`), dir); ok || err != nil {
		t.Fatalf("no bridge endpoint: %v %v", ok, err)
	}
	if err := writeRecord(dir, "../x", Endpoint{}); err == nil {
		t.Fatal("a conversation id with a path in it named a file")
	}
}
