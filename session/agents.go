package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"time"

	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/shellint"
)

// Agent is one agent using OpenHands V1's tools in this session: its own
// terminal (mirrored to the person as terminal "agent-N") and task list,
// the session's files, buffers and undo history, and the person's
// permission for each action.
type Agent struct {
	s     *Session
	id    string
	name  string
	tools *ohtools.Toolbox
	start time.Time

	calls    atomic.Int64
	callSeq  atomic.Int64
	rejected atomic.Int64
}

// AgentOptions configure an agent.
type AgentOptions struct {
	// Name says who the agent is ("claude-code"): it names the agent's
	// terminal and is shown in permission prompts.
	Name string
	// NoChangeTimeout is the terminal's soft timeout (0: OpenHands' 30 s).
	NoChangeTimeout time.Duration
	// MaxWait bounds one terminal call's wait (see ohtools.ToolboxOptions).
	MaxWait time.Duration
}

// AgentInfo describes an agent for status reports.
type AgentInfo struct {
	ID         string
	Name       string
	TerminalID string
	Calls      int64
	Rejected   int64
	Since      time.Duration // how long ago the agent started
}

// NewAgent gives an agent OpenHands V1's tools in this session.
func (s *Session) NewAgent(o AgentOptions) (*Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	s.nextAgent++
	id := fmt.Sprintf("agent-%d", s.nextAgent)
	name := o.Name
	if name == "" {
		name = "agent"
	}
	tools, err := ohtools.NewToolbox(ohtools.ToolboxOptions{
		FS:              s.fs,
		Editor:          s.editor,
		TerminalID:      id,
		TerminalName:    "OpenHands tools: " + name,
		OnTerminalEvent: s.terminalEvent,
		NoChangeTimeout: o.NoChangeTimeout,
		MaxWait:         o.MaxWait,
		ShellMode:       shellint.Mode(s.opts.ShellMode),
		Env:             s.opts.Env,
		Logger:          s.opts.Logger,
		ShowFile:        s.opts.ShowFile,
	})
	if err != nil {
		return nil, err
	}
	a := &Agent{s: s, id: id, name: name, tools: tools, start: time.Now()}
	s.agents[a] = struct{}{}
	s.log.Info("an agent started using the tools", "agent", id, "name", name)
	return a, nil
}

// Agents describes the agents using the tools, oldest first.
func (s *Session) Agents() []AgentInfo {
	s.mu.Lock()
	out := make([]AgentInfo, 0, len(s.agents))
	for a := range s.agents {
		out = append(out, a.Info())
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Since > out[j].Since })
	return out
}

// Info describes the agent.
func (a *Agent) Info() AgentInfo {
	return AgentInfo{ID: a.id, Name: a.name, TerminalID: a.tools.TerminalID(), Calls: a.calls.Load(),
		Rejected: a.rejected.Load(), Since: time.Since(a.start)}
}

// Call runs one tool call, after asking the person when the session can
// ask and the call changes or reads the workspace. A refused call answers
// OpenHands' rejection text; see ohtools.Toolbox.Run for the rest.
func (a *Agent) Call(ctx context.Context, tool string, args json.RawMessage, progress func(ohtools.Progress)) (*ohtools.Observation, error) {
	call, err := ohtools.Parse(tool, args)
	if err != nil {
		return nil, err
	}
	act := call.Action
	a.calls.Add(1)
	if err := a.s.held(ctx); err != nil {
		return nil, err
	}
	if act.NeedsPermission && !a.s.takeApproval(tool, args) {
		ok, err := a.s.Permit(ctx, PermissionRequest{
			ToolCallID: fmt.Sprintf("%s-%d", a.id, a.callSeq.Add(1)),
			Tool:       tool,
			Title:      act.Title,
			Kind:       act.Kind,
			RawInput:   args,
			Agent:      a.name,
		})
		var cancelled *CancelledError
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.As(err, &cancelled):
			// The face that withdrew the question holds the turn's
			// calls by now (HoldCalls): this answer waits as theirs do.
			a.s.holding().wait(ctx)
			return nil, err
		case err != nil:
			return ohtools.Failure(err.Error()), nil
		case !ok:
			a.rejected.Add(1)
			return ohtools.Rejected(), nil
		}
	}
	if act.Kind == "edit" || act.Kind == "execute" {
		// Changes are reported to the editor once the watcher is up.
		a.s.AwaitWatch(ctx)
	}
	end := a.observeCall(ctx, call, args)
	res, err := a.tools.Run(ctx, call, progress)
	end(res, err)
	return res, err
}

// Interrupt stops the agent's running command, if any.
func (a *Agent) Interrupt(ctx context.Context) { a.tools.Interrupt(ctx) }

// Close ends the agent's terminal and forgets the agent.
func (a *Agent) Close() {
	a.tools.Close()
	a.s.mu.Lock()
	delete(a.s.agents, a)
	a.s.mu.Unlock()
}

// InterruptAgents stops every agent's running command: the person
// cancelled the turn they were working on.
func (s *Session) InterruptAgents(ctx context.Context) {
	s.mu.Lock()
	agents := make([]*Agent, 0, len(s.agents))
	for a := range s.agents {
		agents = append(agents, a)
	}
	s.mu.Unlock()
	for _, a := range agents {
		a.Interrupt(ctx)
	}
}

// InterruptAgent stops the running command of the agent id, if it runs
// one. It says whether the session has that agent.
func (s *Session) InterruptAgent(ctx context.Context, id string) bool {
	s.mu.Lock()
	var found *Agent
	for a := range s.agents {
		if a.id == id {
			found = a
			break
		}
	}
	s.mu.Unlock()
	if found == nil {
		return false
	}
	found.Interrupt(ctx)
	return true
}

// HoldCalls makes every tool call that arrives answer a *CancelledError
// saying why, until ReleaseCalls: a face whose person cancelled a turn lets
// nothing else of that turn run. Running commands are the face's to
// interrupt (InterruptAgents).
//
// The answers wait until until is closed (nil: they do not wait), and so
// does the answer of a call whose permission question was withdrawn: an
// agent answered at once takes its next step before the face's interrupt
// reaches it, and that step is new work the person did not ask for. A face
// closes until once the agent stopped (or it gave up waiting); a call whose
// own request is cancelled stops waiting then.
func (s *Session) HoldCalls(why string, until <-chan struct{}) {
	s.mu.Lock()
	s.hold = hold{why: why, until: until}
	s.mu.Unlock()
}

// ReleaseCalls lets tool calls run again.
func (s *Session) ReleaseCalls() { s.HoldCalls("", nil) }

// hold is why tool calls are held ("" lets them run), and until when their
// answers wait.
type hold struct {
	why   string
	until <-chan struct{}
}

// wait keeps a held call's answer until the hold's until is closed, or ctx
// ends.
func (h hold) wait(ctx context.Context) {
	if h.until == nil {
		return
	}
	select {
	case <-h.until:
	case <-ctx.Done():
	}
}

func (s *Session) holding() hold {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hold
}

// held answers a call that arrives while calls are held, once the hold
// lets it (wait); nil when they are not.
func (s *Session) held(ctx context.Context) error {
	h := s.holding()
	if h.why == "" {
		return nil
	}
	h.wait(ctx)
	return &CancelledError{Why: h.why}
}
