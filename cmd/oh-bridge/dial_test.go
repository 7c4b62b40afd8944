package main_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/rpc"
)

// TestFirstQuestionNamesTheConversationsCall: a new conversation's first
// call is asked about while openhands/connect still runs (the agent acts on
// its task at once). The question names the call by the conversation's id
// for it, the one its card has, not by the bridge's own.
func TestFirstQuestionNamesTheConversationsCall(t *testing.T) {
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"turns": [[{"tool": "terminal", "arguments": {"command": "echo first-call"}}], [{"message": "Done."}]]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// The stand-in, for speed: this package starts no real server of its
	// own for the dial; its events are held to the real server's by
	// agentserver's TestStandInKeepsToTheRealServer.
	p := agentservertest.Start(t, "--script", script)
	b := startBridge(t, "--stdio", "--workspace", t.TempDir())
	client := b.client
	asked := make(chan string, 4)
	client.OnRequest = func(method string, params json.RawMessage) (any, *rpc.Error) {
		if method != "session/request_permission" {
			return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: method}
		}
		var q struct {
			ToolCall struct {
				ToolCallID string `json:"toolCallId"`
			} `json:"toolCall"`
		}
		_ = json.Unmarshal(params, &q)
		asked <- q.ToolCall.ToolCallID
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}, nil
	}
	if _, err := client.Initialize(ctxT(t), map[string]any{"capabilities": map[string]any{"permissions": map[string]any{"requestPermission": true}}}); err != nil {
		t.Fatal(err)
	}
	if err := client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": p.URL, "llm": map[string]any{"model": "m"}, "task": "Run it."}, nil); err != nil {
		t.Fatal(err)
	}
	var id string
	select {
	case id = <-asked:
	case <-ctxT(t).Done():
		t.Fatal("no permission question came")
	}
	_, err := client.AwaitNotification(ctxT(t), "openhands/did_update_conversation", func(raw json.RawMessage) bool {
		var n struct {
			Update struct {
				SessionUpdate, ToolCallID string
			}
		}
		return json.Unmarshal(raw, &n) == nil && n.Update.SessionUpdate == "tool_call" && n.Update.ToolCallID == id
	})
	if err != nil {
		t.Fatalf("the question named call %q, and no card has that id: %v", id, err)
	}
}

// TestConnectTakesThePersonsModel: openhands/connect with no llm starts a
// conversation with the model of the person's OpenHands CLI settings, and
// the status says so (never the key).
func TestConnectTakesThePersonsModel(t *testing.T) {
	// The stand-in, for speed: a server with nothing in its settings
	// answers their defaults as the real one does (agentserver's
	// TestLLMFromSettings runs this on the real server).
	p := agentservertest.Start(t)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".openhands"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := `{"kind": "Agent", "llm": {"model": "cli/model", "api_key": "sk-from-the-cli"}}`
	if err := os.WriteFile(filepath.Join(home, ".openhands", "agent_settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBridgeEnv(t, []string{"HOME=" + home, "OPENHANDS_PERSISTENCE_DIR="}, "--stdio", "--workspace", t.TempDir())
	if _, err := b.client.Initialize(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	var res struct {
		ConversationID string
		Status         struct{ LLMSource string }
	}
	if err := b.client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": p.URL}, &res); err != nil {
		t.Fatal(err)
	}
	want := "the OpenHands CLI's settings (" + filepath.Join(home, ".openhands", "agent_settings.json") + ")"
	if res.Status.LLMSource != want {
		t.Errorf("llmSource %q; want %q", res.Status.LLMSource, want)
	}
	var conv struct {
		Agent struct{ LLM struct{ Model string } }
	}
	resp, err := http.Get(p.URL + "/api/conversations/" + res.ConversationID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&conv); err != nil || conv.Agent.LLM.Model != "cli/model" {
		t.Errorf("the conversation's model: %+v, %v", conv, err)
	}
}
