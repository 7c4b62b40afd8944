package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Connection states, as the editor shows them.
const (
	StateConnecting   = "connecting"
	StateConnected    = "connected"
	StateReconnecting = "reconnecting"
	StateFailed       = "failed"
	StateDisconnected = "disconnected"
)

// MCPServer is where the agent reaches its tools: the bridge's endpoint.
type MCPServer struct {
	URL   string
	Token string
}

// Decision is the user's answer to a confirmation.
type Decision struct {
	Accept bool
	Reason string // why it was rejected, for the agent
}

// Options configure Connect.
type Options struct {
	ServerURL     string
	SessionAPIKey string
	Header        http.Header
	HTTPClient    *http.Client
	// ConversationID attaches to an existing conversation; without it a
	// new one is created.
	ConversationID string
	// Task is the new conversation's first message (optional).
	Task string
	// LLM is the new agent's "llm" object ({"model", "api_key", ...}).
	LLM json.RawMessage
	// Agent, a JSON object, overrides fields of the agent the bridge
	// builds (no built-in tools, the bridge's MCP endpoint).
	Agent json.RawMessage
	// ConfirmationPolicy is the new conversation's policy kind:
	// "AlwaysConfirm", "NeverConfirm" (the server's default) or
	// "ConfirmRisky".
	ConfirmationPolicy string
	// WorkingDir is the new conversation's workspace directory.
	WorkingDir string
	// MCP gives the bridge's MCP endpoint, started on demand.
	MCP func(ctx context.Context) (MCPServer, error)
	// Attached, when set, is called with an existing conversation once it
	// is read and before its events stream: an error stops Connect.
	Attached func(ctx context.Context, conv *ConversationInfo) error
	// FallbackLLM gives a new conversation's LLM when neither LLM nor
	// Agent names one and the server keeps none in its own settings: the
	// person's OpenHands settings, read by the face. source says where it
	// came from, in words; nil llm: there is none.
	FallbackLLM func() (llm json.RawMessage, source string)
	// ExtraMCP are more MCP servers for a new agent, by name, in the
	// SDK's mcp_config form ({"command", "args", "env"} or {"url",
	// "transport", "headers"}): an editor's own tool servers.
	ExtraMCP map[string]any
	// Confirm asks the user about an action the agent waits to run.
	Confirm func(ctx context.Context, action json.RawMessage) (Decision, error)
	// OnEvent receives every event once, in order; OnStatus every status
	// change. Both are called from the session's goroutine.
	OnEvent  func(event json.RawMessage)
	OnStatus func(Status)
	// MinBackoff and MaxBackoff bound the wait between reconnects
	// (500 ms and 10 s by default).
	MinBackoff, MaxBackoff time.Duration
	Logger                 *slog.Logger
}

// Status is a snapshot of the session, for the editor.
type Status struct {
	Protocol        string `json:"protocol"` // "v1"
	State           string `json:"state"`
	ServerURL       string `json:"serverUrl"`
	ServerVersion   string `json:"serverVersion,omitempty"`
	ConversationID  string `json:"conversationId,omitempty"`
	ExecutionStatus string `json:"executionStatus,omitempty"`
	Events          int    `json:"events"`
	// RunningActions counts the actions asked for and not yet answered.
	RunningActions int    `json:"runningActions"`
	Error          string `json:"error,omitempty"`
	// LLMSource says where a new conversation's LLM came from when the
	// client gave none: the agent-server's own settings, or the person's
	// OpenHands settings file.
	LLMSource string `json:"llmSource,omitempty"`
}

