package updates

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/oh-bridge/oh-bridge/ohevents"
	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/session"
)

// Options configure a Tracker.
type Options struct {
	// Emit receives the updates in order. It is called with the tracker's
	// lock held, so it must not call back into the tracker.
	Emit func(Update)
	// Throttle spaces the updates of a command's live output (100 ms).
	Throttle time.Duration
	// MaxOutput bounds the output a running command's card keeps, its
	// head and its tail (64 KiB), and the output one update appends to a
	// display terminal.
	MaxOutput int
	// TerminalOutput: the client shows a command's output in a display
	// terminal of its own (it advertised clientCapabilities._meta.
	// terminal_output): a command's card names the terminal, and its
	// output goes there as it comes, in _meta.terminal_output, instead of
	// replacing the card's text.
	TerminalOutput bool
}

// Tracker follows one conversation. Feed it the agent-server's events
// (Event) and, while it is live, the session's calls and terminals
// (Observer): a call the agent makes through the bridge's tools is then
// shown with its live output and the whole file's diff. Events alone, as
// when a conversation is replayed, give the texts the agent saw.
type Tracker struct {
	opts Options

	mu      sync.Mutex
	calls   map[string]*call  // by tool call id
	waiting []*call           // actions whose session call has not started
	early   []*early          // session calls not yet matched to an action
	live    map[int64]*call   // by session call id
	running map[string]*call  // by terminal id: the call whose command shows there
	unbound map[string]*early // by terminal id: a command call still waiting for its action
	// dropNew: the agent's new tool calls are not announced (DropNewCalls);
	// dropped are the ids of those it made, whose errors say nothing either.
	dropNew bool
	dropped map[string]bool
}

// call is one tool call of the agent.
type call struct {
	id    string
	tool  string
	key   string
	args  json.RawMessage
	title string // as its card shows it
	path  string
	// card is what the tool's declaration says the card shows (its kind,
	// the file, the change proposed, the plan set); zero when ohtools does
	// not know the tool or its arguments.
	card ohtools.Card
	kind ohtools.CardKind
	// terminal is where the command ran, when it ran in this session; out
	// is its live output; agent is the session's agent that runs it.
	terminal string
	agent    string
	out      outputBuf
	flush    *time.Timer
	// awaitEnd: the call ended with its command; its output is complete
	// at the terminal's next end mark.
	awaitEnd bool
	sent     string // the output last sent
	// end is the session's report of the call's end, when it ran here.
	end *session.CallEvent
	// over: the card got its final update; nothing may follow it.
	over bool
	// display: the card shows its output in the client's display
	// terminal (Options.TerminalOutput). unsent is the output not yet
	// appended there; shown what was, while it is under showLimit (to
	// complete it at the end with the output the agent received).
	display bool
	unsent  []byte
	shown   []byte
	// shownAll: shown holds everything appended.
	shownAll bool
}

// showLimit bounds the copy of a display terminal's output kept to
// complete it at the end: past it (the agent's own text is cut at 30,000
// characters anyway) the terminal keeps what it was sent.
const showLimit = 256 << 10

// early is a session call whose action has not arrived yet. A command's
// output that comes meanwhile is kept for its card.
type early struct {
	ev   session.CallEvent
	key  string
	seen time.Time
	out  outputBuf
	// end is the call's end, when it came before the action did (the
	// agent-server's events can trail its tool calls).
	end *session.CallEvent
}

// earlyTTL bounds how long a session call waits for its action: calls of
// other agents sharing the session never get one.
const earlyTTL = 30 * time.Second

// New returns a tracker.
func New(o Options) *Tracker {
	if o.Throttle == 0 {
		o.Throttle = 100 * time.Millisecond
	}
	if o.MaxOutput == 0 {
		o.MaxOutput = 64 << 10
	}
	return &Tracker{opts: o, calls: map[string]*call{}, live: map[int64]*call{},
		running: map[string]*call{}, unbound: map[string]*early{}, dropped: map[string]bool{}}
}

// Observer is the tracker's view of the session's calls and terminals.
func (t *Tracker) Observer() session.Observer {
	return session.Observer{OnCall: t.sessionCall, OnTerminal: t.terminal}
}

