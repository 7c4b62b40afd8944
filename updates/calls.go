package updates

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/session"
)

// A call's life in the session, matched with the agent-server's action
// for it: the session may start a call before the action event arrives, or
// after.

// ToolCallID is the conversation's id for a call the session is about to
// run (to ask the person about it), or "" when no action matches yet.
func (t *Tracker) ToolCallID(tool string, args json.RawMessage) string {
	key := callKey(tool, args)
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.waiting {
		if c.key == key {
			return c.id
		}
	}
	return ""
}

// AwaitToolCallID is ToolCallID for a call the session is about to ask
// the person about, waiting up to wait for the agent-server's event that
// announces it (it may trail the call by a moment); without one it is the
// session's own id for the call.
func (t *Tracker) AwaitToolCallID(ctx context.Context, req session.PermissionRequest, wait time.Duration) string {
	if req.Tool == "" {
		return req.ToolCallID
	}
	deadline := time.Now().Add(wait)
	for {
		if id := t.ToolCallID(req.Tool, req.RawInput); id != "" {
			return id
		}
		if time.Now().After(deadline) {
			return req.ToolCallID
		}
		select {
		case <-ctx.Done():
			return req.ToolCallID
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// callKey is session.CallKey; arguments that are not JSON are keyed as
// they are, so such a call still meets its twin.
func callKey(tool string, args json.RawMessage) string {
	if key, ok := session.CallKey(tool, args); ok {
		return key
	}
	return tool + "\x00" + string(args)
}

// bindEarly matches an action with a session call that started first.
func (t *Tracker) bindEarly(c *call) bool {
	now := time.Now()
	keep := t.early[:0]
	bound := false
	for _, e := range t.early {
		switch {
		case !bound && e.key == c.key:
			bound = true
			t.start(c, e.ev)
			if e.out.Len() > 0 {
				// What the command printed before its action arrived.
				c.out = e.out
				if c.display {
					c.unsent = []byte(e.out.String())
				}
				t.flushNow(c)
			}
			if e.end != nil {
				delete(t.live, e.ev.ID)
				t.ended(c, *e.end)
			}
		case now.Sub(e.seen) < earlyTTL:
			keep = append(keep, e)
		}
	}
	t.early = keep
	return bound
}

// sessionCall takes the start or end of a call the session runs.
func (t *Tracker) sessionCall(ev session.CallEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ev.Ended {
		if c := t.live[ev.ID]; c != nil {
			delete(t.live, ev.ID)
			t.ended(c, ev)
		}
		for _, e := range t.early {
			if e.ev.ID == ev.ID {
				// Its action may still come: it then completes the card
				// with what the session saw. Its terminal's next output
				// is another command's.
				e.end = &ev
				if t.unbound[e.ev.TerminalID] == e {
					delete(t.unbound, e.ev.TerminalID)
				}
				break
			}
		}
		return
	}
	key := callKey(ev.Tool, ev.Args)
	for i, c := range t.waiting {
		if c.key == key {
			t.waiting = append(t.waiting[:i], t.waiting[i+1:]...)
			t.start(c, ev)
			return
		}
	}
	e := &early{ev: ev, key: key, seen: time.Now()}
	t.early = append(t.early, e)
	if cardKind(ev.Tool) == ohtools.CardCommand && ev.TerminalID != "" {
		t.unbound[ev.TerminalID] = e
	}
}

// start marks a call as running in the session.
func (t *Tracker) start(c *call, ev session.CallEvent) {
	t.live[ev.ID] = c
	c.agent = ev.Agent
	if e := t.unbound[ev.TerminalID]; e != nil && e.ev.ID == ev.ID {
		delete(t.unbound, ev.TerminalID)
	}
	u := &ToolCall{SessionUpdate: "tool_call_update", ToolCallID: c.id, Status: "in_progress"}
	if c.kind == ohtools.CardCommand {
		c.terminal = ev.TerminalID
		if prev := t.running[ev.TerminalID]; prev != nil && prev != c {
			t.flushNow(prev)
		}
		t.running[ev.TerminalID] = c
		u.Meta = &Meta{OhBridge: MetaFields{Tool: c.tool, TerminalID: ev.TerminalID}}
	}
	if ev.Path != "" {
		c.path = ev.Path
		u.Locations = []Location{{Path: ev.Path}}
	}
	t.emit(u)
}

// ended records how the session's call ended; the observation event that
// follows completes the card.
func (t *Tracker) ended(c *call, ev session.CallEvent) {
	c.end = &ev
	// The terminal's output reaches the tracker on its own goroutine and
	// may trail the call's end: the card keeps taking it until the
	// command's end mark, or until another call runs there.
	// Whether the end was delivered already cannot be told from here (the
	// events may not have reached the command's start either): a
	// terminal's text is only ever its commands', and the next call on the
	// terminal takes it over.
	if c.terminal != "" && (ev.Observation == nil || ev.Observation.Command == nil || !ev.Observation.Command.Running) {
		c.awaitEnd = true
	}
}

func (t *Tracker) unwait(c *call) {
	for i, w := range t.waiting {
		if w == c {
			t.waiting = append(t.waiting[:i], t.waiting[i+1:]...)
			return
		}
	}
}

// RunningAgents are the session's agents (by id) running a call of the
// conversation now: the calls its agent waits on. Calls the session runs
// that the conversation has not reported yet count too: the agent-server
// can hold its events back while a step runs (1.58.2 sends a socket that
// attaches then nothing until the step ends). Such a call is most likely
// its agent's; one of another agent sharing the session's endpoint (the
// editor's, handed to Claude Code) counts too, until it is reported or
// ends.
func (t *Tracker) RunningAgents() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []string
	add := func(id string) {
		if id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, c := range t.live {
		add(c.agent)
	}
	for _, e := range t.early {
		if e.end == nil {
			add(e.ev.Agent)
		}
	}
	return ids
}

// cardKind is how the declaration of tool shows its calls ("" for a tool
// ohtools does not declare).
func cardKind(tool string) ohtools.CardKind {
	if t, ok := ohtools.Lookup(tool); ok {
		return t.Card
	}
	return ""
}
