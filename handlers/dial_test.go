package handlers_test

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/oh-bridge/oh-bridge/dial/dialtest"
	"github.com/oh-bridge/oh-bridge/handlers"
	"github.com/oh-bridge/oh-bridge/rpc"
)

func TestConnectExecutesTheServersActions(t *testing.T) {
	root := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	actions := []map[string]any{
		{"action": "run", "args": map[string]any{"command": "echo hi from $PWD", "blocking": true}, "timeout": 30},
		{"action": "edit", "args": map[string]any{"command": "create", "path": filepath.Join(root, "notes.txt"), "file_text": "hello\n", "impl_source": "oh_aci"}},
	}
	b, _ := json.Marshal(actions)
	os.WriteFile(script, b, 0o644)
	p := dialtest.Start(t, "--script", script)

	_, client := serve(t, handlers.Config{Version: "1.0.0", Roots: []string{root}})
	client.Initialize(ctxT(t), nil)
	var res struct {
		ConversationID string
		Status         struct{ State string }
	}
	if err := client.Call(ctxT(t), "openhands/connect", map[string]any{"protocol": "v0", "serverUrl": p.URL, "task": "take notes"}, &res); err != nil {
		t.Fatal(err)
	}
	if res.ConversationID == "" || res.Status.State != "connected" {
		t.Fatalf("connect: %+v", res)
	}
	reg := p.AwaitLine(t, "REGISTERED ")
	if !strings.Contains(reg, root) || !strings.Contains(reg, `"version": "1.0.0"`) {
		t.Fatalf("registration %s", reg)
	}
	p.AwaitLine(t, "SCRIPT_DONE")
	run := p.AwaitLine(t, "OBSERVATION ")
	if !strings.Contains(run, "hi from "+root) || !strings.Contains(run, `"exit_code": 0`) {
		t.Fatalf("run observation %s", run)
	}
	if edit := p.AwaitLine(t, "OBSERVATION "); !strings.Contains(edit, "File created successfully at: "+filepath.Join(root, "notes.txt")) {
		t.Fatalf("edit observation %s", edit)
	}
	if data, err := os.ReadFile(filepath.Join(root, "notes.txt")); err != nil || string(data) != "hello\n" {
		t.Fatalf("notes.txt: %q %v", data, err)
	}
	// The conversation's events reach the editor: the task first.
	m, err := client.AwaitNotification(ctxT(t), "openhands/did_receive_event", nil)
	if err != nil || !strings.Contains(string(m.Params), "take notes") {
		t.Fatalf("first event: %s %v", m.Params, err)
	}
	if err := client.Call(ctxT(t), "openhands/send_message", map[string]any{"text": "thanks"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AwaitNotification(ctxT(t), "openhands/did_receive_event", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "thanks")
	}); err != nil {
		t.Fatal(err)
	}
	var st struct {
		State          string
		ConversationID string
		LastEventID    int
	}
	client.Call(ctxT(t), "openhands/status", nil, &st)
	if st.State != "connected" || st.ConversationID != res.ConversationID || st.LastEventID < 3 {
		t.Fatalf("status %+v", st)
	}
	if err := client.Call(ctxT(t), "openhands/disconnect", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AwaitNotification(ctxT(t), "openhands/did_change_status", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"state":"disconnected"`)
	}); err != nil {
		t.Fatal(err)
	}
}

func TestConnectFailuresInPlainWords(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	_, client := serve(t, handlers.Config{Roots: []string{t.TempDir()}})
	client.Initialize(ctxT(t), nil)

	err := client.Call(ctxT(t), "openhands/connect", map[string]any{"protocol": "v0", "serverUrl": "http://" + addr}, nil)
	var e *rpc.Error
	want := "cannot reach OpenHands at http://" + addr + ": connection refused — is the OpenHands server running?"
	if !errors.As(err, &e) || e.Code != 1019 || e.Message != want || !strings.Contains(string(*e.Data), `"kind":"server_unreachable"`) {
		t.Fatalf("got %v, want 1019 %q", err, want)
	}
	if _, err := client.AwaitNotification(ctxT(t), "openhands/did_change_status", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"state":"failed"`) && strings.Contains(string(p), "is the OpenHands server running?")
	}); err != nil {
		t.Fatal(err)
	}
	if err := client.Call(ctxT(t), "openhands/connect", map[string]any{}, nil); !errors.As(err, &e) || e.Code != rpc.CodeInvalidParams {
		t.Fatalf("no serverUrl: %v", err)
	}
	if err := client.Call(ctxT(t), "openhands/send_message", map[string]any{"text": "hi"}, nil); !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(e.Message, "run openhands/connect first") {
		t.Fatalf("send without a connection: %v", err)
	}

	p := dialtest.Start(t)
	err = client.Call(ctxT(t), "openhands/connect", map[string]any{"protocol": "v0", "serverUrl": p.URL, "conversationId": "0123"}, nil)
	if !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(e.Message, "conversation 0123 was not found") {
		t.Fatalf("unknown conversation: %v", err)
	}
}

