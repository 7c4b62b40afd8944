package agentserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/internal/jsonshape"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

var (
	contractDump   = flag.String("contract.dump", "", "write each server's contract transcript (shapes and event stream) to this directory")
	contractUpdate = flag.Bool("contract.update", false, "rewrite the stand-in's recorded settings (fixtures/peers/agent_server_settings.json) from the real servers' GET /api/settings")
)

// exchange is one REST request of the scenario as a server answered it:
// the status, the shape of the body and, for an error, its detail with
// ids replaced.
type exchange struct {
	Name   string
	Status int
	Shape  jsonshape.Shape
	Detail string `json:",omitempty"`
	// Body is the answer as it came, for -contract.dump only.
	Body json.RawMessage
}

// frame is one event of a socket: its label (kind, and what tells events
// of one kind apart) and its shape.
type frame struct {
	Label string
	Shape jsonshape.Shape
	Raw   json.RawMessage // for -contract.dump only
}

// transcript is what one server did in the scenario.
type transcript struct {
	Server    string
	Exchanges []exchange
	// Live is the socket opened on the idle conversation before the
	// message that runs it, up to the snapshot sent once the run ended;
	// Replay a socket opened once it finished, with resend_mode=all, up to
	// the log's last event.
	Live, Replay []frame
	// Log is /events/search's items, labelled.
	Log []frame
}

// contractTarget is a server to run the scenario against.
type contractTarget struct {
	URL, Key string
	// LLM is the agent's llm: the scripted model for the real server; the
	// stand-in follows its --script and ignores it.
	LLM map[string]any
	// Ran waits until the agent's script has been played.
	Ran func()
}