// ToolCallTitle is the title of the tool call id as its card shows it,
// when the tracker has seen the call: a question about the call says it
// the same way.
func (t *Tracker) ToolCallTitle(id string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.calls[id]
	if c == nil {
		return "", false
	}
	return c.title, true
}

// DropNewCalls stops announcing the agent's tool calls, until ShowNewCalls:
// the person cancelled the turn, and a call the agent makes after that is
// refused, never run, so a tool_call for it would show the client new work
// in a turn it stopped. An action that arrives meanwhile is dropped with its
// thought, and so is what follows of it (its session call, its end). Calls
// announced before go on to their end, as ACP lets them ("The Agent MAY
// send session/update notifications with content or tool call updates
// after receiving the session/cancel notification"); so do messages.
func (t *Tracker) DropNewCalls() {
	t.mu.Lock()
	t.dropNew = true
	t.mu.Unlock()
}

// ShowNewCalls announces the agent's tool calls again: a new turn began.
func (t *Tracker) ShowNewCalls() {
	t.mu.Lock()
	t.dropNew = false
	t.mu.Unlock()
}

// Title is the title a call of tool with args has on its card, when the
// tool is one of OpenHands' (ohtools parses it): its action's title as a
// heading ("Run `make test`", "View /w/a.go"). Otherwise it is fallback.
func Title(tool string, args json.RawMessage, fallback string) string {
	if p, err := ohtools.Parse(tool, args); err == nil {
		return Heading(p.Action.Title)
	}
	return fallback
}

// Event takes one agent-server event, in the order the server sent them.
func (t *Tracker) Event(ev ohevents.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e := ev.(type) {
	case *ohevents.MessageEvent:
		t.message(e)
	case *ohevents.ActionEvent:
		t.action(e)
	case *ohevents.ObservationEvent:
		t.observation(e)
	case *ohevents.UserRejectObservation:
		t.fail(e.ToolCallID, "Rejected: "+e.RejectionReason)
	case *ohevents.AgentErrorEvent:
		if _, ok := t.calls[e.ToolCallID]; ok {
			t.fail(e.ToolCallID, e.Error)
		} else if !t.dropped[e.ToolCallID] {
			// An error of no card is a message; a dropped call's ("Tool
			// call interrupted before completion") is not shown at all.
			t.emit(&Chunk{SessionUpdate: "agent_message_chunk", Content: text(e.Error), Meta: meta(e.ID, "error")})
		}
	case *ohevents.ConversationErrorEvent:
		msg := e.Detail
		if e.Code != "" {
			msg = e.Code + ": " + e.Detail
		}
		t.emit(&Chunk{SessionUpdate: "agent_message_chunk", Content: text(msg), Meta: meta(e.ID, "error")})
	}
}

func (t *Tracker) emit(u Update) {
	if t.opts.Emit != nil {
		t.opts.Emit(u)
	}
}

func meta(id, kind string) *Meta {
	return &Meta{OhBridge: MetaFields{MessageID: id, Kind: kind}}
}

func (t *Tracker) message(e *ohevents.MessageEvent) {
	if e.LLMMessage == nil {
		return
	}
	body := joinText(e.LLMMessage.Content)
	if e.Source == "user" {
		if body != "" {
			t.emit(&Chunk{SessionUpdate: "user_message_chunk", Content: text(body), Meta: meta(e.ID, "")})
		}
		return
	}
	if r := ohevents.OrEmpty(e.LLMMessage.ReasoningContent); r != "" {
		t.emit(&Chunk{SessionUpdate: "agent_thought_chunk", Content: text(r), Meta: meta(e.ID+"#thought", "")})
	}
	if body != "" {
		t.emit(&Chunk{SessionUpdate: "agent_message_chunk", Content: text(body), Meta: meta(e.ID, "")})
	}
}

// joinText joins the text blocks of a message or an observation.
func joinText(items []ohevents.TextContent) string {
	var parts []string
	for _, it := range items {
		if it.Text != "" && (it.Type == "" || it.Type == "text") {
			parts = append(parts, it.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (t *Tracker) action(e *ohevents.ActionEvent) {
	if t.dropNew && e.ToolName != "finish" && e.ToolName != "think" {
		// Never added to calls: its observation finds no card.
		if e.ToolCallID != "" {
			t.dropped[e.ToolCallID] = true
		}
		return
	}
	thought := joinText(e.Thought)
	if r := ohevents.OrEmpty(e.ReasoningContent); r != "" {
		thought = strings.TrimSpace(r + "\n" + thought)
	}
	if thought != "" {
		t.emit(&Chunk{SessionUpdate: "agent_thought_chunk", Content: text(thought), Meta: meta(e.ID+"#thought", "")})
	}
	var a ohevents.Action
	if e.Action != nil {
		a = *e.Action
	}
	switch e.ToolName {
	case "finish":
		if a.Message != "" {
			t.emit(&Chunk{SessionUpdate: "agent_message_chunk", Content: text(a.Message), Meta: meta(e.ID, "")})
		}
		return
	case "think":
		if a.Thought != "" {
			t.emit(&Chunk{SessionUpdate: "agent_thought_chunk", Content: text(a.Thought), Meta: meta(e.ID, "")})
		}
		return
	}
	if e.ToolCallID == "" {
		return
	}
	args := e.Action.Arguments()
	c := &call{id: e.ToolCallID, tool: e.ToolName, args: args, key: callKey(e.ToolName, args)}
	u := &ToolCall{SessionUpdate: "tool_call", ToolCallID: c.id, Kind: "other", Status: "pending",
		RawInput: nonEmpty(args), Meta: &Meta{OhBridge: MetaFields{Tool: e.ToolName}}}
	fallback := e.ToolName
	if s := ohevents.OrEmpty(e.Summary); s != "" {
		fallback = s
	}
	// The arguments are parsed once: kind, title and card all come from
	// the tool's declaration.
	c.title = fallback
	if p, err := ohtools.Parse(e.ToolName, args); err == nil {
		u.Kind = p.Action.Kind
		c.title = Heading(p.Action.Title)
		c.card, c.kind = p.Card, p.CardKind
	}
	u.Title = c.title
	if c.kind == ohtools.CardCommand && t.opts.TerminalOutput {
		// Both agents of the convention open the terminal with the
		// tool_call itself; a client opens it only then.
		c.display, c.shownAll = true, true
		u.Content = []ToolCallContent{terminalContent(c.id)}
		u.Meta.TerminalInfo = &TerminalInfoMeta{TerminalID: c.id}
	}
	if c.card.Path != "" {
		c.path = c.card.Path
		u.Locations = []Location{{Path: c.card.Path, Line: c.card.Line}}
	}
	t.calls[c.id] = c
	t.emit(u)
	if t.bindEarly(c) {
		return
	}
	t.waiting = append(t.waiting, c)
}

func nonEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// Heading makes an action's title a heading, as a card's title is ("run
// `ls`" becomes "Run `ls`").
func Heading(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}

var exitCodeRE = regexp.MustCompile(`\[The command completed with exit code (-?\d+)\.\]`)

// observation completes a call with what the agent saw, and what the
// session saw when the call ran here.
func (t *Tracker) observation(e *ohevents.ObservationEvent) {
	c := t.calls[e.ToolCallID]
	if c == nil || e.Observation == nil {
		return
	}
	t.unwait(c)
	if c.display {
		t.flushNow(c)
	}
	t.finish(c)
	obsText := observationText(e.Observation.Content)
	u := &ToolCall{SessionUpdate: "tool_call_update", ToolCallID: c.id, Status: "completed"}
	if e.Observation.IsError {
		u.Status = "failed"
		u.Content = textContent(obsText)
		if c.end != nil && c.end.Observation != nil && c.end.Observation.Error != nil {
			// It failed here: what kind of error, as the editor's face
			// says it in error.data ({kind, path, op, unchanged} for a
			// disk fault).
			u.RawOutput = map[string]any{"error": c.end.Observation.Error.Fields()}
		}
		if c.display {
			endDisplay(c, u, nil)
		}
		t.emit(u)
		return
	}
	switch c.kind {
	case ohtools.CardCommand:
		// The card ends with the output the agent received: the session's
		// record of the call when it ran here (the live stream may trail,
		// or have begun before the card existed), else the agent's text.
		body := obsText
		if c.end != nil && c.end.Observation != nil && c.end.Observation.Command != nil {
			body = c.end.Observation.Command.Output
		} else if c.terminal != "" {
			body = c.out.String()
		}
		u.Content = textContent(body)
		code := -1
		if c.end != nil && c.end.Observation != nil && c.end.Observation.Command != nil {
			code = c.end.Observation.Command.ExitCode
		} else if m := exitCodeRE.FindStringSubmatch(obsText); m != nil {
			code, _ = strconv.Atoi(m[1])
		}
		var exit *int
		if code >= 0 {
			exit = &code
		}
		u.RawOutput = map[string]any{"exitCode": exit}
		if c.display {
			switch {
			case c.terminal == "":
				// It did not run here (a replayed conversation): the
				// terminal shows what the agent saw.
				t.appendOutput(c, obsText)
			case c.end != nil && c.end.Observation != nil && c.end.Observation.Command != nil:
				t.appendOutput(c, rest(c, c.end.Observation.Command.Output))
			}
			u.Content = nil
			endDisplay(c, u, exit)
		}
	case ohtools.CardFile:
		u.Content = t.editContent(c, obsText)
	case ohtools.CardPlan:
		u.Content = textContent(obsText)
		t.plan(c)
	default:
		u.Content = textContent(obsText)
	}
	t.emit(u)
}

// observationText drops the SDK's "[Tool 'x' executed.]" first block.
func observationText(items []ohevents.TextContent) string {
	if len(items) > 0 && strings.HasPrefix(items[0].Text, "[Tool '") && strings.HasSuffix(items[0].Text, "' executed.]") {
		items = items[1:]
	}
	return joinText(items)
}

// editContent is an edit's diff: the whole file's when the edit ran here,
// else the change its arguments spell out.
func (t *Tracker) editContent(c *call, obsText string) []ToolCallContent {
	switch {
	case !c.card.Edits:
		return textContent(obsText)
	case c.end != nil && c.end.After != nil:
		return []ToolCallContent{{Type: "diff", Path: c.path, OldText: c.end.Before, NewText: c.end.After}}
	case c.card.Proposed != nil:
		return []ToolCallContent{{Type: "diff", Path: c.path, OldText: c.card.Proposed.OldText, NewText: c.card.Proposed.NewText}}
	}
	return textContent(obsText)
}

// plan sends the task list a plan call set.
func (t *Tracker) plan(c *call) {
	tasks := c.card.Plan
	if c.end != nil && c.end.Observation != nil && c.end.Observation.Tasks != nil {
		tasks = c.end.Observation.Tasks
	} else if !c.card.SetsPlan {
		return
	}
	p := &Plan{SessionUpdate: "plan", Entries: []PlanEntry{}}
	for _, task := range tasks {
		status := map[string]string{"todo": "pending", "in_progress": "in_progress", "done": "completed"}[task.Status]
		if status == "" {
			status = "pending"
		}
		p.Entries = append(p.Entries, PlanEntry{Content: task.Title, Priority: "medium", Status: status})
	}
	t.emit(p)
}

// fail ends a call that did not run, or failed to.
func (t *Tracker) fail(id, why string) {
	c := t.calls[id]
	if c == nil {
		return
	}
	t.unwait(c)
	if c.display {
		t.flushNow(c)
	}
	t.finish(c)
	u := &ToolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: "failed", Content: textContent(why)}
	if c.display {
		endDisplay(c, u, nil)
	}
	t.emit(u)
}

// finish closes a call's card before its final update: its live output
// stops, and a throttled update it still holds is dropped, so nothing
// follows the completion.
func (t *Tracker) finish(c *call) {
	c.over = true
	if c.flush != nil {
		c.flush.Stop()
		c.flush = nil
	}
	if c.terminal != "" && t.running[c.terminal] == c {
		delete(t.running, c.terminal)
	}
}