// Conversation is the bridge's connection to one conversation of an
// agent-server. It streams events, reconnecting by itself, until Close.
type Conversation struct {
	opts Options
	c    *Client
	log  *slog.Logger
	id   string

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	status  Status
	seen    map[string]bool
	last    string                     // timestamp of the last event delivered
	pending map[string]json.RawMessage // actions without an observation, by id
	order   []string                   // their ids, oldest first
	asking  bool                       // a confirmation is being asked and answered
	asked   map[string]bool            // actions the user was asked about
	// accepted are the actions the user allowed; waits counts the reports
	// that the agent waits for confirmation, and answeredAt is waits when
	// the last answer went (confirmAgain).
	accepted          map[string]bool
	waits, answeredAt int
	calls             map[string]string // action ids by tool call id
	// answered are actions whose observation (by action id) or error (by
	// tool call id) came before them: a socket attached to a running
	// conversation gets live events while it still replays the log, so an
	// action can arrive after its answer.
	answered, answeredCalls map[string]bool
	// delivered counts the events passed to OnEvent, once it returned.
	delivered int
}

// Connect checks the server, creates or finds the conversation, and
// starts streaming its events (all of them, from the first). Failures of
// these first steps come back in plain words; later disconnections are
// retried in the background.
func Connect(ctx context.Context, o Options) (*Conversation, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MinBackoff == 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = 10 * time.Second
	}
	c, err := NewClient(o.ServerURL, o.SessionAPIKey, o.Header, o.HTTPClient)
	if err != nil {
		return nil, err
	}
	info, err := c.ServerInfo(ctx)
	if err != nil {
		return nil, err
	}
	var conv *ConversationInfo
	llmSource := ""
	if o.ConversationID != "" {
		conv, err = c.Conversation(ctx, o.ConversationID)
		if err == nil && o.Attached != nil {
			err = o.Attached(ctx, conv)
		}
	} else {
		conv, llmSource, err = startConversation(ctx, c, info, &o)
	}
	if err != nil {
		return nil, err
	}
	s := &Conversation{
		opts:    o,
		c:       c,
		log:     o.Logger.With("component", "agentserver", "conversation", conv.ID),
		id:      conv.ID,
		done:    make(chan struct{}),
		seen:    map[string]bool{},
		pending: map[string]json.RawMessage{},
		asked:   map[string]bool{},
		calls:   map[string]string{},
		status: Status{Protocol: "v1", State: StateConnecting, ServerURL: c.URL(), ServerVersion: info.Version,
			ConversationID: conv.ID, ExecutionStatus: conv.ExecutionStatus, LLMSource: llmSource},
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	conn, err := c.dialEvents(ctx, s.id, "")
	if err != nil {
		s.cancel()
		return nil, err
	}
	s.setStatus(func(st *Status) { st.State = StateConnected })
	go s.run(conn)
	return s, nil
}

// startConversation creates a conversation whose agent has no built-in
// tools and the bridge's MCP endpoint. Its LLM is the one given, else the
// one the server keeps in its settings (its key sent back encrypted), else
// o.FallbackLLM's; source says which of the last two it was.
func startConversation(ctx context.Context, c *Client, info *ServerInfo, o *Options) (conv *ConversationInfo, source string, err error) {
	agent := map[string]any{}
	if len(o.Agent) > 0 {
		if err := json.Unmarshal(o.Agent, &agent); err != nil {
			return nil, "", &OptionError{Option: "agent", Message: fmt.Sprintf("agent must be a JSON object (the agent spec fields to set): %v", err)}
		}
	}
	encrypted := false
	if _, ok := agent["llm"]; !ok {
		llm := o.LLM
		if len(llm) == 0 || string(llm) == "null" {
			stored, err := c.StoredLLM(ctx)
			if err != nil {
				return nil, "", err
			}
			if stored != nil {
				llm, encrypted, source = stored, true, "the agent-server's own settings"
			} else if o.FallbackLLM != nil {
				llm, source = o.FallbackLLM()
			}
		}
		if len(llm) == 0 || string(llm) == "null" {
			return nil, "", &OptionError{Option: "llm", Missing: true, Message: "to start a conversation the agent-server needs the agent's LLM, and neither the server's settings nor OpenHands' settings files (~/.openhands/agent_settings.json) have one: give llm {\"model\": …, \"api_key\": …}, or the conversationId of an existing conversation"}
		}
		agent["llm"] = llm
	}
	if _, ok := agent["kind"]; !ok {
		agent["kind"] = "Agent"
	}
	if _, ok := agent["tools"]; !ok {
		agent["tools"] = []any{} // only finish and think of its own: every command and edit is the bridge's
	}
	if _, ok := agent["mcp_config"]; !ok {
		if o.MCP == nil {
			return nil, "", errors.New("no MCP endpoint to give the agent its tools")
		}
		ep, err := o.MCP(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("cannot serve the tools to the agent: %w", err)
		}
		agent["mcp_config"] = mcpConfig(info.Version, ep, o.ExtraMCP)
	}
	req := map[string]any{
		"agent":     agent,
		"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": o.WorkingDir},
	}
	if o.ConfirmationPolicy != "" {
		req["confirmation_policy"] = map[string]any{"kind": o.ConfirmationPolicy}
	}
	if o.Task != "" {
		req["initial_message"] = textMessage(o.Task, true)
	}
	if encrypted {
		req["secrets_encrypted"] = true
	}
	conv, err = c.StartConversation(ctx, req)
	return conv, source, err
}

