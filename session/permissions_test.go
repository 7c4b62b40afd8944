package session_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/session"
)

// TestCallKey: a call's key is its tool and its arguments whatever their
// key order and spacing, and it is short however large the arguments
// are: it does not hold a file's text again.
func TestCallKey(t *testing.T) {
	text := strings.Repeat("<&>", 100000)
	a, _ := json.Marshal(map[string]any{"command": "create", "path": "/w/a", "file_text": text})
	b := json.RawMessage(`{ "file_text": ` + string(mustJSON(text)) + `, "path": "/w/a", "command": "create" }`)
	ka, ok1 := session.CallKey("file_editor", a)
	kb, ok2 := session.CallKey("file_editor", b)
	if !ok1 || !ok2 || ka != kb {
		t.Fatalf("the same call, keys differ: %q %q", ka, kb)
	}
	if len(ka) > 100 {
		t.Errorf("the key is %d bytes: it holds the arguments", len(ka))
	}
	if kc, _ := session.CallKey("terminal", a); kc == ka {
		t.Error("another tool, the same key")
	}
	if kd, _ := session.CallKey("file_editor", json.RawMessage(`{"command":"create","path":"/w/b","file_text":""}`)); kd == ka {
		t.Error("other arguments, the same key")
	}
	if _, ok := session.CallKey("file_editor", json.RawMessage(`{not json`)); ok {
		t.Error("arguments that are not JSON have a key")
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }
