package agentserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/engine"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// TestRealServerDrivesTheBridge is the chain end to end with OpenHands'
// own agent-server (1.58.2, installed by `task openhands`): its agent,
// whose LLM is a scripted model, calls the bridge's terminal over MCP
// (FastMCP's client, Streamable HTTP), gets the bridge's text back as the
// tool result, then finishes. The model checks what it is offered (the
// bridge's tools, finish and think, nothing else) and the exact tool
// result; the editor's side checks the events the server streamed.
func TestRealServerDrivesTheBridge(t *testing.T) {
	// 1.58.2 locks fastmcp 3.4 (mcp 1.x); 1.49.1, which caps neither,
	// gets fastmcp 4 and mcp 2.
	for _, lock := range []string{realserver.Latest, realserver.Canvas} {
		t.Run(lock, func(t *testing.T) { realServerDrivesTheBridge(t, lock) })
	}
}

func realServerDrivesTheBridge(t *testing.T, lock string) {
	srv := sharedServer(t, lock)
	b := newBridge(t)
	tools := []string{"file_editor", "task_tracker", "terminal", "finish", "think"}
	// The bridge's terminal text, as OpenHands' TerminalObservation words
	// it; the model gets it after the SDK's line for an MCP tool.
	hello := "hello\n[The command completed with exit code 0.]\n[Current working directory: " + b.dir + "]"
	if py := engine.LookupPython(nil); py != "" {
		hello += "\n[Python interpreter: " + py + "]"
	}
	hello += "\n[Command finished with exit code 0]"
	model := scriptedllm.Start(t,
		scriptedllm.Turn{Tools: tools, ToolCalls: []scriptedllm.ToolCall{
			scriptedllm.Call("terminal", map[string]any{"command": "echo hello", "summary": "say hello"}),
		}},
		scriptedllm.Turn{Tools: tools, ToolResults: []string{"[Tool 'terminal' executed.]\n" + hello},
			ToolCalls: []scriptedllm.ToolCall{
				scriptedllm.Call("finish", map[string]any{"message": "It said hello."}),
			}},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := agentserver.NewClient(srv.URL, srv.Key, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := c.StartConversation(ctx, map[string]any{
		"agent": map[string]any{
			"kind":  "Agent",
			"llm":   scriptedLLM(model),
			"tools": []any{},
			"mcp_config": map[string]any{"oh-bridge": map[string]any{"transport": "http", "url": b.ep.URL,
				"headers": map[string]string{"Authorization": "Bearer " + b.ep.Token}}},
		},
		"workspace":       map[string]any{"kind": "LocalWorkspace", "working_dir": b.dir},
		"autotitle":       false,
		"initial_message": map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "Say hello in the terminal."}}, "run": true},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The bridge finds its endpoint in the conversation the server
	// returns; the server hides the header's token.
	info, err := c.Conversation(ctx, conv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ep, ok := info.BridgeMCP(); !ok || ep.URL != b.ep.URL || ep.Token != "" {
		t.Errorf("BridgeMCP of the server's conversation: %+v %v; want %s with the token hidden", ep, ok, b.ep.URL)
	}
	r := newRecorder()
	o := connectOptions(b, srv.URL, r)
	o.SessionAPIKey = srv.Key
	o.ConversationID = conv.ID
	s := connect(t, o)
	if s.OnEventsSocket() {
		t.Errorf("the real %s is not followed on its session socket", lock)
	}
	model.Wait(2 * time.Minute)
	r.awaitEvent(t, "ObservationEvent(finish)")
	r.awaitExecution(t, "finished")
	// The socket subscribes before it replays: the finish can come before
	// the replayed log.
	logged := allEvents(t, srv.URL, srv.Key, conv.ID)
	r.await(t, "the whole log", func(ev []json.RawMessage, _ []agentserver.Status) bool { return len(persisted(ev)) >= len(logged) })
	if st := last(r.snapshotStatuses()); st.RunningActions != 0 {
		t.Errorf("the finished conversation still counts %d actions running", st.RunningActions)
	}

	events := r.snapshot()
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, describe(e))
	}
	t.Logf("events: %s", strings.Join(kinds, ", "))
	if got := observations(events); len(got) != 1 || got[0] != "[Tool 'terminal' executed.]\n"+hello {
		t.Errorf("the MCP observations are %q", got)
	}
	for _, want := range []string{"SystemPromptEvent", "MessageEvent", "ActionEvent(terminal)", "ObservationEvent(terminal)", "ActionEvent(finish)", "ObservationEvent(finish)"} {
		if !has(events, want) {
			t.Errorf("no %s among the events streamed: %s", want, strings.Join(kinds, ", "))
		}
	}
	// The SystemPromptEvent lists the tools the agent has: the SDK's
	// finish and think, and the bridge's three over MCP.
	for _, e := range events {
		if p := parse(e); p.Kind == "SystemPromptEvent" {
			var names []string
			for _, tl := range p.Tools {
				names = append(names, tl.Title)
			}
			if want := []string{"finish", "think", "file_editor", "task_tracker", "terminal"}; !slices.Equal(names, want) {
				t.Errorf("the system prompt's tools are %q, want %q", names, want)
			}
		}
	}
	// The conversation is kept under the server's cwd.
	if _, err := os.Stat(filepath.Join(srv.ConversationsDir(), strings.ReplaceAll(conv.ID, "-", ""))); err != nil {
		t.Errorf("the conversation is not in %s: %v", srv.ConversationsDir(), err)
	}
}

func (r *recorder) snapshotStatuses() []agentserver.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.statuses)
}
