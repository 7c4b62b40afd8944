// Package conversation links one conversation on an OpenHands agent-server
// to a workspace session, for every face that shows one: the VS Code view
// (package handlers) and ACP clients (package acp).
//
// A Link is the agent-server connection (package agentserver) plus what
// both faces need around it, built once here:
//   - the MCP endpoint through which the conversation's agent reaches the
//     session's tools, handed in by the face and closed with the link when
//     the face says so;
//   - the tracker (package updates) that turns the conversation's events and
//     the session's own tool calls into ACP session updates;
//   - confirmation: an action the agent waits to run is put to the person
//     through the session, and a call of the bridge's own tools allowed
//     there is not asked about again when it arrives;
//   - permission matching: a question about a tool call names the call the
//     way the conversation already shows it (ToolCallID, ToolCallTitle).
//
// List reads the conversations of a working directory, for a face that
// offers to go back to one (ACP's session/list).
//
// It knows no face's wire format: updates, events and status go out
// through Options' functions.
package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/ohevents"
	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/updates"
)

// Endpoint is an MCP endpoint serving the session's tools, as every face
// and the starter (facekit.StartMCP) hand it around.
type Endpoint struct {
	URL, Token string
	// Sessions counts its MCP sessions (nil: not known).
	Sessions func() int
	// Close stops it. A link calls it when it closes, when set: an
	// endpoint made for this link alone. A shared one (the editor's
	// mcp/start) is handed to links without it.
	Close func(context.Context) error
	// Via says, for the person, where the agent's calls come from when
	// they do not come from this machine ("the relay at URL, as window
	// NAME"); "" for a local endpoint.
	Via string
	// Down says, while the way the agent's calls come is down (a relay's
	// link), why, in words; "" while it is up. Watch calls changed each
	// time Down's answer may have changed, until stop. Both nil for an
	// endpoint on this machine.
	Down  func() string
	Watch func(changed func()) (stop func())
}

// Options configure Open.
type Options struct {
	Session *session.Session
	// Where the agent-server is and how to reach it. HTTPClient checks
	// whom it connects to on this machine (localserver.Trust); nil is
	// agentserver.DefaultHTTPClient's check, the person's sockets only.
	ServerURL     string
	SessionAPIKey string
	Header        http.Header
	HTTPClient    *http.Client
	// ConversationID attaches to an existing conversation; without it a
	// new one is created, with Task as its first message, an agent with
	// LLM (and Agent's fields set), ConfirmationPolicy, working in
	// WorkingDir.
	ConversationID string
	// ContinueFrom, for a new conversation, is an earlier one it goes on
	// from: its history leads the first message (History), before Task.
	ContinueFrom string
	// HistoryOnly attaches to ConversationID without serving its agent's
	// tools: they cannot be served again (EndpointExposedError), and the
	// link only reads what happened; nothing is sent to the agent.
	HistoryOnly        bool
	Task               string
	LLM, Agent         json.RawMessage
	ConfirmationPolicy string
	// FallbackLLM: agentserver.Options.FallbackLLM.
	FallbackLLM func() (llm json.RawMessage, source string)
	WorkingDir  string
	// ExtraMCP are the client's own MCP servers for a new agent, in the
	// SDK's mcp_config form.
	ExtraMCP map[string]any
	// MCP starts (or finds) the endpoint of the session's tools; it is
	// called once, when a new conversation's agent needs it (at is the
	// zero Listen: anywhere), or when an attached conversation's agent
	// reaches its tools at an endpoint of a bridge (at is its port and
	// token, and the endpoint must serve there, taking over the MCP
	// sessions an earlier endpoint there gave).
	MCP func(ctx context.Context, at Listen) (Endpoint, error)
	// Records is the directory where the endpoints of the conversations
	// this link creates are recorded, for a later bridge that attaches
	// to them ("": RecordsDir()).
	Records string
	// OnUpdate receives the conversation as the person sees it, in order.
	OnUpdate func(updates.Update)
	// TerminalOutput: the face's client shows a command's output in a
	// display terminal of its own (updates.Options.TerminalOutput).
	TerminalOutput bool
	// OnEvent receives every agent-server event once, in order, before the
	// tracker reads it; OnStatus every status change.
	OnEvent  func(ohevents.Event)
	OnStatus func(agentserver.Status)
	// Tracking, when set, gets the link as soon as it follows the
	// session's calls, before the conversation opens: a new conversation's
	// agent acts on its task at once, and a question about its first call,
	// asked while Open still runs, can name the call as its card does
	// (ToolCallID and ToolCallTitle work from then on; nothing else does).
	Tracking func(*Link)
	Logger   *slog.Logger
}

