package updates_test

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

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/ohevents"
	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/updates"
)

// recorder keeps the updates a tracker emits, as JSON objects.
type recorder struct {
	mu      sync.Mutex
	updates []map[string]any
}

func (r *recorder) emit(u updates.Update) {
	b, _ := json.Marshal(u)
	var m map[string]any
	json.Unmarshal(b, &m)
	r.mu.Lock()
	r.updates = append(r.updates, m)
	r.mu.Unlock()
}

func (r *recorder) all() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.updates...)
}

// call folds a tool call's updates into its final state.
func (r *recorder) call(id string) map[string]any {
	out := map[string]any{}
	for _, u := range r.all() {
		if u["toolCallId"] == id {
			for k, v := range u {
				out[k] = v
			}
		}
	}
	return out
}

func contentText(c map[string]any) string {
	var b strings.Builder
	list, _ := c["content"].([]any)
	for _, x := range list {
		m := x.(map[string]any)
		if inner, ok := m["content"].(map[string]any); ok {
			b.WriteString(inner["text"].(string))
		}
	}
	return b.String()
}

func event(t *testing.T, v map[string]any) ohevents.Event {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ohevents.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func text(s string) []map[string]any { return []map[string]any{{"type": "text", "text": s}} }

func action(id, tool string, args map[string]any, thought string) map[string]any {
	return map[string]any{"id": "ev-" + id, "kind": "ActionEvent", "source": "agent", "tool_name": tool, "tool_call_id": id,
		"thought": text(thought), "action": map[string]any{"kind": "MCPToolAction", "data": args}}
}

func observation(id, tool, body string, isError bool) map[string]any {
	return map[string]any{"id": "obs-" + id, "kind": "ObservationEvent", "source": "environment", "tool_name": tool,
		"tool_call_id": id, "action_id": "ev-" + id, "observation": map[string]any{"kind": "MCPToolObservation",
			"content": append(text("[Tool '"+tool+"' executed.]"), text(body)...), "is_error": isError}}
}

// TestReplayedEvents reads a conversation from its events alone, as when
// it is loaded: the texts the agent saw, snippet diffs, the plan.
func TestReplayedEvents(t *testing.T) {
	r := &recorder{}
	tr := updates.New(updates.Options{Emit: r.emit})
	for _, e := range []map[string]any{
		{"id": "m1", "kind": "MessageEvent", "source": "user", "llm_message": map[string]any{"role": "user", "content": text("Fix it.")}},
		action("c1", "terminal", map[string]any{"command": "make test"}, "Run the tests."),
		observation("c1", "terminal", "FAIL\n[The command completed with exit code 2.]", false),
		action("c2", "file_editor", map[string]any{"command": "str_replace", "path": "/w/a.go", "old_str": "x", "new_str": "y"}, ""),
		observation("c2", "file_editor", "The file /w/a.go has been edited.", false),
		action("c3", "task_tracker", map[string]any{"command": "plan", "task_list": []map[string]any{{"title": "Fix", "status": "done"}}}, ""),
		observation("c3", "task_tracker", "Task list has been updated with 1 item.", false),
		action("c4", "file_editor", map[string]any{"command": "view", "path": "/w/missing"}, ""),
		observation("c4", "file_editor", "ERROR: The path /w/missing does not exist.", true),
		{"id": "x1", "kind": "ActionEvent", "source": "agent", "tool_name": "finish", "tool_call_id": "f1",
			"action": map[string]any{"kind": "FinishAction", "message": "All green."}},
		{"id": "e1", "kind": "ConversationErrorEvent", "source": "environment", "code": "MaxIterationsReached", "detail": "Agent reached maximum iterations limit (500)."},
	} {
		tr.Event(event(t, e))
	}
	ups := r.all()
	kinds := []string{}
	for _, u := range ups {
		kinds = append(kinds, u["sessionUpdate"].(string))
	}
	want := "user_message_chunk agent_thought_chunk tool_call tool_call_update tool_call tool_call_update tool_call plan tool_call_update tool_call tool_call_update agent_message_chunk agent_message_chunk"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("updates:\n got %s\nwant %s", got, want)
	}
	run := r.call("c1")
	if run["kind"] != "execute" || run["status"] != "completed" || !strings.Contains(contentText(run), "FAIL") ||
		run["rawOutput"].(map[string]any)["exitCode"] != 2.0 || run["title"] != "Run `make test`" {
		t.Errorf("command card: %v", run)
	}
	edit := r.call("c2")
	diff := edit["content"].([]any)[0].(map[string]any)
	if edit["kind"] != "edit" || diff["type"] != "diff" || diff["oldText"] != "x" || diff["newText"] != "y" || diff["path"] != "/w/a.go" {
		t.Errorf("edit card: %v", edit)
	}
	if loc := edit["locations"].([]any)[0].(map[string]any); loc["path"] != "/w/a.go" {
		t.Errorf("edit location: %v", loc)
	}
	plan := ups[7]["entries"].([]any)[0].(map[string]any)
	if plan["content"] != "Fix" || plan["status"] != "completed" || plan["priority"] != "medium" {
		t.Errorf("plan: %v", plan)
	}
	if view := r.call("c4"); view["status"] != "failed" || !strings.Contains(contentText(view), "does not exist") {
		t.Errorf("failed view: %v", view)
	}
	if last := ups[len(ups)-1]; last["_meta"].(map[string]any)["ohBridge"].(map[string]any)["kind"] != "error" ||
		!strings.Contains(last["content"].(map[string]any)["text"].(string), "MaxIterationsReached") {
		t.Errorf("error message: %v", last)
	}
	if msg := ups[len(ups)-2]; msg["content"].(map[string]any)["text"] != "All green." {
		t.Errorf("finish message: %v", msg)
	}
}

