package updates_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/updates"
)

// TestPermissionCarriesTheProposedDiff: the question about an edit
// carries the change its arguments propose, as ACP diff content, for the
// clients that show a question's content; other calls carry none.
func TestPermissionCarriesTheProposedDiff(t *testing.T) {
	cases := []struct {
		name, input, want string
	}{
		{"str_replace", `{"command": "str_replace", "path": "/w/a.txt", "old_str": "alpha", "new_str": "beta"}`,
			`[{"type":"diff","path":"/w/a.txt","oldText":"alpha","newText":"beta"}]`},
		{"str_replace to nothing", `{"command": "str_replace", "path": "/w/a.txt", "old_str": "alpha"}`,
			`[{"type":"diff","path":"/w/a.txt","oldText":"alpha","newText":""}]`},
		{"create", `{"command": "create", "path": "/w/new.txt", "file_text": "hello\n"}`,
			`[{"type":"diff","path":"/w/new.txt","oldText":null,"newText":"hello\n"}]`},
		{"insert", `{"command": "insert", "path": "/w/a.txt", "insert_line": 3, "new_str": "more"}`,
			`[{"type":"diff","path":"/w/a.txt","oldText":"","newText":"more"}]`},
		{"view", `{"command": "view", "path": "/w/a.txt"}`, `null`},
		{"a relative path", `{"command": "str_replace", "path": "a.txt", "old_str": "x", "new_str": "y"}`, `null`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var sent *updates.PermissionRequestParams
			call := func(_ context.Context, _ string, params, result any) error {
				sent = params.(*updates.PermissionRequestParams)
				return json.Unmarshal([]byte(`{"outcome":{"outcome":"selected","optionId":"allow_once"}}`), result)
			}
			req := session.PermissionRequest{Tool: "file_editor", Title: "edit", Kind: "edit", RawInput: json.RawMessage(c.input)}
			if _, err := updates.AskPermission(context.Background(), call, req, "call-1", "s", ""); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(sent.ToolCall.Content)
			if string(got) != c.want {
				t.Errorf("content %s; want %s", got, c.want)
			}
		})
	}
	// A command is no edit.
	var sent *updates.PermissionRequestParams
	call := func(_ context.Context, _ string, params, result any) error {
		sent = params.(*updates.PermissionRequestParams)
		return json.Unmarshal([]byte(`{"outcome":{"outcome":"cancelled"}}`), result)
	}
	updates.AskPermission(context.Background(), call, session.PermissionRequest{Tool: "terminal", RawInput: json.RawMessage(`{"command":"ls"}`)}, "c", "", "")
	if sent.ToolCall.Content != nil {
		t.Errorf("a command's question carries %v", sent.ToolCall.Content)
	}
}