// mcpConfig is the agent's mcp_config for the bridge's endpoint: a flat
// map from SDK 1.31.2 on, {"mcpServers": …} before.
func mcpConfig(version string, ep MCPServer, extra map[string]any) any {
	server := map[string]any{
		"transport": "http",
		"url":       ep.URL,
		"headers":   map[string]string{"Authorization": "Bearer " + ep.Token},
	}
	flat := map[string]any{}
	for name, s := range extra {
		flat[name] = s
	}
	flat["oh-bridge"] = server
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) >= 2 {
		minor, _ := strconv.Atoi(parts[1])
		patch := 0
		if len(parts) == 3 {
			patch, _ = strconv.Atoi(strings.SplitN(parts[2], "-", 2)[0])
		}
		if minor < 31 || (minor == 31 && patch < 2) {
			return map[string]any{"mcpServers": flat}
		}
	}
	return flat
}

// ConversationID is the conversation's id.
func (s *Conversation) ConversationID() string { return s.id }

// Status returns a snapshot.
func (s *Conversation) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

func (s *Conversation) setStatus(f func(*Status)) {
	s.mu.Lock()
	before := s.status
	f(&s.status)
	after := s.status
	s.mu.Unlock()
	if after != before && s.opts.OnStatus != nil {
		s.opts.OnStatus(after)
	}
}

// run reads the event stream, reconnecting after a drop from the last
// event seen, until Close or an error that reconnecting cannot mend.
func (s *Conversation) run(conn *websocket.Conn) {
	defer close(s.done)
	backoff := s.opts.MinBackoff
	for {
		err := s.read(conn)
		if s.ctx.Err() != nil {
			return
		}
		perr, permanent := s.c.socketError(s.id, err)
		if permanent {
			s.setStatus(func(st *Status) { st.State, st.Error = StateFailed, perr.Error() })
			return
		}
		s.log.Info("the event stream dropped; reconnecting", "error", err)
		for {
			s.setStatus(func(st *Status) { st.State, st.Error = StateReconnecting, perr.Error() })
			wait := backoff/2 + time.Duration(rand.Int64N(int64(backoff/2)+1))
			select {
			case <-s.ctx.Done():
				return
			case <-time.After(wait):
			}
			backoff = min(backoff*2, s.opts.MaxBackoff)
			s.mu.Lock()
			from := resumeFrom(s.last)
			s.mu.Unlock()
			c, err := s.c.dialEvents(s.ctx, s.id, from)
			if err == nil {
				// The socket accepts before it checks the conversation;
				// a REST read says at once whether it is still there.
				if _, err = s.c.Conversation(s.ctx, s.id); err == nil {
					conn, backoff = c, s.opts.MinBackoff
					s.setStatus(func(st *Status) { st.State, st.Error = StateConnected, "" })
					break
				}
				c.CloseNow()
			}
			if s.ctx.Err() != nil {
				return
			}
			var nf *NotFoundError
			var ke *APIKeyError
			if errors.As(err, &nf) || errors.As(err, &ke) {
				s.setStatus(func(st *Status) { st.State, st.Error = StateFailed, err.Error() })
				return
			}
			perr = err
		}
	}
}