// runContract plays the scenario on one server: the answers the bridge
// reads (server_info, settings, a conversation, its search and count,
// its events, a 404, a 422) and the event socket, live and replayed,
// while the agent calls the bridge's terminal (`echo hi`) and finishes.
func runContract(t *testing.T, b *bridge, tg contractTarget) *transcript {
	t.Helper()
	tr := &transcript{}
	conv := "" // the scenario's conversation, once created
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	call := func(name, method, path string, header map[string]string, body any) json.RawMessage {
		t.Helper()
		status, data := rest(ctx, t, tg, method, path, header, body)
		if name == "GET /api/conversations/search" {
			data = onlyConversation(t, data, conv)
		}
		ex := exchange{Name: name, Status: status, Body: data}
		if len(data) > 0 {
			s, err := jsonshape.Of(data)
			if err != nil {
				t.Fatalf("%s: %v: %s", name, err, data)
			}
			ex.Shape = s
		}
		if status >= 400 {
			var d struct {
				Detail json.RawMessage `json:"detail"`
			}
			json.Unmarshal(data, &d)
			ex.Detail = normalizeIDs(string(d.Detail))
		}
		tr.Exchanges = append(tr.Exchanges, ex)
		return data
	}
	call("GET /ready", http.MethodGet, "/ready", nil, nil)
	call("GET /server_info", http.MethodGet, "/server_info", nil, nil)
	call("GET /api/settings", http.MethodGet, "/api/settings", nil, nil)
	call("GET /api/settings (X-Expose-Secrets: encrypted)", http.MethodGet, "/api/settings", map[string]string{"X-Expose-Secrets": "encrypted"}, nil)
	call("POST /api/conversations without an agent", http.MethodPost, "/api/conversations",
		nil, map[string]any{"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": b.dir}})

	call("POST /api/conversations with an LLM without a model", http.MethodPost, "/api/conversations", nil, map[string]any{
		"agent":     map[string]any{"kind": "Agent", "llm": map[string]any{"api_key": "sk-x"}, "tools": []any{}},
		"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": b.dir},
	})

	// The request the bridge sends (agentserver.startConversation), with
	// no initial message so that the socket is open before anything runs,
	// and no title asked of the model.
	start := call("POST /api/conversations", http.MethodPost, "/api/conversations", nil, map[string]any{
		"agent": map[string]any{
			"kind":  "Agent",
			"llm":   tg.LLM,
			"tools": []any{},
			"mcp_config": map[string]any{"oh-bridge": map[string]any{"transport": "http", "url": b.ep.URL,
				"headers": map[string]string{"Authorization": "Bearer " + b.ep.Token}}},
		},
		"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": b.dir},
		"autotitle": false,
	})
	var created struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(start, &created); created.ID == "" {
		t.Fatalf("no conversation was created: %s", start)
	}
	conv = created.ID
	path := "/api/conversations/" + conv
	call("GET /api/conversations/{id} (idle)", http.MethodGet, path, nil, nil)

	live := openEvents(ctx, t, tg, conv, "resend_mode=all")
	live.await(t, "the first frame", func(fs []json.RawMessage) bool { return len(fs) > 0 })
	call("POST /api/conversations/{id}/events", http.MethodPost, path+"/events", nil,
		map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "Say hi in the terminal."}}, "run": true})
	tg.Ran()
	live.await(t, "the finish", func(fs []json.RawMessage) bool {
		return slices.ContainsFunc(fs, func(f json.RawMessage) bool {
			return label(f) == "ConversationStateUpdateEvent(execution_status=finished)"
		})
	})
	// The log, once it holds the finish; the live socket is kept up to its
	// last event (what comes after, a snapshot, may or may not be sent by
	// then).
	logged := ohtest.Poll(t, time.Minute, "the log to hold the finish", func() ([]json.RawMessage, bool) {
		var page struct {
			Items []json.RawMessage `json:"items"`
		}
		_, data := rest(ctx, t, tg, http.MethodGet, path+"/events/search?limit=100", nil, nil)
		json.Unmarshal(data, &page)
		return page.Items, slices.ContainsFunc(page.Items, func(f json.RawMessage) bool {
			return label(f) == "ConversationStateUpdateEvent(execution_status=finished)"
		})
	})
	lastID := eventID(logged[len(logged)-1])
	live.await(t, "the log's last event", func(fs []json.RawMessage) bool {
		return slices.ContainsFunc(fs, func(f json.RawMessage) bool { return eventID(f) == lastID })
	})
	for _, f := range logged {
		tr.Log = append(tr.Log, shapeOf(t, f))
	}

	call("GET /api/conversations/{id} (finished)", http.MethodGet, path, nil, nil)
	call("GET /api/conversations/search", http.MethodGet, "/api/conversations/search?limit=100&sort_order=UPDATED_AT_DESC", nil, nil)
	call("GET /api/conversations/count", http.MethodGet, "/api/conversations/count", nil, nil)
	call("GET /api/conversations/{id}/events/search", http.MethodGet, path+"/events/search?limit=100", nil, nil)
	call("GET /api/conversations/{id}/events/count", http.MethodGet, path+"/events/count", nil, nil)

	replay := openEvents(ctx, t, tg, conv, "resend_mode=all")
	replay.await(t, "the replayed log", func(fs []json.RawMessage) bool {
		return slices.ContainsFunc(fs, func(f json.RawMessage) bool { return eventID(f) == lastID })
	})
	for _, f := range replay.upTo(lastID) {
		tr.Replay = append(tr.Replay, shapeOf(t, f))
	}
	replay.close()
	// The live socket up to the snapshot the server sends once the run has
	// ended, which has come by now (the replay took longer), or up to the
	// log's last event when none came.
	for _, f := range live.upToSnapshotAfter(lastID) {
		tr.Live = append(tr.Live, shapeOf(t, f))
	}
	live.close()

	unknown := "/api/conversations/0b7d39a2-5b8f-4c53-a1a0-3f1b6f3c9e11"
	call("GET /api/conversations/{unknown}", http.MethodGet, unknown, nil, nil)
	call("POST /api/conversations/{unknown}/pause", http.MethodPost, unknown+"/pause", nil, nil)
	call("POST /api/conversations/{unknown}/interrupt", http.MethodPost, unknown+"/interrupt", nil, nil)
	call("DELETE /api/conversations/{unknown}", http.MethodDelete, unknown, nil, nil)
	call("GET /api/conversations/{unknown}/events/search", http.MethodGet, unknown+"/events/search", nil, nil)
	call("POST /api/conversations/{id}/run (finished)", http.MethodPost, path+"/run", nil, nil)
	call("DELETE /api/conversations/{id}", http.MethodDelete, path, nil, nil)
	call("GET /api/conversations/{id} (deleted)", http.MethodGet, path, nil, nil)
	return tr
}

// onlyConversation keeps the scenario's conversation of a search page: a
// shared server holds other tests' conversations too.
func onlyConversation(t *testing.T, data []byte, id string) []byte {
	t.Helper()
	var page map[string]json.RawMessage
	if err := json.Unmarshal(data, &page); err != nil {
		return data
	}
	var items []json.RawMessage
	json.Unmarshal(page["items"], &items)
	mine := slices.DeleteFunc(items, func(it json.RawMessage) bool { return eventID(it) != id })
	if len(mine) != 1 {
		t.Errorf("the search page holds the conversation %d times: %s", len(mine), data)
	}
	page["items"], _ = json.Marshal(mine)
	out, _ := json.Marshal(page)
	return out
}

// rest sends one request with the session key and returns the status and
// body.
func rest(ctx context.Context, t *testing.T, tg contractTarget, method, path string, header map[string]string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, tg.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Session-API-Key", tg.Key)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, data
}

var idPattern = regexp.MustCompile(`[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}`)

// normalizeIDs replaces conversation and event ids, with dashes or
// without, by <id>.
func normalizeIDs(s string) string { return idPattern.ReplaceAllString(s, "<id>") }