// Link is one conversation followed into a session.
type Link struct {
	sess    *session.Session
	conv    *agentserver.Conversation
	tracker *updates.Tracker
	stopObs func()

	mu       sync.Mutex
	endpoint *Endpoint
	unwatch  func() // stops Endpoint.Watch
}

// Open connects to the agent-server, attaches to or creates the
// conversation, and follows it until Close.
func Open(ctx context.Context, o Options) (*Link, error) {
	emit := o.OnUpdate
	if emit == nil {
		emit = func(updates.Update) {}
	}
	l := &Link{sess: o.Session, tracker: updates.New(updates.Options{Emit: emit, TerminalOutput: o.TerminalOutput})}
	l.stopObs = o.Session.Observe(l.tracker.Observer())
	if o.Tracking != nil {
		o.Tracking(l)
	}
	if o.Records == "" {
		o.Records = RecordsDir()
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.ContinueFrom != "" && o.ConversationID == "" {
		task, err := continuation(ctx, o)
		if err != nil {
			l.Close(context.Background())
			return nil, err
		}
		o.Task = task
	}
	conv, err := agentserver.Connect(ctx, agentserver.Options{
		ServerURL:          o.ServerURL,
		SessionAPIKey:      o.SessionAPIKey,
		Header:             o.Header,
		HTTPClient:         o.HTTPClient,
		ConversationID:     o.ConversationID,
		Task:               o.Task,
		LLM:                o.LLM,
		Agent:              o.Agent,
		ConfirmationPolicy: o.ConfirmationPolicy,
		FallbackLLM:        o.FallbackLLM,
		WorkingDir:         o.WorkingDir,
		ExtraMCP:           o.ExtraMCP,
		MCP: func(ctx context.Context) (agentserver.MCPServer, error) {
			if o.MCP == nil {
				return agentserver.MCPServer{}, errNoMCP
			}
			ep, err := o.MCP(ctx, Listen{})
			if err != nil {
				return agentserver.MCPServer{}, err
			}
			l.setEndpoint(ep)
			return agentserver.MCPServer{URL: ep.URL, Token: ep.Token}, nil
		},
		// An attached conversation's agent finds its tools where it
		// always did, before anything of it is followed.
		Attached: func(ctx context.Context, conv *agentserver.ConversationInfo) error {
			if o.HistoryOnly {
				return nil
			}
			at, ok, err := named(conv, o.Records)
			var unknown *EndpointUnknownError
			if errors.As(err, &unknown) {
				// Its history is still worth reading: attach, and say
				// why its tool calls will fail.
				log.Warn("attached to a conversation whose tools this bridge cannot serve", "component", "conversation", "conversation", conv.ID, "why", unknown.Error())
				return nil
			}
			if err != nil || !ok {
				return err
			}
			if o.MCP == nil {
				return errNoMCP
			}
			ep, err := serveNamed(ctx, conv, at, o.Records, o.MCP)
			if err != nil {
				return err
			}
			l.setEndpoint(ep)
			log.Info("serving the tools where the attached conversation's agent reaches them", "component", "conversation", "conversation", conv.ID, "url", ep.URL)
			return nil
		},
		Confirm: func(ctx context.Context, event *ohevents.ActionEvent) (agentserver.Decision, error) {
			return confirm(ctx, o.Session, event)
		},
		OnEvent: func(ev ohevents.Event) {
			if o.OnEvent != nil {
				o.OnEvent(ev)
			}
			l.tracker.Event(ev)
		},
		OnStatus: func(st agentserver.Status) {
			if o.OnStatus != nil {
				st.Via, st.ViaDown = l.via()
				o.OnStatus(st)
			}
		},
		Logger: o.Logger,
	})
	if err != nil {
		l.Close(context.Background())
		return nil, err
	}
	l.conv = conv
	// The way to the window going down or up is a change of the status.
	l.mu.Lock()
	if ep := l.endpoint; ep != nil && ep.Watch != nil && o.OnStatus != nil {
		l.unwatch = ep.Watch(func() { o.OnStatus(l.Status()) })
	}
	l.mu.Unlock()
	if o.ConversationID == "" {
		l.mu.Lock()
		ep := l.endpoint
		l.mu.Unlock()
		if ep != nil {
			if err := writeRecord(o.Records, conv.ConversationID(), *ep); err != nil {
				log.Warn("the conversation's endpoint was not recorded: a bridge that attaches to it later cannot serve its tools if the agent-server hides their token",
					"component", "conversation", "conversation", conv.ConversationID(), "error", err)
			}
		}
	}
	return l, nil
}

// continuation is the first message of a new conversation that goes on
// from o.ContinueFrom.
func continuation(ctx context.Context, o Options) (string, error) {
	c, err := agentserver.NewClient(o.ServerURL, o.SessionAPIKey, o.Header, o.HTTPClient)
	if err != nil {
		return "", err
	}
	history, err := History(ctx, c, o.ContinueFrom)
	if err != nil {
		return "", fmt.Errorf("reading the history of conversation %s, to continue it: %w", o.ContinueFrom, err)
	}
	return continuationTask(o.ContinueFrom, history, o.Task), nil
}

func (l *Link) setEndpoint(ep Endpoint) {
	l.mu.Lock()
	l.endpoint = &ep
	l.mu.Unlock()
}

// ToolCallID names a call the person is asked about as the conversation
// shows it, waiting up to wait for the agent-server to report it; the
// request's own id when it does not.
func (l *Link) ToolCallID(ctx context.Context, req session.PermissionRequest, wait time.Duration) string {
	return l.tracker.AwaitToolCallID(ctx, req, wait)
}

// ToolCallTitle is the title of the tool call id as the conversation shows
// it, when the call has been reported.
func (l *Link) ToolCallTitle(id string) (string, bool) { return l.tracker.ToolCallTitle(id) }

// DropNewCalls stops showing the agent's new tool calls, until
// ShowNewCalls: the person cancelled the turn (updates.Tracker.DropNewCalls).
func (l *Link) DropNewCalls() { l.tracker.DropNewCalls() }

// ShowNewCalls shows the agent's new tool calls again: a new turn began.
func (l *Link) ShowNewCalls() { l.tracker.ShowNewCalls() }

// ConversationID is the conversation's id on the agent-server.
func (l *Link) ConversationID() string { return l.conv.ConversationID() }

// Status is the connection's status.
func (l *Link) Status() agentserver.Status {
	st := l.conv.Status()
	st.Via, st.ViaDown = l.via()
	return st
}

// via is where the agent's calls reach this window from, when not from
// this machine, and why that way is down when it is (Endpoint.Via and
// Down).
func (l *Link) via() (via, down string) {
	l.mu.Lock()
	ep := l.endpoint
	l.mu.Unlock()
	if ep == nil {
		return "", ""
	}
	if ep.Down != nil {
		down = ep.Down()
	}
	return ep.Via, down
}

// SendMessage sends the person's message to the agent.
func (l *Link) SendMessage(ctx context.Context, text string) error {
	return l.conv.SendMessage(ctx, text)
}

// Pause, Resume and Interrupt steer the agent.
func (l *Link) Pause(ctx context.Context) error { return l.conv.Pause(ctx) }

// Resume lets a paused agent go on.
func (l *Link) Resume(ctx context.Context) error { return l.conv.Resume(ctx) }

// Interrupt stops the agent's step, then the session's commands it waits
// on: the agent-server's interrupt does not reach those. OpenHands' SDK
// (1.49.1, 1.58.2) calls an MCP tool on a thread of its own and sends no
// notifications/cancelled when the interrupt cancels its run, so the
// command would run on in the agent's terminal, and the terminal refuse
// the agent's next command while it does. They are stopped even when the
// agent-server could not be told: the person asked for everything to stop.
func (l *Link) Interrupt(ctx context.Context) error {
	err := l.conv.Interrupt(ctx)
	for _, id := range l.tracker.RunningAgents() {
		l.sess.InterruptAgent(ctx, id)
	}
	return err
}

// CaughtUp waits until the events the conversation had when the link
// opened have been delivered (a replayed history).
func (l *Link) CaughtUp(ctx context.Context) error { return l.conv.CaughtUp(ctx) }

// Close stops following the conversation (it goes on on the server) and
// closes an endpoint made for the link alone.
func (l *Link) Close(ctx context.Context) {
	if l.conv != nil {
		l.conv.Close()
	}
	l.stopObs()
	l.mu.Lock()
	ep, unwatch := l.endpoint, l.unwatch
	l.endpoint, l.unwatch = nil, nil
	l.mu.Unlock()
	if unwatch != nil {
		unwatch()
	}
	if ep != nil && ep.Close != nil {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		ep.Close(ctx)
	}
}

var errNoMCP = &noMCPError{}

type noMCPError struct{}

func (*noMCPError) Error() string {
	return "this build cannot serve tools over MCP, so an agent-server's agent has no tools to work with"
}
func (*noMCPError) Kind() string { return "mcp_unavailable" }
