package agentserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/ohevents"
	"github.com/oh-bridge/oh-bridge/session"
)

// bridge is the editor's side: a session over a temp workspace and its
// MCP endpoint, as openhands/connect starts them.
type bridge struct {
	dir  string
	sess *session.Session
	ep   *mcpserver.Endpoint
}

func newBridge(t *testing.T) *bridge {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sess, err := session.New(session.Options{Roots: session.Candidates("test", dir), ShellMode: session.ShellNoRC})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := mcpserver.New(sess, mcpserver.Options{Version: "test"}).ListenHTTP(mcpserver.HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ep.Close(context.Background())
		sess.Close(context.Background())
	})
	return &bridge{dir: dir, sess: sess, ep: ep}
}

// step is one step of the stand-in's script.
type step = map[string]any

func tool(name string, args map[string]any) step { return step{"tool": name, "arguments": args} }

func terminal(command string) step { return tool("terminal", map[string]any{"command": command}) }

// writeScript writes the stand-in's script: one LLM response per turn.
func writeScript(t *testing.T, turns ...[]step) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"turns": turns})
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// recorder keeps what the session delivers.
type recorder struct {
	mu       sync.Mutex
	cond     *sync.Cond
	events   []json.RawMessage
	statuses []agentserver.Status
	// afterEvent, set before the conversation starts, is called after
	// each event is recorded, on the conversation's goroutine.
	afterEvent func()
}

