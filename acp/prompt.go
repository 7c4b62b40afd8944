package acp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/ohevents"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/updates"
)

// turn is one session/prompt, from the message sent to the agent's stop.
type turn struct {
	running   bool // the conversation ran since the message was sent
	cancelled bool
	cancel    chan struct{} // closed when cancelled becomes true
	done      chan struct{}
	stop      string // the stop reason
	err       error
	// settled is closed once a cancelled turn's agent stopped: the
	// agent-server answered the interrupt, or the turn ended. The tool
	// calls refused meanwhile are answered then (session.HoldCalls).
	settled chan struct{}
	once    sync.Once
}

func newTurn() *turn {
	return &turn{done: make(chan struct{}), cancel: make(chan struct{}), settled: make(chan struct{})}
}

func (t *turn) finish(stop string, err error) {
	select {
	case <-t.done:
	default:
		t.stop, t.err = stop, err
		close(t.done)
	}
	t.settle()
}

// settle lets the answers of the calls the cancel refused go.
func (t *turn) settle() { t.once.Do(func() { close(t.settled) }) }

// cancelGrace is how long a cancelled turn waits for the agent-server to
// say the agent stopped before it answers "cancelled" anyway.
const cancelGrace = 5 * time.Second

type contentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	URI      string `json:"uri"`
	Name     string `json:"name"`
	Resource *struct {
		URI  string `json:"uri"`
		Text string `json:"text"`
	} `json:"resource"`
}

type promptParams struct {
	SessionID string         `json:"sessionId"`
	Prompt    []contentBlock `json:"prompt"`
}

func (a *Agent) prompt(ctx context.Context, p *promptParams) (any, error) {
	s, err := a.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	text := promptText(p.Prompt)
	if strings.TrimSpace(text) == "" {
		return nil, rpc.InvalidParams("prompt", "at least one text, resource or resource_link block with something to say")
	}
	if s.link() == nil {
		if err := a.connectLate(ctx, s); err != nil {
			s.update(&updates.Chunk{SessionUpdate: "agent_message_chunk",
				Content: updates.ContentBlock{Type: "text", Text: a.noServerText(err)}})
			return promptResult{StopReason: "end_turn"}, nil
		}
	}
	s.mu.Lock()
	via := s.via
	s.via = ""
	s.mu.Unlock()
	if via != "" {
		s.update(&updates.Chunk{SessionUpdate: "agent_message_chunk", Content: updates.ContentBlock{Type: "text",
			Text: "The agent runs on " + a.cfg.Server.URL + ": its calls reach this window through " + via + ".\n\n"}})
	}
	t := newTurn()
	s.mu.Lock()
	if s.turn != nil {
		s.mu.Unlock()
		return nil, rpc.NewError(rpc.CodeInvalidRequest, fmt.Sprintf("a prompt is already running in session %s; wait for its answer or send session/cancel", s.id), nil)
	}
	s.turn = t
	s.mu.Unlock()
	s.setQuiet(false)
	s.sess.ReleaseCalls()
	s.link().ShowNewCalls()
	defer func() {
		s.mu.Lock()
		s.turn = nil
		cancelled := t.cancelled
		s.mu.Unlock()
		t.settle()
		// After a cancelled turn's answer nothing of it may reach the
		// client (ACP); the next prompt opens the session again.
		s.setQuiet(cancelled)
	}()
	// The turn can end before the message's POST has its answer: the
	// events come on their own socket.
	sent := make(chan error, 1)
	if from := s.takeContinuation(); from != "" {
		// The message goes as the new conversation's first, after the
		// history; the turn is registered first, so its status is seen.
		sent <- a.continueIn(ctx, s, from, text)
	} else {
		go func() { sent <- s.link().SendMessage(ctx, text) }()
	}
	cancelled := t.cancel
	var grace <-chan time.Time
	for {
		select {
		case err := <-sent:
			if err != nil {
				return nil, fail(err)
			}
			sent = nil
		case <-t.done:
			if t.err != nil {
				return nil, fail(t.err)
			}
			return promptResult{StopReason: t.stop}, nil
		case <-ctx.Done():
			// $/cancel_request: the same as session/cancel.
			s.cancelTurn()
			return promptResult{StopReason: "cancelled"}, nil
		case <-cancelled:
			cancelled, grace = nil, time.After(cancelGrace)
		case <-grace:
			return promptResult{StopReason: "cancelled"}, nil
		}
	}
}

// takeContinuation is the conversation the session goes on from in a new
// one, once ("" when none).
func (s *acpSession) takeContinuation() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	from := s.continueFrom
	s.continueFrom, s.exposed = "", nil
	return from
}

// continueIn replaces the session's conversation, whose tools cannot be
// served again, with a new one that starts from its history and text.
func (a *Agent) continueIn(ctx context.Context, s *acpSession, from, text string) error {
	srv, ok := a.agentServer(ctx, true)
	if !ok {
		return fmt.Errorf("no agent-server to continue conversation %s on", from)
	}
	link, err := a.follow(ctx, s, srv, "", followOptions{continueFrom: from, task: text})
	if err != nil {
		return err
	}
	s.mu.Lock()
	old := s.conv
	s.conv = link
	s.mu.Unlock()
	if old != nil {
		old.Close(context.Background())
	}
	a.log.Info("the session goes on in a new conversation", "session", s.sessionID(), "from", from, "conversation", link.ConversationID())
	return nil
}