// socketLog is an event socket and the frames it received.
type socketLog struct {
	conn   *websocket.Conn
	mu     sync.Mutex
	cond   *sync.Cond
	frames []json.RawMessage
	err    error
}

func openEvents(ctx context.Context, t *testing.T, tg contractTarget, id, query string) *socketLog {
	t.Helper()
	u := "ws" + strings.TrimPrefix(tg.URL, "http") + "/sockets/events/" + id + "?" + query
	conn, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatalf("the event socket: %v", err)
	}
	conn.SetReadLimit(64 << 20)
	auth, _ := json.Marshal(map[string]string{"type": "auth", "session_api_key": tg.Key})
	if err := conn.Write(ctx, websocket.MessageText, auth); err != nil {
		t.Fatal(err)
	}
	s := &socketLog{conn: conn}
	s.cond = sync.NewCond(&s.mu)
	go func() {
		for {
			_, data, err := conn.Read(context.Background())
			s.mu.Lock()
			if err != nil {
				s.err = err
				s.cond.Broadcast()
				s.mu.Unlock()
				return
			}
			s.frames = append(s.frames, data)
			s.cond.Broadcast()
			s.mu.Unlock()
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *socketLog) await(t *testing.T, what string, ok func([]json.RawMessage) bool) {
	t.Helper()
	timer := time.AfterFunc(2*time.Minute, func() { s.mu.Lock(); s.err = fmt.Errorf("timed out"); s.cond.Broadcast(); s.mu.Unlock() })
	defer timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for !ok(s.frames) {
		if s.err != nil {
			var labels []string
			for _, f := range s.frames {
				labels = append(labels, label(f))
			}
			t.Fatalf("the event socket ended (%v) before %s; it sent %s", s.err, what, strings.Join(labels, ", "))
		}
		s.cond.Wait()
	}
}

// upTo is the frames received up to the one with the id.
func (s *socketLog) upTo(id string) []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.frames {
		if eventID(f) == id {
			return slices.Clone(s.frames[:i+1])
		}
	}
	return slices.Clone(s.frames)
}

// upToSnapshotAfter is the frames received up to the first full_state
// snapshot after the event with the id, or up to that event when none
// follows it.
func (s *socketLog) upToSnapshotAfter(id string) []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.frames, func(f json.RawMessage) bool { return eventID(f) == id })
	if i < 0 {
		return slices.Clone(s.frames)
	}
	end := i
	if j := slices.IndexFunc(s.frames[i+1:], func(f json.RawMessage) bool {
		return label(f) == "ConversationStateUpdateEvent(full_state)"
	}); j >= 0 {
		end = i + 1 + j
	}
	return slices.Clone(s.frames[:end+1])
}

func (s *socketLog) close() { s.conn.Close(websocket.StatusNormalClosure, "") }

func eventID(raw json.RawMessage) string { return parse(raw).ID }

// label names an event for the stream's order: its kind, and for a state
// update its key (and the execution status it sets), for an action or
// observation its tool, for a message its source.
func label(raw json.RawMessage) string {
	var e struct {
		Kind     string          `json:"kind"`
		Key      string          `json:"key"`
		Value    json.RawMessage `json:"value"`
		ToolName string          `json:"tool_name"`
		Source   string          `json:"source"`
	}
	json.Unmarshal(raw, &e)
	switch {
	case e.Kind == "ConversationStateUpdateEvent" && e.Key == "execution_status":
		var v string
		json.Unmarshal(e.Value, &v)
		return e.Kind + "(execution_status=" + v + ")"
	case e.Kind == "ConversationStateUpdateEvent":
		return e.Kind + "(" + e.Key + ")"
	case e.ToolName != "":
		return e.Kind + "(" + e.ToolName + ")"
	case e.Kind == "MessageEvent":
		return e.Kind + "(" + e.Source + ")"
	}
	return e.Kind
}

func shapeOf(t *testing.T, raw json.RawMessage) frame {
	t.Helper()
	s, err := jsonshape.Of(raw)
	if err != nil {
		t.Fatalf("an event that is not JSON: %v: %s", err, raw)
	}
	return frame{Label: label(raw), Shape: s, Raw: raw}
}