func newRecorder() *recorder {
	r := &recorder{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *recorder) onEvent(ev ohevents.Event) {
	r.mu.Lock()
	r.events = append(r.events, append(json.RawMessage(nil), ev.Raw()...))
	r.cond.Broadcast()
	r.mu.Unlock()
	if r.afterEvent != nil {
		r.afterEvent()
	}
}

func (r *recorder) onStatus(s agentserver.Status) {
	r.mu.Lock()
	r.statuses = append(r.statuses, s)
	r.cond.Broadcast()
	r.mu.Unlock()
}

// await waits until ok holds of what was recorded.
func (r *recorder) await(t *testing.T, what string, ok func(events []json.RawMessage, st []agentserver.Status) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	timer := time.AfterFunc(time.Until(deadline), func() { r.mu.Lock(); r.cond.Broadcast(); r.mu.Unlock() })
	defer timer.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for !ok(r.events, r.statuses) {
		if time.Now().After(deadline) {
			var kinds []string
			for _, e := range r.events {
				kinds = append(kinds, describe(e))
			}
			t.Fatalf("timed out waiting for %s; events: %s; last status: %+v", what, strings.Join(kinds, ", "), last(r.statuses))
		}
		r.cond.Wait()
	}
}

func last(st []agentserver.Status) agentserver.Status {
	if len(st) == 0 {
		return agentserver.Status{}
	}
	return st[len(st)-1]
}

// awaitExecution waits for the conversation's execution status.
func (r *recorder) awaitExecution(t *testing.T, status string) {
	t.Helper()
	r.await(t, "execution status "+status, func(_ []json.RawMessage, st []agentserver.Status) bool {
		return last(st).ExecutionStatus == status
	})
}

// awaitEvent waits for an event of a kind ("ActionEvent") or, told as
// describe tells it, of a tool ("ObservationEvent(finish)").
func (r *recorder) awaitEvent(t *testing.T, want string) {
	t.Helper()
	r.await(t, want, func(ev []json.RawMessage, _ []agentserver.Status) bool { return has(ev, want) })
}

// has reports whether events hold one of a kind, or as describe tells it.
func has(events []json.RawMessage, want string) bool {
	return slices.ContainsFunc(events, func(e json.RawMessage) bool { return parse(e).Kind == want || describe(e) == want })
}

func (r *recorder) snapshot() []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// event is the part of an event the tests read.
type event struct {
	ID       string          `json:"id"`
	Kind     string          `json:"kind"`
	Key      string          `json:"key"`
	Value    json.RawMessage `json:"value"`
	ToolName string          `json:"tool_name"`
	ActionID string          `json:"action_id"`
	Action   struct {
		Kind string          `json:"kind"`
		Data json.RawMessage `json:"data"`
	} `json:"action"`
	Observation struct {
		Kind    string `json:"kind"`
		IsError bool   `json:"is_error"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"observation"`
	RejectionReason string `json:"rejection_reason"`
	Tools           []struct {
		Kind    string `json:"kind"`
		Title   string `json:"title"`
		MCPTool struct {
			Name string `json:"name"`
		} `json:"mcp_tool"`
	} `json:"tools"`
}

func parse(raw json.RawMessage) event {
	var e event
	json.Unmarshal(raw, &e)
	return e
}

func describe(raw json.RawMessage) string {
	e := parse(raw)
	switch {
	case e.Kind == "ConversationStateUpdateEvent":
		return e.Kind + "(" + e.Key + ")"
	case e.ToolName != "":
		return e.Kind + "(" + e.ToolName + ")"
	}
	return e.Kind
}

// observations are the texts of the MCP tool observations, in order.
func observations(events []json.RawMessage) []string {
	var out []string
	for _, raw := range events {
		e := parse(raw)
		if e.Kind == "ObservationEvent" && e.Observation.Kind == "MCPToolObservation" {
			var parts []string
			for _, c := range e.Observation.Content {
				parts = append(parts, c.Text)
			}
			out = append(out, strings.Join(parts, "\n"))
		}
	}
	return out
}

// persisted drops the state snapshots the socket sends to each new
// subscriber: the server keeps no copy of them.
func persisted(events []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for _, raw := range events {
		if e := parse(raw); e.Kind == "ConversationStateUpdateEvent" && e.Key == "full_state" {
			continue
		}
		out = append(out, raw)
	}
	return out
}

var testLLM = json.RawMessage(`{"model": "litellm_proxy/standin", "api_key": "sk-test"}`)

func connectOptions(b *bridge, serverURL string, r *recorder) agentserver.Options {
	return agentserver.Options{
		ServerURL:  serverURL,
		LLM:        testLLM,
		WorkingDir: b.dir,
		MCP: func(context.Context) (agentserver.MCPServer, error) {
			return agentserver.MCPServer{URL: b.ep.URL, Token: b.ep.Token}, nil
		},
		OnEvent:    r.onEvent,
		OnStatus:   r.onStatus,
		MinBackoff: 20 * time.Millisecond,
		MaxBackoff: 200 * time.Millisecond,
	}
}

func connect(t *testing.T, o agentserver.Options) *agentserver.Conversation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := agentserver.Connect(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// allEvents reads the conversation's whole log over REST, page by page.
func allEvents(t *testing.T, serverURL, key, id string) []json.RawMessage {
	t.Helper()
	c, err := agentserver.NewClient(serverURL, key, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	page := ""
	for {
		p, err := c.SearchEvents(context.Background(), id, page, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range p.Items {
			out = append(out, ev.Raw())
		}
		if p.NextPageID == nil {
			return out
		}
		page = *p.NextPageID
	}
}

// ids lists the events' ids.
func ids(events []json.RawMessage) []string {
	var out []string
	for _, e := range events {
		out = append(out, parse(e).ID)
	}
	return out
}

// sameOnce checks that got holds every event of want exactly once.
func sameOnce(t *testing.T, got, want []json.RawMessage) {
	t.Helper()
	count := map[string]int{}
	for _, id := range ids(got) {
		count[id]++
	}
	for id, n := range count {
		if n != 1 {
			t.Errorf("event %s was delivered %d times", id, n)
		}
	}
	for _, e := range want {
		if count[parse(e).ID] == 0 {
			t.Errorf("event %s was never delivered", describe(e))
		}
	}
	if len(count) != len(want) {
		t.Errorf("delivered %d distinct events; the server has %d", len(count), len(want))
	}
}