// TestLiveCalls follows calls the session really runs: the command's
// output streams into its card from the agent's terminal, without the
// shell's machinery, and an edit's card has the whole file's diff.
func TestLiveCalls(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	os.WriteFile(file, []byte("one\ntwo\n"), 0o644)
	sess, err := session.New(session.Options{Roots: session.Candidates("test", dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	agent, err := sess.NewAgent(session.AgentOptions{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	tr := updates.New(updates.Options{Emit: r.emit, Throttle: 10 * time.Millisecond})
	defer sess.Observe(tr.Observer())()
	ctx := context.Background()

	run := func(id, tool string, args map[string]any) *ohtools.Observation {
		t.Helper()
		tr.Event(event(t, action(id, tool, args, "")))
		raw, _ := json.Marshal(args)
		if got := tr.ToolCallID(tool, raw); got != id {
			t.Errorf("ToolCallID before the call = %q, want %q", got, id)
		}
		obs, err := agent.Call(ctx, tool, raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		tr.Event(event(t, observation(id, tool, obs.Text(), obs.IsError)))
		return obs
	}

	obs := run("c1", "terminal", map[string]any{"command": "for i in 1 2 3; do echo line-$i; sleep 0.1; done; false"})
	card := r.call("c1")
	if card["status"] != "completed" || card["rawOutput"].(map[string]any)["exitCode"] != 1.0 {
		t.Errorf("command card: %v", card)
	}
	// The card ends with what the agent received, at its completion.
	if out := contentText(card); out != "line-1\nline-2\nline-3" || !strings.HasPrefix(obs.Text(), out+"\n[The command completed") {
		t.Errorf("command output = %q, want the three lines the agent got:\n%s", out, obs.Text())
	}
	var live, meta bool
	for _, u := range r.all() {
		if u["toolCallId"] == "c1" && u["status"] == nil && strings.Contains(contentText(u), "line-1") && !strings.Contains(contentText(u), "line-3") {
			live = true
		}
		if m, ok := u["_meta"].(map[string]any); ok && u["status"] == "in_progress" && m["ohBridge"].(map[string]any)["terminalId"] == agent.Info().TerminalID {
			meta = true
		}
	}
	if !live {
		t.Errorf("no update carried the output while the command ran: %v", r.all())
	}
	if !meta {
		t.Errorf("no in_progress update named the agent's terminal: %v", r.all())
	}

	run("c2", "file_editor", map[string]any{"command": "str_replace", "path": file, "old_str": "two", "new_str": "2"})
	diff := r.call("c2")["content"].([]any)[0].(map[string]any)
	if diff["oldText"] != "one\ntwo\n" || diff["newText"] != "one\n2\n" {
		t.Errorf("edit diff = %v, want the whole file before and after", diff)
	}

	created := filepath.Join(dir, "new.txt")
	run("c3", "file_editor", map[string]any{"command": "create", "path": created, "file_text": "hi\n"})
	diff = r.call("c3")["content"].([]any)[0].(map[string]any)
	if old, ok := diff["oldText"]; !ok || old != nil || diff["newText"] != "hi\n" {
		t.Errorf("create diff = %v, want oldText null", diff)
	}
}

// TestCallBeforeAction binds a call the session starts before the
// agent-server's event for it arrives.
func TestCallBeforeAction(t *testing.T) {
	agent, tr, r := liveTracker(t, 10*time.Millisecond)
	args := map[string]any{"command": "echo early; sleep 0.5; echo late"}
	raw, _ := json.Marshal(args)
	done := make(chan *ohtools.Observation)
	go func() {
		obs, _ := agent.Call(context.Background(), "terminal", raw, nil)
		done <- obs
	}()
	// The tracker has the call once it reports the agent running it.
	ohtest.WaitWithin(t, 10*time.Second, "the call to start", func() bool { return len(tr.RunningAgents()) == 1 })
	tr.Event(event(t, action("c1", "terminal", args, "")))
	obs := <-done
	tr.Event(event(t, observation("c1", "terminal", obs.Text(), false)))
	// The terminal's output reaches the tracker on its own goroutine.
	ohtest.Poll(t, 2*time.Second, "the output after the action arrived to include late", func() (string, bool) {
		out := contentText(r.call("c1"))
		return out, strings.Contains(out, "late")
	})
}

// TestForgedMarkKeepsTheCard: a command that prints look-alikes of the
// shell's end and prompt marks (without the terminal's nonce) goes on
// showing its output live: the card reads the text the terminal parsed,
// not the raw stream.
func TestForgedMarkKeepsTheCard(t *testing.T) {
	agent, tr, r := liveTracker(t, 5*time.Millisecond)
	// The card's live update of "after-forged" goes out 5 ms after it is
	// printed; the command ends half a second later.
	args := map[string]any{"command": `printf 'before\n\033]633;D;0\007\033]633;A\007'; echo after-forged; sleep 0.5`}
	raw, _ := json.Marshal(args)
	tr.Event(event(t, action("c1", "terminal", args, "")))
	obs, err := agent.Call(context.Background(), "terminal", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.Event(event(t, observation("c1", "terminal", obs.Text(), false)))
	live := false
	for _, u := range r.all() {
		if u["toolCallId"] == "c1" && u["status"] == nil && strings.Contains(contentText(u), "after-forged") {
			live = true
		}
	}
	if !live {
		t.Errorf("no live update showed the output after the forged marks: %v", r.all())
	}
}

// liveTracker is a tracker observing a live session with one agent.
func liveTracker(t *testing.T, throttle time.Duration) (*session.Agent, *updates.Tracker, *recorder) {
	t.Helper()
	sess, err := session.New(session.Options{Roots: session.Candidates("test", t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(context.Background()) })
	agent, err := sess.NewAgent(session.AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	tr := updates.New(updates.Options{Emit: r.emit, Throttle: throttle})
	t.Cleanup(sess.Observe(tr.Observer()))
	return agent, tr, r
}

// displayed folds a call's display terminal from its updates: the id its
// tool_call opened, the output appended, and the exit.
type displayed struct {
	opened  string
	output  string
	exit    map[string]any
	content []any // the last update's
	status  string
	texts   int // updates that set text content
}

func (r *recorder) display(id string) displayed {
	var d displayed
	for _, u := range r.all() {
		if u["toolCallId"] != id {
			continue
		}
		meta, _ := u["_meta"].(map[string]any)
		if info, ok := meta["terminal_info"].(map[string]any); ok && u["sessionUpdate"] == "tool_call" {
			d.opened = info["terminal_id"].(string)
		}
		if out, ok := meta["terminal_output"].(map[string]any); ok {
			if out["terminal_id"] != id {
				d.output += "[wrong terminal]"
			}
			d.output += out["data"].(string)
		}
		if exit, ok := meta["terminal_exit"].(map[string]any); ok {
			d.exit = exit
		}
		if c, ok := u["content"].([]any); ok {
			d.content = c
			for _, x := range c {
				if x.(map[string]any)["type"] == "content" {
					d.texts++
				}
			}
		}
		if st, ok := u["status"].(string); ok {
			d.status = st
		}
	}
	return d
}

func embedsTerminal(content []any, id string) bool {
	if len(content) == 0 {
		return false
	}
	first := content[0].(map[string]any)
	return first["type"] == "terminal" && first["terminalId"] == id
}

// TestDisplayTerminalLive: for a client with display terminals, a command
// the session runs opens one named by its call, appends its output as it
// comes, and exits it with the command's code; the card's content stays
// the terminal.
func TestDisplayTerminalLive(t *testing.T) {
	sess, err := session.New(session.Options{Roots: session.Candidates("test", t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	agent, err := sess.NewAgent(session.AgentOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	tr := updates.New(updates.Options{Emit: r.emit, Throttle: 10 * time.Millisecond, TerminalOutput: true})
	defer sess.Observe(tr.Observer())()

	args := map[string]any{"command": "for i in 1 2 3; do echo line-$i; sleep 0.1; done; false"}
	raw, _ := json.Marshal(args)
	tr.Event(event(t, action("c1", "terminal", args, "")))
	obs, err := agent.Call(context.Background(), "terminal", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.Event(event(t, observation("c1", "terminal", obs.Text(), obs.IsError)))

	d := r.display("c1")
	if d.opened != "c1" {
		t.Errorf("the tool_call opened terminal %q, want the call's id", d.opened)
	}
	if strings.TrimSuffix(d.output, "\n") != "line-1\nline-2\nline-3" {
		t.Errorf("the terminal was sent %q, want the three lines", d.output)
	}
	if d.exit["terminal_id"] != "c1" || d.exit["exit_code"] != 1.0 || d.exit["signal"] != nil {
		t.Errorf("terminal_exit = %v, want c1 with exit_code 1 and signal null", d.exit)
	}
	if d.status != "completed" || !embedsTerminal(d.content, "c1") || len(d.content) != 1 || d.texts != 0 {
		t.Errorf("the card ended %s with content %v (%d text updates), want completed with the terminal alone", d.status, d.content, d.texts)
	}
	// The output went out while the command ran, not all at its end.
	appends := 0
	for _, u := range r.all() {
		if m, ok := u["_meta"].(map[string]any); ok && m["terminal_output"] != nil {
			appends++
		}
	}
	if appends < 2 {
		t.Errorf("%d terminal_output updates, want the lines as they came", appends)
	}
}

// TestDisplayTerminalReplay: a command that did not run here (a replayed
// conversation) shows what the agent saw in its terminal, with the code
// its text gives; one that failed keeps its terminal and says why.
func TestDisplayTerminalReplay(t *testing.T) {
	r := &recorder{}
	tr := updates.New(updates.Options{Emit: r.emit, TerminalOutput: true})
	for _, e := range []map[string]any{
		action("c1", "terminal", map[string]any{"command": "make test"}, ""),
		observation("c1", "terminal", "FAIL\n[The command completed with exit code 2.]", false),
		action("c2", "terminal", map[string]any{"command": "rm -rf /"}, ""),
		{"id": "rej", "kind": "UserRejectObservation", "source": "environment", "tool_name": "terminal", "tool_call_id": "c2",
			"action_id": "ev-c2", "rejection_reason": "User rejected the action."},
		action("c3", "file_editor", map[string]any{"command": "view", "path": "/w/a.go"}, ""),
		observation("c3", "file_editor", "1\tpackage a", false),
	} {
		tr.Event(event(t, e))
	}
	d := r.display("c1")
	if d.opened != "c1" || !strings.HasPrefix(d.output, "FAIL") || d.exit["exit_code"] != 2.0 || d.status != "completed" || !embedsTerminal(d.content, "c1") {
		t.Errorf("replayed command: %+v", d)
	}
	if r.call("c1")["rawOutput"].(map[string]any)["exitCode"] != 2.0 {
		t.Errorf("rawOutput = %v, want exitCode 2", r.call("c1")["rawOutput"])
	}
	d = r.display("c2")
	if d.status != "failed" || !embedsTerminal(d.content, "c2") || d.texts != 1 || d.exit == nil || d.exit["exit_code"] != nil {
		t.Errorf("rejected command: %+v, want failed, its terminal then the reason, exit_code null", d)
	}
	if !strings.Contains(contentText(r.call("c2")), "Rejected") {
		t.Errorf("rejected command's text = %q", contentText(r.call("c2")))
	}
	if d := r.display("c3"); d.opened != "" || d.exit != nil || !strings.Contains(contentText(r.call("c3")), "package a") {
		t.Errorf("a file view has no terminal: %+v", d)
	}
}

// TestTitles: a card's title, and a question's, is the action's title as
// a heading for OpenHands' tools, else the summary or the tool's name.
func TestTitles(t *testing.T) {
	r := &recorder{}
	tr := updates.New(updates.Options{Emit: r.emit})
	other := action("c2", "fetch_url", map[string]any{"url": "https://x"}, "")
	other["summary"] = "fetch the docs"
	for _, e := range []map[string]any{action("c1", "terminal", map[string]any{"command": "false"}, ""), other} {
		tr.Event(event(t, e))
	}
	for id, want := range map[string]string{"c1": "Run `false`", "c2": "fetch the docs"} {
		got, ok := tr.ToolCallTitle(id)
		if !ok || got != want || r.call(id)["title"] != want {
			t.Errorf("%s: ToolCallTitle = %q, %v; card title %v; want %q", id, got, ok, r.call(id)["title"], want)
		}
	}
	if _, ok := tr.ToolCallTitle("c9"); ok {
		t.Error("ToolCallTitle knows a call never reported")
	}
	if got := updates.Title("terminal", json.RawMessage(`{"command":"false"}`), "x"); got != "Run `false`" {
		t.Errorf("Title = %q", got)
	}
	if got := updates.Title("fetch_url", nil, "fetch_url"); got != "fetch_url" {
		t.Errorf("Title of another tool = %q, want its fallback", got)
	}
}

// TestRunningAgents names the agent whose command the conversation waits
// on: before the agent-server reported the call (its events can trail a
// running step), once it did, and no one after the call ended.
func TestRunningAgents(t *testing.T) {
	agent, tr, _ := liveTracker(t, 10*time.Millisecond)
	id := agent.Info().ID
	args := map[string]any{"command": "sleep 30"}
	raw, _ := json.Marshal(args)
	done := make(chan struct{})
	go func() {
		agent.Call(context.Background(), "terminal", raw, nil)
		close(done)
	}()
	running := func(want []string) {
		t.Helper()
		ohtest.Poll(t, 5*time.Second, fmt.Sprintf("RunningAgents to be %q", want), func() ([]string, bool) {
			got := tr.RunningAgents()
			return got, slices.Equal(got, want)
		})
	}
	running([]string{id})
	tr.Event(event(t, action("c1", "terminal", args, "")))
	running([]string{id})
	// The call is reported from its start, perhaps before the shell runs
	// the command: interrupt until it ends.
	for stopped := false; !stopped; {
		agent.Interrupt(context.Background())
		select {
		case <-done:
			stopped = true
		case <-time.After(100 * time.Millisecond):
		}
	}
	running(nil)
}
