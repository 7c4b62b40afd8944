package acp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/oh-bridge/oh-bridge/updates"
)

// TestResultsMatchSchema checks every answer and request the bridge
// writes over ACP, each field filled, against its definition in the
// official ACP v1 schema (test/node/acp_schema.cjs, with the SDK's
// schema.json): a required field left out, a value of the wrong type or
// a field the schema does not declare fails it.
func TestResultsMatchSchema(t *testing.T) {
	a := New(Config{Version: "1.2.3"})
	var p initializeParams
	json.Unmarshal([]byte(`{"protocolVersion":1,"clientCapabilities":{}}`), &p)
	init, err := a.initialize(context.Background(), &p)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := a.authenticate(context.Background(), &authenticateParams{MethodID: authMethodID})
	if err != nil {
		t.Fatal(err)
	}
	update := &updates.Chunk{SessionUpdate: "agent_message_chunk", Content: updates.ContentBlock{Type: "text", Text: "hi"}}
	cases := []struct {
		name, def string
		value     any
	}{
		{"initialize", "InitializeResponse", init},
		{"authenticate", "AuthenticateResponse", auth},
		{"session/new", "NewSessionResponse", newSessionResult{SessionID: "c0ffee"}},
		{"session/load", "LoadSessionResponse", empty{}},
		{"session/resume", "ResumeSessionResponse", empty{}},
		{"session/close", "CloseSessionResponse", empty{}},
		{"session/list", "ListSessionsResponse", listSessionsResult{
			Sessions:   []sessionInfo{{SessionID: "c0ffee", Cwd: "/w", Title: "Fix the build", UpdatedAt: "2026-11-27T21:00:00Z"}},
			NextCursor: "page-2",
		}},
		{"session/list, none", "ListSessionsResponse", listSessionsResult{Sessions: []sessionInfo{}}},
		{"session/prompt", "PromptResponse", promptResult{StopReason: "end_turn"}},
		{"session/prompt, cancelled", "PromptResponse", promptResult{StopReason: "cancelled"}},
		{"session/update", "SessionNotification", sessionNotification{SessionID: "c0ffee", Update: update}},
		{"fs/read_text_file", "ReadTextFileRequest", readTextFileRequest{SessionID: "c0ffee", Path: "/w/a.go"}},
		{"fs/write_text_file", "WriteTextFileRequest", writeTextFileRequest{SessionID: "c0ffee", Path: "/w/a.go", Content: "package a\n"}},
	}
	type wire struct {
		Name  string `json:"name"`
		Def   string `json:"def"`
		Value any    `json:"value"`
	}
	all := make([]wire, len(cases))
	for i, c := range cases {
		all[i] = wire{c.name, c.def, c.value}
	}
	checkSchema(t, all)
}

// checkSchema runs test/node/acp_schema.cjs over cases.
func checkSchema(t *testing.T, cases any) {
	t.Helper()
	dir, _ := filepath.Abs(filepath.Join("..", "test", "node"))
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "acp-sdk-current", "schema", "v1", "schema.json"))
	}
	if err != nil {
		msg := "the ACP schema check needs Node.js 18 or newer and `npm ci --prefix test/node` (the Taskfile's test task runs it): " + err.Error()
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	b, _ := json.Marshal(cases)
	file := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(dir, "acp_schema.cjs"), file).CombinedOutput()
	if err != nil {
		t.Errorf("the values do not fit the ACP schema (%v):\n%s", err, out)
	}
}