// promptText is the message for the agent: the text blocks, with files
// the user attached quoted and links named.
func promptText(blocks []contentBlock) string {
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "resource_link":
			name := b.Name
			if name == "" {
				name = b.URI
			}
			parts = append(parts, fmt.Sprintf("[%s](%s)", name, b.URI))
		case "resource":
			if b.Resource != nil && b.Resource.Text != "" {
				parts = append(parts, fmt.Sprintf("<context uri=%q>\n%s\n</context>", b.Resource.URI, b.Resource.Text))
			}
		}
	}
	return strings.Join(parts, "\n")
}

type cancelParams struct {
	SessionID string `json:"sessionId"`
}

// cancel stops the agent of a running turn: the agent-server interrupts
// it, and the session's commands are interrupted too.
func (a *Agent) cancel(ctx context.Context, p *cancelParams) (any, error) {
	a.mu.Lock()
	s := a.sessions[p.SessionID]
	a.mu.Unlock()
	if s != nil {
		s.cancelTurn()
	}
	return nil, nil
}

// cancelTurn cancels the running turn, if any: its agent is interrupted
// in the background, and the prompt answers once the agent stopped.
func (s *acpSession) cancelTurn() {
	if t, first := s.stopTurn(); first {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
			defer cancel()
			s.interrupt(ctx, t)
		}()
	}
}

// stopTurn marks the running turn cancelled; it returns the turn (nil when
// none runs) and whether this call cancelled it, so only one interrupts.
//
// After it the client is told of no new tool call in the turn (docs/acp.md,
// "Cancellation"). The agent-server's agent goes on until the interrupt
// reaches it: the call whose question the person withdrew, and any call it
// makes meanwhile, are refused, and their answers wait until the agent
// stopped (t.settled), so it has no next step to take; what still comes
// (an action sent before the interrupt landed) is not announced.
func (s *acpSession) stopTurn() (*turn, bool) {
	s.mu.Lock()
	t := s.turn
	if t == nil || t.cancelled {
		s.mu.Unlock()
		return t, false
	}
	t.cancelled = true
	close(t.cancel)
	conv := s.conv
	s.mu.Unlock()
	s.sess.HoldCalls("the person cancelled the turn; nothing more runs in it", t.settled)
	if conv != nil {
		conv.DropNewCalls()
	}
	return t, true
}

// interrupt stops a cancelled turn's agent: first on the agent-server, so
// it does not go on to a next step when its command ends; then any command
// it left running. The agent-server answers once the agent stopped (its
// EventService.interrupt waits for the run, up to 5 s): the calls refused
// meanwhile are answered then.
func (s *acpSession) interrupt(ctx context.Context, t *turn) {
	if err := s.link().Interrupt(ctx); err != nil {
		s.a.log.Warn("interrupting the agent", "error", err)
	}
	t.settle()
	s.sess.InterruptAgents(ctx)
}

// event notes an agent-server event's error code, for the stop reason; the
// link turns the events into updates.
func (s *acpSession) event(ev ohevents.Event) {
	if e, ok := ev.(*ohevents.ConversationErrorEvent); ok {
		s.mu.Lock()
		s.lastError = e.Code
		s.mu.Unlock()
	}
}

// status follows the conversation: a turn ends when the agent stops. A
// turn's person is told when the way the agent's calls come goes down
// (the relay's link) and when it is back: the turn waits meanwhile.
func (s *acpSession) status(st agentserver.Status) {
	if say := s.followStatus(st); say != "" {
		s.update(&updates.Chunk{SessionUpdate: "agent_message_chunk", Content: updates.ContentBlock{Type: "text", Text: say}})
	}
}

// followStatus is status's bookkeeping, under the session's lock; it
// returns what to tell the person, if anything.
func (s *acpSession) followStatus(st agentserver.Status) (say string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == "" {
		s.id = st.ConversationID
	}
	t := s.turn
	if st.ViaDown != s.viaDown {
		switch {
		case t == nil:
		case st.ViaDown != "":
			say = "\n\n(" + strings.ToUpper(st.ViaDown[:1]) + st.ViaDown[1:] + ".)\n\n"
		default:
			say = "\n\n(The link to the relay is back.)\n\n"
		}
		s.viaDown = st.ViaDown
	}
	if t == nil {
		return say
	}
	if st.State == agentserver.StateFailed {
		t.finish("", fmt.Errorf("the connection to the agent-server was lost: %s", st.Error))
		return say
	}
	switch st.ExecutionStatus {
	case "running", "waiting_for_confirmation":
		t.running = true
	case "finished", "idle":
		switch {
		case !t.running:
		case t.cancelled:
			// ACP: a cancelled turn answers cancelled, however it ended.
			t.finish("cancelled", nil)
		default:
			t.finish("end_turn", nil)
		}
	case "paused", "stuck":
		if t.running {
			if t.cancelled {
				t.finish("cancelled", nil)
			} else {
				t.finish("end_turn", nil)
			}
		}
	case "error":
		if !t.running {
			return say
		}
		switch {
		case t.cancelled:
			t.finish("cancelled", nil)
		case s.lastError == "MaxIterationsReached":
			t.finish("max_turn_requests", nil)
		default:
			t.finish("", fmt.Errorf("the agent stopped with an error (%s); the conversation shows it", orUnknown(s.lastError)))
		}
	}
	return say
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