// dump writes a transcript for a person updating the stand-in.
func (tr *transcript) dump(t *testing.T, name string) {
	if *contractDump == "" {
		return
	}
	var b strings.Builder
	for _, ex := range tr.Exchanges {
		fmt.Fprintf(&b, "== %s → %d %s\n", ex.Name, ex.Status, ex.Detail)
		for _, l := range ex.Shape.Lines() {
			fmt.Fprintf(&b, "   %s\n", l)
		}
	}
	for _, stream := range []struct {
		name   string
		frames []frame
	}{{"live socket", tr.Live}, {"replay socket", tr.Replay}, {"events/search", tr.Log}} {
		fmt.Fprintf(&b, "== %s\n", stream.name)
		for _, f := range stream.frames {
			fmt.Fprintf(&b, "-- %s\n", f.Label)
			for _, l := range f.Shape.Lines() {
				fmt.Fprintf(&b, "   %s\n", l)
			}
		}
	}
	if err := os.MkdirAll(*contractDump, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*contractDump, name+".txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var raw strings.Builder
	for _, ex := range tr.Exchanges {
		fmt.Fprintf(&raw, "== %s → %d\n%s\n", ex.Name, ex.Status, ex.Body)
	}
	for _, stream := range []struct {
		name   string
		frames []frame
	}{{"live socket", tr.Live}, {"replay socket", tr.Replay}} {
		fmt.Fprintf(&raw, "== %s\n", stream.name)
		for _, f := range stream.frames {
			fmt.Fprintf(&raw, "%s\n", f.Raw)
		}
	}
	if err := os.WriteFile(filepath.Join(*contractDump, name+".json.txt"), []byte(raw.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStandInKeepsToTheRealServer is the contract that keeps the stand-in
// (fixtures/peers/agent_server_standin.py) from drifting: the same
// scenario runs against the real agent-server, whose agent's model is a
// scripted one, and the stand-in, whose agent follows its script; both
// agents call the bridge's terminal once and finish. Every REST answer's
// shape (field names and types, recursively), status and error detail,
// and every event socket's order of events and their shapes must be the
// same, but for the differences allowed below, each with its reason. The
// real server's events also keep to package ohevents' types
// (checkEventTypes).
func TestStandInKeepsToTheRealServer(t *testing.T) {
	for _, lock := range []string{realserver.Latest, realserver.Canvas} {
		t.Run(lock, func(t *testing.T) {
			b := newBridge(t)
			srv := sharedServer(t, lock)
			hi := "hi\n[The command completed with exit code 0.]"
			model := scriptedllm.Start(t,
				scriptedllm.Turn{ToolCalls: []scriptedllm.ToolCall{
					scriptedllm.Call("terminal", map[string]any{"command": "echo hi", "summary": "say hi"}),
				}},
				scriptedllm.Turn{Check: func(r *scriptedllm.Request) error {
					if res := lastToolResult(r); !strings.Contains(res, hi) {
						return fmt.Errorf("the terminal answered %q", res)
					}
					return nil
				}, ToolCalls: []scriptedllm.ToolCall{scriptedllm.Call("finish", map[string]any{"message": "It said hi."})}},
			)
			real := runContract(t, b, contractTarget{URL: srv.URL, Key: srv.Key,
				LLM: map[string]any{"model": "openai/oh-scripted", "base_url": model.URL, "api_key": "sk-scripted",
					"num_retries": 0, "usage_id": "agent"},
				Ran: func() { model.Wait(2 * time.Minute) }})
			real.dump(t, lock+"-real")
			checkEventTypes(t, lock, real)
			if *contractUpdate {
				recordSettings(t, realVersion(lock), real)
			}

			script := writeScript(t, []step{terminal("echo hi")}, []step{{"finish": "It said hi."}})
			p := agentservertest.Start(t, "--script", script, "--session-api-key", "k3y", "--version", realVersion(lock))
			standin := runContract(t, b, contractTarget{URL: p.URL, Key: "k3y",
				LLM: map[string]any{"model": "openai/oh-scripted", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-scripted",
					"num_retries": 0, "usage_id": "agent"},
				Ran: func() {
					if res := p.AwaitLine(t, "TOOL_RESULT "); !strings.Contains(res, `hi\n[The command completed with exit code 0.]`) {
						t.Errorf("the terminal answered the stand-in %s", res)
					}
				}})
			standin.dump(t, lock+"-standin")
			compareContract(t, lock, real, standin)
		})
	}
}

// recordSettings keeps a real server's GET /api/settings (the defaults of
// a fresh server) as the stand-in's for that version.
func recordSettings(t *testing.T, version string, tr *transcript) {
	t.Helper()
	file := filepath.Join(filepath.Dir(agentservertest.Script()), "agent_server_settings.json")
	all := map[string]json.RawMessage{}
	if data, err := os.ReadFile(file); err == nil {
		if err := json.Unmarshal(data, &all); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	for _, ex := range tr.Exchanges {
		if ex.Name == "GET /api/settings" {
			all[version] = ex.Body
		}
	}
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// realVersion is the version a lock installs, which the stand-in is told
// to be.
func realVersion(lock string) string {
	if lock == realserver.Canvas {
		return "1.49.1"
	}
	return "1.58.2"
}

func lastToolResult(r *scriptedllm.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "tool" {
			return r.Messages[i].Text()
		}
	}
	return ""
}