// read delivers the events of one socket until it ends.
func (s *Conversation) read(conn *websocket.Conn) error {
	for {
		_, data, err := conn.Read(s.ctx)
		if err != nil {
			conn.CloseNow()
			return err
		}
		s.deliver(data)
	}
}

// deliver passes an event on once, and follows the conversation's state.
func (s *Conversation) deliver(data []byte) {
	var h header
	if err := json.Unmarshal(data, &h); err != nil {
		s.log.Warn("an event that is not JSON was dropped", "error", err)
		return
	}
	s.mu.Lock()
	if h.ID != "" {
		if s.seen[h.ID] {
			s.mu.Unlock()
			return
		}
		s.seen[h.ID] = true
	}
	if h.Timestamp != "" {
		s.last = h.Timestamp
	}
	if s.answered == nil {
		s.answered, s.answeredCalls = map[string]bool{}, map[string]bool{}
	}
	switch h.Kind {
	case "ActionEvent":
		if h.ID != "" && !s.answered[h.ID] && (h.ToolCallID == "" || !s.answeredCalls[h.ToolCallID]) {
			s.pending[h.ID] = data
			s.order = append(s.order, h.ID)
			if h.ToolCallID != "" {
				s.calls[h.ToolCallID] = h.ID
			}
		}
	case "ObservationEvent", "UserRejectObservation":
		if _, ok := s.pending[h.ActionID]; ok {
			delete(s.pending, h.ActionID)
		} else if h.ActionID != "" {
			s.answered[h.ActionID] = true
		}
	case "AgentErrorEvent":
		if id, ok := s.calls[h.ToolCallID]; ok {
			delete(s.pending, id)
		} else if h.ToolCallID != "" {
			s.answeredCalls[h.ToolCallID] = true
		}
	}
	s.mu.Unlock()
	if s.opts.OnEvent != nil {
		s.opts.OnEvent(data)
	}
	s.mu.Lock()
	s.delivered++
	s.mu.Unlock()
	status := ""
	if h.Kind == "ConversationStateUpdateEvent" {
		switch h.Key {
		case "execution_status":
			json.Unmarshal(h.Value, &status)
		case "full_state":
			var full struct {
				ExecutionStatus string `json:"execution_status"`
			}
			json.Unmarshal(h.Value, &full)
			status = full.ExecutionStatus
		}
	}
	s.setStatus(func(st *Status) {
		st.Events++
		st.RunningActions = len(s.pendingIDs())
		if status != "" {
			st.ExecutionStatus = status
		}
	})
	if status == "waiting_for_confirmation" {
		s.mu.Lock()
		s.waits++
		s.mu.Unlock()
		s.confirm()
	}
}

// pendingIDs lists the actions still waiting, oldest first; s.mu is held.
func (s *Conversation) pendingIDs() []string {
	var ids []string
	keep := s.order[:0]
	for _, id := range s.order {
		if _, ok := s.pending[id]; ok {
			ids = append(ids, id)
			keep = append(keep, id)
		}
	}
	s.order = keep
	return ids
}

