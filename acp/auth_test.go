package acp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// TestAuthMethods: initialize offers an authentication method the ACP
// registry accepts, read as the registry's check reads it
// (.github/workflows/client.py in agentclientprotocol/registry: the
// "type" field, else "agent"; at least one method of type "agent" or
// "terminal"), and authenticate accepts that method with an empty result.
// Another method id is refused, naming the one offered.
func TestAuthMethods(t *testing.T) {
	a := New(Config{})
	// The registry's validator's own initialize.
	var p initializeParams
	if err := json.Unmarshal([]byte(`{"protocolVersion":1,"clientInfo":{"name":"ACP Registry Validator","version":"1.0.0"},
		"clientCapabilities":{"terminal":true,"fs":{"readTextFile":true,"writeTextFile":true},"_meta":{"terminal_output":true,"terminal-auth":true}}}`), &p); err != nil {
		t.Fatal(err)
	}
	res, err := a.initialize(context.Background(), &p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	var out struct {
		AuthMethods []struct {
			ID, Name, Description, Type string
			Meta                        map[string]any `json:"_meta"`
		} `json:"authMethods"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	var accepted []string
	for _, m := range out.AuthMethods {
		typ := m.Type
		if typ == "" {
			switch {
			case m.Meta["terminal-auth"] != nil:
				typ = "terminal"
			default:
				typ = "agent"
			}
		}
		if m.ID == "" || m.Name == "" {
			t.Errorf("auth method %+v has no id or no name (the ACP schema requires both)", m)
		}
		if typ == "agent" || typ == "terminal" {
			accepted = append(accepted, m.ID)
		}
	}
	if len(accepted) == 0 {
		t.Fatalf("initialize offers no auth method of type agent or terminal, which the ACP registry requires: %s", b)
	}
	for _, id := range accepted {
		res, err := a.authenticate(context.Background(), &authenticateParams{MethodID: id})
		if err != nil {
			t.Errorf("authenticate %q: %v", id, err)
		}
		if got, _ := json.Marshal(res); string(got) != "{}" {
			t.Errorf("authenticate %q answered %s, want {}", id, got)
		}
	}
	_, err = a.authenticate(context.Background(), &authenticateParams{MethodID: "oauth"})
	var re *rpc.Error
	if !errors.As(err, &re) || re.Code != rpc.CodeInvalidParams || !strings.Contains(re.Message, `"`+accepted[0]+`"`) || !strings.Contains(re.Message, `"oauth"`) {
		t.Errorf("authenticate of an unknown method: %v; want invalid params naming %q and \"oauth\"", err, accepted[0])
	}
}
