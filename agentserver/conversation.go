package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/ohevents"
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
	Confirm func(ctx context.Context, action *ohevents.ActionEvent) (Decision, error)
	// OnEvent receives every event once, in order; OnStatus every status
	// change. Both are called from the session's goroutine.
	// An event of a kind ohevents does not know comes as an
	// *ohevents.Other; each keeps the bytes the server sent (Raw).
	OnEvent  func(event ohevents.Event)
	OnStatus func(Status)
	// MinBackoff and MaxBackoff bound the wait between reconnects
	// (500 ms and 10 s by default).
	MinBackoff, MaxBackoff time.Duration
	Logger                 *slog.Logger

	// eventsSocket follows the conversation on the events socket even
	// where the session socket is served: the tests compare the two.
	eventsSocket bool
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
	// Via says where the agent's calls reach this window from when not
	// from this machine: "the relay at URL, as window NAME". The
	// conversation's link sets it (this package knows no endpoint).
	Via string `json:"via,omitempty"`
	// ViaDown says, while that way is down (the relay's link), why: the
	// agent's calls wait for it to come back, up to the relay's grace.
	ViaDown string `json:"viaDown,omitempty"`
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

	mu     sync.Mutex
	status Status
	// events is true while the conversation is followed on the events
	// socket rather than the session socket.
	events bool
	// seq is the log index of the last event delivered from the session
	// socket (-1 before the first): it resumes after it.
	seq int
	// replayThrough is the log index of the last event the session socket
	// replays (its sync frame's through_seq; -1 before one came): the
	// events up to it are the past, and a report of waiting for
	// confirmation among them is not acted on (deliver).
	replayThrough int
	// last is the timestamp of the last event delivered: the events
	// socket resumes a little before it.
	last string
	// seen are the ids of the events delivered: the events socket
	// resends some, and an event may come as a transient frame before its
	// durable one.
	seen map[string]bool
	// repeats counts the events not delivered because they were already.
	repeats int
	// untitled is set while a conversation this bridge created has no
	// title: the first message it sends names it (title.go).
	untitled bool
	pending  map[string]*ohevents.ActionEvent // actions without an observation, by id
	order    []string                         // their ids, oldest first
	asking   bool                             // a confirmation is being asked and answered
	asked    map[string]bool                  // actions the user was asked about
	// accepted are the actions the user allowed; waits counts the reports
	// that the agent waits for confirmation, and answeredAt is waits when
	// the last answer went (confirmAgain).
	accepted          map[string]bool
	waits, answeredAt int
	calls             map[string]string // action ids by tool call id
	// answered are actions whose observation (by action id) or error (by
	// tool call id) came before them: the events socket, attached to a
	// running conversation, gets live events while it still replays the
	// log, so an action can arrive after its answer.
	answered, answeredCalls map[string]bool
	// delivered counts the events passed to OnEvent, once it returned;
	// deliveredSeq is the log index of the last durable one.
	delivered, deliveredSeq int
}

func newConversation(o Options, c *Client, id string) *Conversation {
	s := &Conversation{
		opts:          o,
		c:             c,
		log:           o.Logger.With("component", "agentserver", "conversation", id),
		id:            id,
		done:          make(chan struct{}),
		events:        o.eventsSocket,
		seq:           -1,
		replayThrough: -1,
		deliveredSeq:  -1,
		seen:          map[string]bool{},
		pending:       map[string]*ohevents.ActionEvent{},
		asked:         map[string]bool{},
		calls:         map[string]string{},
		answered:      map[string]bool{},
		answeredCalls: map[string]bool{},
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
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
		conv, llmSource, err = startConversation(ctx, c, &o)
	}
	if err != nil {
		return nil, err
	}
	s := newConversation(o, c, conv.ID)
	s.status = Status{Protocol: "v1", State: StateConnecting, ServerURL: c.URL(), ServerVersion: info.Version,
		ConversationID: conv.ID, ExecutionStatus: conv.ExecutionStatus, LLMSource: llmSource}
	if o.ConversationID == "" {
		s.untitled = true
		if o.Task != "" {
			s.titleAfter(ctx, o.Task)
		}
	}
	sock, err := s.dial(ctx)
	if err != nil {
		s.cancel()
		return nil, err
	}
	s.setStatus(func(st *Status) { st.State = StateConnected })
	go s.run(sock)
	if o.ConversationID == "" && o.Task != "" {
		// The first message goes once the socket is attached, not with
		// the conversation (initial_message): the server's event loop
		// serves no socket handshake while the agent's step awaits a tool
		// call, so a socket dialed after the run began waited for the
		// whole of the agent's first command.
		if err := c.SendMessage(ctx, conv.ID, o.Task); err != nil {
			s.Close()
			var busy *ServerBusyError
			if errors.As(err, &busy) {
				// A full server: the conversation goes, as if never made.
				_ = c.DeleteConversation(context.Background(), conv.ID)
				return nil, &ServerBusyError{URL: busy.URL, Request: "POST /api/conversations", Detail: busy.Detail}
			}
			return nil, err
		}
	}
	return s, nil
}