// confirm asks the user about the actions waiting, in order, and sends the
// answer: they run only if every one was allowed. A round asks only about
// actions not asked about before; when it ends, the server may already
// wait on newer ones (it runs on as soon as it has the answer), so it
// looks again.
func (s *Conversation) confirm() {
	s.mu.Lock()
	if s.asking || s.opts.Confirm == nil || s.status.ExecutionStatus != "waiting_for_confirmation" {
		s.mu.Unlock()
		return
	}
	var actions []json.RawMessage
	var ids []string
	for _, id := range s.pendingIDs() {
		if !s.asked[id] {
			s.asked[id] = true
			actions, ids = append(actions, s.pending[id]), append(ids, id)
		}
	}
	if len(actions) == 0 {
		s.confirmAgain()
		s.mu.Unlock()
		return
	}
	s.asking = true
	s.mu.Unlock()
	go func() {
		decision := Decision{Accept: true}
		for _, a := range actions {
			d, err := s.opts.Confirm(s.ctx, a)
			if err != nil {
				s.log.Warn("the user could not be asked; the actions are rejected", "error", err)
				d = Decision{Reason: "The user could not be asked: " + err.Error()}
			}
			if !d.Accept {
				decision = d
				break
			}
		}
		s.mu.Lock()
		s.answeredAt = s.waits
		s.mu.Unlock()
		err := s.c.RespondToConfirmation(s.ctx, s.id, decision.Accept, decision.Reason)
		s.mu.Lock()
		if err != nil && s.ctx.Err() == nil {
			// Asked again once the stream is back and says it still waits.
			s.log.Warn("the answer to the confirmation was not delivered", "error", err)
			for _, id := range ids {
				delete(s.asked, id)
			}
		} else if err == nil && decision.Accept {
			if s.accepted == nil {
				s.accepted = map[string]bool{}
			}
			for _, id := range ids {
				s.accepted[id] = true
			}
		}
		s.asking = false
		s.mu.Unlock()
		s.confirm()
	}()
}

// confirmAgain sends the user's "yes" again when the server says once more
// that it waits for actions the user allowed, in a report that came after
// the answer was sent: the agent-server drops an acceptance that arrives while the run
// that stopped for it is still winding down (1.58.2's EventService.run
// answers "conversation_already_running", which respond_to_confirmation
// takes for success), and then waits for ever. A second "yes" once that
// run is over sets it going, and is a no-op if the first one did. s.mu is
// held.
func (s *Conversation) confirmAgain() {
	if s.waits <= s.answeredAt {
		return
	}
	allowed := false
	for _, id := range s.pendingIDs() {
		allowed = allowed || s.accepted[id]
	}
	if !allowed {
		return
	}
	s.asking = true
	s.answeredAt = s.waits
	go func() {
		err := s.c.RespondToConfirmation(s.ctx, s.id, true, "")
		if err != nil && s.ctx.Err() == nil {
			s.log.Warn("the acceptance sent again was not delivered", "error", err)
		}
		s.mu.Lock()
		s.asking = false
		s.mu.Unlock()
		s.confirm()
	}()
}

// CaughtUp waits until every event the server held when it was called
// has been delivered: a conversation attached to is then replayed.
func (s *Conversation) CaughtUp(ctx context.Context) error {
	n, err := s.c.CountEvents(ctx, s.id)
	if err != nil {
		return err
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		s.mu.Lock()
		delivered := s.delivered
		s.mu.Unlock()
		if delivered >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return &ClosedError{}
		case <-t.C:
		}
	}
}

// SendMessage sends the user's message; the agent runs.
func (s *Conversation) SendMessage(ctx context.Context, text string) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.c.SendMessage(ctx, s.id, text)
}

// Pause lets the agent finish its current step, then stop.
func (s *Conversation) Pause(ctx context.Context) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.c.Pause(ctx, s.id)
}

// Resume lets a paused agent go on.
func (s *Conversation) Resume(ctx context.Context) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.c.Run(ctx, s.id)
}

// Interrupt stops the agent at once.
func (s *Conversation) Interrupt(ctx context.Context) error {
	if err := s.alive(); err != nil {
		return err
	}
	return s.c.Interrupt(ctx, s.id)
}

func (s *Conversation) alive() error {
	if s.ctx.Err() != nil {
		return &ClosedError{}
	}
	return nil
}

// Close stops streaming. The conversation goes on on the server.
func (s *Conversation) Close() {
	s.cancel()
	<-s.done
	s.setStatus(func(st *Status) { st.State, st.Error = StateDisconnected, "" })
}
