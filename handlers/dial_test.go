package handlers_test

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
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
	if err := client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": p.URL, "task": "take notes"}, &res); err != nil {
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

	err := client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": "http://" + addr}, nil)
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
	err = client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": p.URL, "conversationId": "0123"}, nil)
	if !errors.As(err, &e) || e.Code != 1019 || !strings.Contains(e.Message, "conversation 0123 was not found") {
		t.Fatalf("unknown conversation: %v", err)
	}
}