// startConversation creates a conversation whose agent has no built-in
// tools and the bridge's MCP endpoint. Its LLM is the one given, else the
// one the server keeps in its settings (its key sent back encrypted), else
// o.FallbackLLM's; source says which of the last two it was.
func startConversation(ctx context.Context, c *Client, o *Options) (conv *ConversationInfo, source string, err error) {
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
		agent["mcp_config"] = mcpConfig(ep, o.ExtraMCP)
	}
	req := map[string]any{
		"agent":     agent,
		"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": o.WorkingDir},
		// Left true, the server asks the agent's LLM for a title on the
		// first message (AutoTitleSubscriber): a call the person pays
		// for. The bridge names the conversation itself (title.go).
		"autotitle": false,
	}
	if o.ConfirmationPolicy != "" {
		req["confirmation_policy"] = map[string]any{"kind": o.ConfirmationPolicy}
	}
	if encrypted {
		req["secrets_encrypted"] = true
	}
	conv, err = c.StartConversation(ctx, req)
	return conv, source, err
}

// mcpConfig is the agent's mcp_config for the bridge's endpoint: the flat
// map of SDK 1.31.2 on (every server the bridge speaks to).
func mcpConfig(ep MCPServer, extra map[string]any) any {
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
	return flat
}

// ConversationID is the conversation's id.
func (c *Conversation) ConversationID() string { return c.id }

// Status returns a snapshot.
func (c *Conversation) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

func (c *Conversation) setStatus(f func(*Status)) {
	c.mu.Lock()
	before := c.status
	f(&c.status)
	after := c.status
	c.mu.Unlock()
	if after != before && c.opts.OnStatus != nil {
		c.opts.OnStatus(after)
	}
}

// SendMessage sends the user's message; the agent runs.
func (c *Conversation) SendMessage(ctx context.Context, text string) error {
	if err := c.alive(); err != nil {
		return err
	}
	err := c.c.SendMessage(ctx, c.id, text)
	var busy *ServerBusyError
	if err == nil || (errors.As(err, &busy) && busy.Saved) {
		c.titleAfter(ctx, text)
	}
	return err
}

// Pause lets the agent finish its current step, then stop.
func (c *Conversation) Pause(ctx context.Context) error {
	if err := c.alive(); err != nil {
		return err
	}
	return c.c.Pause(ctx, c.id)
}

// Resume lets a paused agent go on.
func (c *Conversation) Resume(ctx context.Context) error {
	if err := c.alive(); err != nil {
		return err
	}
	return c.c.Run(ctx, c.id)
}

// Interrupt stops the agent at once.
func (c *Conversation) Interrupt(ctx context.Context) error {
	if err := c.alive(); err != nil {
		return err
	}
	return c.c.Interrupt(ctx, c.id)
}

func (c *Conversation) alive() error {
	if c.ctx.Err() != nil {
		return &ClosedError{}
	}
	return nil
}

// Close stops streaming. The conversation goes on on the server.
func (c *Conversation) Close() {
	c.cancel()
	<-c.done
	c.setStatus(func(st *Status) { st.State, st.Error = StateDisconnected, "" })
}
