package updates_test

import (
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/updates"
)

// TestDropNewCalls: after the person cancelled the turn, an action the
// agent-server reports is not announced, nor its thought, nor its end
// (the interrupt's "Tool call interrupted" error); a call announced before
// still ends, and messages still come. ShowNewCalls announces calls again.
func TestDropNewCalls(t *testing.T) {
	r := &recorder{}
	tr := updates.New(updates.Options{Emit: r.emit})
	tr.Event(event(t, action("c1", "terminal", map[string]any{"command": "make"}, "Build.")))
	tr.DropNewCalls()
	tr.Event(event(t, action("c2", "file_editor", map[string]any{"command": "create", "path": "/w/b.txt", "file_text": "b"}, "Then write b.")))
	interrupted := "Tool call interrupted before completion. The conversation was paused."
	for _, id := range []string{"c1", "c2"} {
		tr.Event(event(t, map[string]any{"id": "err-" + id, "kind": "AgentErrorEvent", "source": "agent", "tool_name": "terminal",
			"tool_call_id": id, "error": interrupted}))
	}
	tr.Event(event(t, observation("c2", "file_editor", "File created successfully at: /w/b.txt", false)))
	tr.Event(event(t, map[string]any{"id": "m1", "kind": "MessageEvent", "source": "agent",
		"llm_message": map[string]any{"role": "assistant", "content": text("Stopped.")}}))
	tr.ShowNewCalls()
	tr.Event(event(t, action("c3", "terminal", map[string]any{"command": "make again"}, "")))

	var got []string
	for _, u := range r.all() {
		got = append(got, u["sessionUpdate"].(string)+":"+asString(u["toolCallId"]))
	}
	want := "agent_thought_chunk: tool_call:c1 tool_call_update:c1 agent_message_chunk: tool_call:c3"
	if strings.Join(got, " ") != want {
		t.Fatalf("updates:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if c1 := r.call("c1"); c1["status"] != "failed" || contentText(c1) != interrupted {
		t.Errorf("the call announced before the cancel did not end: %v", c1)
	}
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}
