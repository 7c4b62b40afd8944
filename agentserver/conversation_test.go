package agentserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/shellint"
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
	sess, err := session.New(session.Options{Roots: []string{dir}, ShellMode: shellint.ModeNoRC})
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
}

func newRecorder() *recorder {
	r := &recorder{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *recorder) onEvent(e json.RawMessage) {
	r.mu.Lock()
	r.events = append(r.events, append(json.RawMessage(nil), e...))
	r.cond.Broadcast()
	r.mu.Unlock()
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
		out = append(out, p.Items...)
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

// TestOlderServersGetTheWrappedMCPConfig: before SDK 1.31.2 mcp_config was
// {"mcpServers": {...}}; such a server rejects the flat map, so the agent
// would have no tools. The bridge sends each the shape it takes.
func TestOlderServersGetTheWrappedMCPConfig(t *testing.T) {
	for _, version := range []string{"1.21.0", "1.31.2"} {
		t.Run(version, func(t *testing.T) {
			b := newBridge(t)
			p := agentservertest.Start(t, "--version", version, "--script",
				writeScript(t, []step{terminal("echo hi")}, []step{{"message": "done"}}))
			r := newRecorder()
			o := connectOptions(b, p.URL, r)
			o.Task = "say hi"
			connect(t, o)
			res := p.AwaitLine(t, "TOOL_RESULT ")
			if !strings.Contains(res, `"is_error": false`) || !strings.Contains(res, "hi") {
				t.Errorf("tool result: %s", res)
			}
			r.awaitExecution(t, "finished")
		})
	}
}

// TestPauseAndResume: pause lets the step in flight finish and stops the
// agent before the next; resume goes on from there.
func TestPauseAndResume(t *testing.T) {
	b := newBridge(t)
	script := writeScript(t,
		[]step{terminal("sleep 1; echo one > one.txt")},
		[]step{terminal("echo two > two.txt")},
		[]step{{"message": "both written"}},
	)
	p := agentservertest.Start(t, "--script", script)
	r := newRecorder()
	o := connectOptions(b, p.URL, r)
	o.Task = "write one and two"
	s := connect(t, o)
	r.awaitEvent(t, "ActionEvent")
	if err := s.Pause(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.awaitExecution(t, "paused")
	if _, err := os.Stat(filepath.Join(b.dir, "one.txt")); err != nil {
		t.Errorf("the step in flight did not finish: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b.dir, "two.txt")); err == nil {
		t.Errorf("the agent went on after the pause")
	}
	if err := s.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.awaitExecution(t, "finished")
	if _, err := os.Stat(filepath.Join(b.dir, "two.txt")); err != nil {
		t.Errorf("resume did not go on: %v", err)
	}
	// Resume of a finished conversation runs it (there is nothing left).
	if err := s.Resume(context.Background()); err != nil {
		t.Errorf("resume when finished: %v", err)
	}
}

// TestInterruptStopsTheCommand: interrupting the agent cancels its MCP
// call, and the bridge interrupts the command it was running.
func TestInterruptStopsTheCommand(t *testing.T) {
	b := newBridge(t)
	marker := fmt.Sprintf("sleep %d", 40+time.Now().Nanosecond()%20)
	script := writeScript(t, []step{terminal(marker + " && touch late.txt")})
	p := agentservertest.Start(t, "--script", script)
	r := newRecorder()
	o := connectOptions(b, p.URL, r)
	o.Task = "sleep"
	s := connect(t, o)
	r.awaitEvent(t, "ActionEvent")
	ohtest.WaitFor(t, "the command to start", func() bool { return ohtest.Running(marker) })
	if err := s.Interrupt(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.awaitExecution(t, "paused")
	ohtest.WaitFor(t, "the command to be interrupted", func() bool { return !ohtest.Running(marker) })
	events := r.snapshot()
	if !has(events, "AgentErrorEvent") {
		t.Errorf("no AgentErrorEvent for the interrupted action")
	}
	if _, err := os.Stat(filepath.Join(b.dir, "late.txt")); err == nil {
		t.Errorf("the command ran on")
	}
	// The AgentErrorEvent answers the action by its tool call id (it has
	// no action_id): nothing is left running.
	r.await(t, "no running action", func(_ []json.RawMessage, st []agentserver.Status) bool { return last(st).RunningActions == 0 })
}

// TestServerDiesMidAction: an agent-server that dies while a tool call
// runs comes back with the conversation in "error" and the call answered
// by an AgentErrorEvent; the session follows.
func TestServerDiesMidAction(t *testing.T) {
	b := newBridge(t)
	state := t.TempDir()
	script := writeScript(t, []step{terminal("sleep 30")})
	p := agentservertest.Start(t, "--script", script, "--state", state)
	port := p.URL[strings.LastIndex(p.URL, ":")+1:]
	r := newRecorder()
	o := connectOptions(b, p.URL, r)
	o.Task = "wait"
	s := connect(t, o)
	r.await(t, "the running action", func(_ []json.RawMessage, st []agentserver.Status) bool { return last(st).RunningActions == 1 })
	p.Stop()
	agentservertest.Start(t, "--script", script, "--state", state, "--port", port)
	r.awaitExecution(t, "error")
	r.await(t, "the AgentErrorEvent", func(ev []json.RawMessage, st []agentserver.Status) bool {
		return has(ev, "AgentErrorEvent") && last(st).RunningActions == 0
	})
	if st := s.Status(); st.State != agentserver.StateConnected {
		t.Errorf("status %+v", st)
	}
}

// TestConfirmation: in confirmation mode the editor is asked about each
// action; an accepted one runs, a rejected one does not and the agent is
// told why.
func TestConfirmation(t *testing.T) {
	b := newBridge(t)
	script := writeScript(t,
		[]step{tool("file_editor", map[string]any{"command": "create", "path": filepath.Join(b.dir, "a.txt"), "file_text": "a\n"})},
		[]step{terminal("touch rejected.txt")},
	)
	p := agentservertest.Start(t, "--script", script)
	r := newRecorder()
	o := connectOptions(b, p.URL, r)
	o.Task = "write a, then touch"
	o.ConfirmationPolicy = "AlwaysConfirm"
	var mu sync.Mutex
	var asked []string
	o.Confirm = func(_ context.Context, action json.RawMessage) (agentserver.Decision, error) {
		e := parse(action)
		mu.Lock()
		asked = append(asked, e.Kind+" "+e.ToolName+" "+string(e.Action.Data))
		mu.Unlock()
		if e.ToolName == "terminal" {
			return agentserver.Decision{Reason: "not now"}, nil
		}
		return agentserver.Decision{Accept: true}, nil
	}
	connect(t, o)
	r.awaitEvent(t, "UserRejectObservation")
	r.awaitExecution(t, "idle")
	if _, err := os.Stat(filepath.Join(b.dir, "a.txt")); err != nil {
		t.Errorf("the accepted action did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b.dir, "rejected.txt")); err == nil {
		t.Errorf("the rejected action ran")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || !strings.HasPrefix(asked[0], "ActionEvent file_editor ") || asked[1] != `ActionEvent terminal {"command": "touch rejected.txt"}` {
		t.Errorf("asked: %q", asked)
	}
	for _, e := range r.snapshot() {
		if ev := parse(e); ev.Kind == "UserRejectObservation" && ev.RejectionReason != "not now" {
			t.Errorf("rejection reason %q; want the editor's", ev.RejectionReason)
		}
	}
}

// TestDroppedStreamLosesNothing: the event socket is cut again and again
// while the agent works; the session reconnects from its last event and
// the editor still gets every event exactly once.
func TestDroppedStreamLosesNothing(t *testing.T) {
	b := newBridge(t)
	var turns [][]step
	for i := range 12 {
		turns = append(turns, []step{terminal(fmt.Sprintf("echo step %d; sleep 0.05", i))})
	}
	turns = append(turns, []step{{"finish": "done"}})
	p := agentservertest.Start(t, "--script", writeScript(t, turns...))
	px := newProxy(t, strings.TrimPrefix(p.URL, "http://"))
	r := newRecorder()
	o := connectOptions(b, px.URL(), r)
	o.Task = "count"
	s := connect(t, o)
	cuts := 0
	for cuts < 6 {
		r.await(t, "progress", func(ev []json.RawMessage, st []agentserver.Status) bool {
			return len(ev) > cuts*3 && last(st).State == agentserver.StateConnected
		})
		px.cut()
		cuts++
		time.Sleep(30 * time.Millisecond)
	}
	p.AwaitLine(t, "SCRIPT_DONE ")
	r.awaitExecution(t, "finished")
	r.awaitEvent(t, "ObservationEvent(finish)")
	sameOnce(t, persisted(r.snapshot()), allEvents(t, p.URL, "", s.ConversationID()))
	reconnects := 0
	r.mu.Lock()
	for _, st := range r.statuses {
		if st.State == agentserver.StateReconnecting {
			reconnects++
		}
	}
	r.mu.Unlock()
	if reconnects == 0 {
		t.Errorf("the session never saw the stream drop")
	}
}

// TestServerRestart: the agent-server restarts on the same port with its
// conversations on disk; the session finds it again and the conversation
// goes on, no event lost or repeated.
func TestServerRestart(t *testing.T) {
	b := newBridge(t)
	state := t.TempDir()
	script := writeScript(t,
		[]step{terminal("echo before")},
		[]step{{"message": "first part done"}},
		[]step{terminal("echo after")},
		[]step{{"finish": "all done"}},
	)
	p := agentservertest.Start(t, "--script", script, "--state", state)
	port := p.URL[strings.LastIndex(p.URL, ":")+1:]
	r := newRecorder()
	o := connectOptions(b, p.URL, r)
	o.Task = "two parts"
	s := connect(t, o)
	r.awaitExecution(t, "finished")
	p.Stop()
	r.await(t, "the session to notice", func(_ []json.RawMessage, st []agentserver.Status) bool {
		return last(st).State == agentserver.StateReconnecting
	})
	if err := s.SendMessage(context.Background(), "go on"); err == nil {
		t.Errorf("sending with the server down succeeded")
	} else if !strings.Contains(err.Error(), "cannot reach the OpenHands agent-server") {
		t.Errorf("sending with the server down: %v", err)
	}
	p2 := agentservertest.Start(t, "--script", script, "--state", state, "--port", port)
	r.await(t, "the session to reconnect", func(_ []json.RawMessage, st []agentserver.Status) bool {
		return last(st).State == agentserver.StateConnected
	})
	if err := s.SendMessage(context.Background(), "go on"); err != nil {
		t.Fatal(err)
	}
	p2.AwaitLine(t, "SCRIPT_DONE ")
	r.await(t, "the finish", func(ev []json.RawMessage, st []agentserver.Status) bool {
		return has(ev, "ObservationEvent(finish)") && last(st).ExecutionStatus == "finished"
	})
	sameOnce(t, persisted(r.snapshot()), allEvents(t, p2.URL, "", s.ConversationID()))
	if obs := observations(r.snapshot()); len(obs) != 2 || !strings.Contains(obs[1], "after") {
		t.Errorf("observations: %q", obs)
	}
}
