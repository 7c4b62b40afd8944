package session

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/shellint"
)

// CallEvent reports an agent's tool call as it starts and as it ends, so
// a face can show the call beside the conversation it belongs to (a
// command card with its live output, an edit's diff).
type CallEvent struct {
	// ID is unique in the session; the start and end of a call share it.
	ID    int64
	Agent string // the agent's id, "agent-1"
	Tool  string
	Args  json.RawMessage
	// TerminalID is the agent's terminal, where its commands run.
	TerminalID string
	// Ended is false at the start and true at the end.
	Ended bool
	// Observation is the call's result, at the end; nil if it failed to
	// run (Err).
	Observation *ohtools.Observation
	Err         error
	// Before and After are the text of the file an edit changes as the
	// editor sees it (open buffers included): Before read at the start
	// (nil when the file does not exist), After the editor's own result
	// at the end (nil when the edit failed).
	Before, After *string
	// Path is the absolute path of the file the call names (a file_editor
	// call's), resolved in the workspace.
	Path string
}

// Observer receives what happens in a session. The functions are called
// synchronously from the goroutine doing the work and must not block.
type Observer struct {
	OnCall func(CallEvent)
	// OnTerminal receives every terminal's events, as OnTerminalEvent does.
	OnTerminal func(TerminalEvent)
}

type observers struct {
	mu   sync.Mutex
	next int
	set  map[int]Observer
}

// Observe adds an observer until the returned function is called.
func (s *Session) Observe(o Observer) (stop func()) {
	s.obs.mu.Lock()
	defer s.obs.mu.Unlock()
	if s.obs.set == nil {
		s.obs.set = map[int]Observer{}
	}
	s.obs.next++
	id := s.obs.next
	s.obs.set[id] = o
	return func() {
		s.obs.mu.Lock()
		delete(s.obs.set, id)
		s.obs.mu.Unlock()
	}
}

func (s *Session) observers() []Observer {
	s.obs.mu.Lock()
	defer s.obs.mu.Unlock()
	out := make([]Observer, 0, len(s.obs.set))
	for _, o := range s.obs.set {
		out = append(out, o)
	}
	return out
}

// terminalEvent passes a terminal event to the editor and the observers.
func (s *Session) terminalEvent(raw shellint.Event) {
	ev := eventOf(raw)
	if s.opts.OnTerminalEvent != nil {
		s.opts.OnTerminalEvent(ev)
	}
	for _, o := range s.observers() {
		if o.OnTerminal != nil {
			o.OnTerminal(ev)
		}
	}
}

// observeCall reports the start of a call and returns the function that
// reports its end; both do nothing when no one observes calls.
func (a *Agent) observeCall(ctx context.Context, call *ohtools.Call, args json.RawMessage) func(*ohtools.Observation, error) {
	var obs []Observer
	for _, o := range a.s.observers() {
		if o.OnCall != nil {
			obs = append(obs, o)
		}
	}
	if len(obs) == 0 {
		return func(*ohtools.Observation, error) {}
	}
	ev := CallEvent{ID: a.s.callIDs.Add(1), Agent: a.id, Tool: call.Tool, Args: args, TerminalID: a.tools.TerminalID()}
	// The file the call names, as its tool's declaration says
	// (ohtools.Card): an edit's text is read before it runs, for the diff.
	edits := false
	if p := call.Card.Path; p != "" {
		if abs, err := a.s.roots.Resolve(p); err == nil {
			ev.Path = abs
		}
		edits = call.Card.Edits && ev.Path != ""
		if edits {
			ev.Before = a.s.fileText(ctx, ev.Path)
		}
	}
	for _, o := range obs {
		o.OnCall(ev)
	}
	return func(res *ohtools.Observation, err error) {
		end := ev
		end.Ended, end.Observation, end.Err = true, res, err
		if edits && res != nil && res.Edit != nil {
			// What the editor wrote: reading it back would cost an ACP
			// client another round trip.
			end.After = &res.Edit.Text
		}
		for _, o := range obs {
			o.OnCall(end)
		}
	}
}

// fileText is the text of a file as the editor sees it, or nil.
func (s *Session) fileText(ctx context.Context, path string) *string {
	f, err := s.fs.ReadTextFile(ctx, path, 0, 0)
	if err != nil {
		return nil
	}
	return &f.Content
}