// TestServerActionsAskPermission: with permissions.requestPermission the
// bridge asks before running the server's actions; a rejection answers
// OpenHands' user_rejected observation and nothing runs.
func TestServerActionsAskPermission(t *testing.T) {
	root := t.TempDir()
	marker := filepath.Join(root, "ran")
	script := filepath.Join(t.TempDir(), "script.json")
	actions := []map[string]any{
		{"action": "run", "args": map[string]any{"command": "touch " + marker, "blocking": true}, "timeout": 30},
		{"action": "think", "args": map[string]any{"thought": "no permission needed"}},
		{"action": "run", "args": map[string]any{"command": "echo allowed", "blocking": true}, "timeout": 30},
	}
	b, _ := json.Marshal(actions)
	os.WriteFile(script, b, 0o644)
	p := dialtest.Start(t, "--script", script)

	_, client := serve(t, handlers.Config{Roots: []string{root}})
	var asked []string
	var mu sync.Mutex
	client.OnRequest = func(method string, params json.RawMessage) (any, *rpc.Error) {
		if method != "session/request_permission" {
			return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: method}
		}
		var req struct {
			ToolCall struct{ Title, Kind string }
			Options  []struct{ OptionID string }
		}
		json.Unmarshal(params, &req)
		mu.Lock()
		asked = append(asked, req.ToolCall.Kind+": "+req.ToolCall.Title)
		n := len(asked)
		mu.Unlock()
		if n == 1 {
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject_once"}}, nil
		}
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
	}
	client.Initialize(ctxT(t), map[string]any{"capabilities": map[string]any{"permissions": map[string]any{"requestPermission": true}}})
	if err := client.Call(ctxT(t), "openhands/connect", map[string]any{"protocol": "v0", "serverUrl": p.URL}, nil); err != nil {
		t.Fatal(err)
	}
	p.AwaitLine(t, "SCRIPT_DONE")
	rejected := p.AwaitLine(t, "OBSERVATION ")
	if !strings.Contains(rejected, `"observation": "user_rejected"`) || !strings.Contains(rejected, "Action has been rejected by the user! Waiting for further user input.") {
		t.Fatalf("rejected action: %s", rejected)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the rejected command ran")
	}
	if think := p.AwaitLine(t, "OBSERVATION "); !strings.Contains(think, `"observation": "think"`) {
		t.Fatalf("think: %s", think)
	}
	if ran := p.AwaitLine(t, "OBSERVATION "); !strings.Contains(ran, "allowed") || !strings.Contains(ran, `"exit_code": 0`) {
		t.Fatalf("allowed action: %s", ran)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || !strings.HasPrefix(asked[0], "execute: run `touch ") {
		t.Fatalf("asked %q; want two asks (none for think)", asked)
	}
}

// TestConnectV1Failures: the agent-server dial's failures keep their
// words, with a kind and the facts the editor needs in error.data.
func TestConnectV1Failures(t *testing.T) {
	future := dialtest.StartAgentServer(t, "--version", "2.0.0")
	current := dialtest.StartAgentServer(t)
	_, client := serve(t, handlers.Config{Roots: []string{t.TempDir()}})
	client.Initialize(ctxT(t), nil)
	var e *rpc.Error
	err := client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": future.URL, "llm": map[string]any{"model": "m"}}, nil)
	if !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(e.Message, "speaks API version 2.0.0") ||
		!strings.Contains(string(*e.Data), `"kind":"unsupported_api_version"`) || !strings.Contains(string(*e.Data), `"serverVersion":"2.0.0"`) {
		t.Fatalf("a 2.x server: %v", err)
	}
	err = client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": current.URL}, nil)
	if !errors.As(err, &e) || e.Code != 1017 || !strings.Contains(e.Message, "needs the agent's LLM") || !strings.Contains(string(*e.Data), `"param":"llm"`) {
		t.Fatalf("no LLM: %v", err)
	}
	err = client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": current.URL, "confirmationPolicy": "Sometimes"}, nil)
	if !errors.As(err, &e) || e.Code != rpc.CodeInvalidParams || !strings.Contains(e.Message, "AlwaysConfirm") {
		t.Fatalf("a bad policy: %v", err)
	}
	err = client.Call(ctxT(t), "openhands/pause", map[string]any{}, nil)
	if !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(e.Message, "run openhands/connect first") {
		t.Fatalf("pause without a connection: %v", err)
	}
}
