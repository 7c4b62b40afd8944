package conversation

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver"
)

func attached(id, agent string) *agentserver.ConversationInfo {
	return &agentserver.ConversationInfo{ID: id, Agent: json.RawMessage(agent)}
}

// a token of the shape the bridge's endpoints make
const minted = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcde"

func agentNaming(port, auth string) string {
	return `{"mcp_config":{"oh-bridge":{"url":"http://127.0.0.1:` + port + `/mcp","headers":{"Authorization":"` + auth + `"}}}}`
}

// TestNamedEndpoint: an endpoint is served again only with the record this
// bridge wrote for the conversation, the token it minted; a token the
// agent-server shows must be that one.
func TestNamedEndpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "endpoints")
	hidden := agentNaming("4711", "**********")
	shown := agentNaming("4711", "Bearer "+minted)
	foreign := agentNaming("4711", "Bearer x")

	if _, _, err := named(attached("c1", shown), dir); err == nil || !strings.Contains(err.Error(), "no record of making it") {
		t.Fatalf("a shown token with no record was taken: %v", err)
	}
	if err := writeRecord(dir, "c1", Endpoint{URL: "http://127.0.0.1:4711/mcp", Token: "x"}); err == nil {
		t.Fatal("a token the bridge does not make was recorded")
	}
	if err := writeRecord(dir, "c1", Endpoint{URL: "http://127.0.0.1:4711/mcp", Token: minted}); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{hidden, shown} {
		ep, ok, err := named(attached("c1", agent), dir)
		if err != nil || !ok || ep.Token != minted || ep.Port() != 4711 {
			t.Fatalf("recorded: %+v %v %v", ep, ok, err)
		}
	}
	for path, mode := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "c1.json"): 0o600} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v (%v)", path, st.Mode().Perm(), mode, err)
		}
	}
	var unknown *EndpointUnknownError
	if _, _, err := named(attached("c1", foreign), dir); !errors.As(err, &unknown) || !strings.Contains(err.Error(), "did not make") {
		t.Fatalf("a foreign token: %v", err)
	}
	if _, _, err := named(attached("c1", agentNaming("4712", "**********")), dir); !errors.As(err, &unknown) {
		t.Fatal("a record for another URL gave its token")
	}
	if _, _, err := named(attached("c2", `{"mcp_config":{"oh-bridge":{"url":"http://10.0.0.1:4711/mcp","headers":{"Authorization":"Bearer x"}}}}`), dir); err == nil {
		t.Fatal("an endpoint on another host was taken as this bridge's")
	}
	if _, ok, err := named(attached("c3", `{"mcp_config":{}}`), dir); ok || err != nil {
		t.Fatalf("no bridge endpoint: %v %v", ok, err)
	}
	if err := writeRecord(dir, "../x", Endpoint{Token: minted}); err == nil {
		t.Fatal("a conversation id with a path in it named a file")
	}
	// Once exposed, never served again.
	if err := markExposed(dir, "c1", "port 4711 was held by user nobody"); err != nil {
		t.Fatal(err)
	}
	var exposed *EndpointExposedError
	if _, _, err := named(attached("c1", hidden), dir); !errors.As(err, &exposed) || exposed.Kind() != "mcp_token_exposed" {
		t.Fatalf("an exposed endpoint: %v", err)
	}
}

func writeMode(p, data string, mode os.FileMode) error {
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}
