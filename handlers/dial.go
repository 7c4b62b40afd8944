package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/conversation"
	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/localserver"
	"github.com/oh-bridge/oh-bridge/ohevents"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/updates"
)

// dialState is this connection's conversation on an OpenHands
// agent-server, whose agent uses the session's tools through the MCP
// endpoint.
type dialState struct {
	mu   sync.Mutex // serializes connect and disconnect
	link *conversation.Link
	// current is link, for readers that must not wait for a connect in
	// progress (a permission question asked while it runs); during a
	// connect, the link being opened (Options.Tracking), which only names
	// calls.
	current atomic.Pointer[conversation.Link]
	// last is the last status sent to the client. It is guarded by h.mu,
	// not mu: connect holds mu while the link reports its status.
	last agentserver.Status
}

// disconnectedStatus is the status with no connection.
var disconnectedStatus = agentserver.Status{Protocol: "v1", State: agentserver.StateDisconnected}

func (h *Handlers) dialing() *dialState {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dial == nil {
		h.dial = &dialState{last: disconnectedStatus}
	}
	return h.dial
}

// conversation is the live link, or nil.
func (d *dialState) conversation() *conversation.Link { return d.current.Load() }

func (d *dialState) set(l *conversation.Link) {
	d.link = l
	d.current.Store(l)
}

func (h *Handlers) stopDial(ctx context.Context) {
	d := h.dialing()
	d.mu.Lock()
	l := d.link
	d.set(nil)
	d.mu.Unlock()
	if l != nil {
		l.Close(ctx)
	}
}

type connectParams struct {
	// Protocol is "v1" (an agent-server), or empty; "v0" is retired.
	Protocol       string `json:"protocol"`
	ServerURL      string `json:"serverUrl"`
	ConversationID string `json:"conversationId"`
	// ContinueFrom starts a new conversation that goes on from this
	// earlier one: its history leads the first message. For a
	// conversation whose tools cannot be served again
	// (mcp_token_exposed).
	ContinueFrom  string            `json:"continueFrom"`
	Task          string            `json:"task"`
	SessionAPIKey string            `json:"sessionApiKey"`
	Headers       map[string]string `json:"headers"`
	// The new agent's LLM, fields of its spec to set, and the
	// conversation's confirmation policy kind.
	LLM                json.RawMessage `json:"llm"`
	Agent              json.RawMessage `json:"agent"`
	ConfirmationPolicy string          `json:"confirmationPolicy"`
	// RelayURL, for an agent-server on another machine, is the editors'
	// side of an `oh-bridge relay` beside it, and RelaySecret the pairing
	// secret it was started with: a new conversation is bound to this
	// window there (docs/relay.md).
	RelayURL    string `json:"relayUrl,omitempty"`
	RelaySecret string `json:"relaySecret,omitempty"`
}

type connectResult struct {
	ConversationID string             `json:"conversationId"`
	Status         agentserver.Status `json:"status"`
	// Via says where the agent's calls come from when not from this
	// machine: "the relay at URL, as window NAME".
	Via string `json:"via,omitempty"`
}

func (h *Handlers) connect(ctx context.Context, p *connectParams) (*connectResult, error) {
	if err := checkServerURL(p.ServerURL); err != nil {
		return nil, err
	}
	switch p.Protocol {
	case "", "v1":
	case "v0":
		return nil, toRPCError(v0RetiredError{})
	default:
		return nil, rpc.InvalidParams("protocol", `"v1" (an OpenHands agent-server, the default)`)
	}
	switch p.ConfirmationPolicy {
	case "", "AlwaysConfirm", "NeverConfirm", "ConfirmRisky":
	default:
		return nil, rpc.InvalidParams("confirmationPolicy", `"AlwaysConfirm", "NeverConfirm" or "ConfirmRisky"`)
	}
	if p.RelayURL != "" {
		if u, err := url.Parse(p.RelayURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, rpc.InvalidParams("relayUrl", "the http(s) URL of the relay's editors' side, as its proxy exposes it, e.g. https://cloud.example/s/abc/relay")
		}
		if p.RelaySecret == "" {
			return nil, rpc.InvalidParams("relaySecret", "the pairing secret `oh-bridge relay` was started with (\"OpenHands: Set Relay Pairing Secret\")")
		}
	}
	sess, err := h.session()
	if err != nil {
		return nil, err
	}
	d := h.dialing()
	d.mu.Lock()
	defer d.mu.Unlock()
	if old := d.link; old != nil {
		st := old.Status()
		if st.ServerURL == p.ServerURL && (p.ConversationID == "" || p.ConversationID == st.ConversationID) &&
			p.Task == "" && st.State == agentserver.StateConnected {
			return &connectResult{ConversationID: st.ConversationID, Status: st, Via: st.Via}, nil
		}
		old.Close(ctx)
		d.set(nil)
	}
	header := http.Header{}
	for k, v := range p.Headers {
		header.Set(k, v)
	}
	// The conversation view gets what the agent says and does as
	// conversation updates, read from the events and the session's calls.
	var convID atomic.Value
	convID.Store("")
	// A conversation on another machine's server reaches this window
	// through the relay given.
	endpoint := h.mcp.Shared(sess)
	if p.RelayURL != "" {
		endpoint = h.mcp.Relayed(sess, facekit.Relay{URL: p.RelayURL, Secret: p.RelaySecret}, endpoint)
	}
	l, err := conversation.Open(ctx, conversation.Options{
		Session:            sess,
		ServerURL:          p.ServerURL,
		SessionAPIKey:      h.local.KeyFor(p.ServerURL, p.SessionAPIKey),
		Header:             header,
		HTTPClient:         h.httpClient(),
		ConversationID:     p.ConversationID,
		ContinueFrom:       p.ContinueFrom,
		Task:               p.Task,
		LLM:                p.LLM,
		Agent:              p.Agent,
		ConfirmationPolicy: p.ConfirmationPolicy,
		FallbackLLM:        localserver.FallbackLLM(h.log),
		WorkingDir:         h.Roots()[0],
		MCP:                endpoint,
		OnUpdate: func(u updates.Update) {
			h.notify(context.Background(), "openhands/did_update_conversation",
				&didUpdateConversationParams{ConversationID: convID.Load().(string), Update: u})
		},
		OnEvent: func(ev ohevents.Event) {
			// Passed on as the server sent it, whatever its kind.
			h.notify(context.Background(), "openhands/did_receive_event", &didReceiveEventParams{Event: ev.Raw()})
		},
		OnStatus: func(st agentserver.Status) {
			convID.Store(st.ConversationID)
			h.reportStatus(st)
		},
		// The permission questions about its calls name them as the
		// view's cards do, from the first call on.
		Tracking: func(l *conversation.Link) { d.current.Store(l) },
		Logger:   h.cfg.Logger,
	})
	if err != nil {
		d.current.Store(nil)
		return nil, toRPCError(err)
	}
	d.set(l)
	st := l.Status()
	h.reportStatus(st)
	return &connectResult{ConversationID: st.ConversationID, Status: st, Via: st.Via}, nil
}

// httpClient is the client for agent-servers: every connection to one on
// this machine is checked to be the person's, or one they confirmed.
func (h *Handlers) httpClient() *http.Client { return h.cfg.Trust.HTTPClient(30 * time.Second) }

// checkServerURL refuses a serverUrl that is not an http(s) URL with a host.
func checkServerURL(s string) error {
	if u, err := url.Parse(s); s == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return rpc.InvalidParams("serverUrl", "the OpenHands agent-server's http(s) URL, e.g. http://localhost:8000")
	}
	return nil
}

// reportStatus sends openhands/did_change_status when the status changed.
func (h *Handlers) reportStatus(st agentserver.Status) {
	d := h.dialing()
	h.mu.Lock()
	changed := st != d.last
	d.last = st
	h.mu.Unlock()
	if changed {
		h.notify(context.Background(), "openhands/did_change_status", &st)
	}
}

func (h *Handlers) disconnect(ctx context.Context, _ *noParams) (*agentserver.Status, error) {
	h.stopDial(ctx)
	h.reportStatus(disconnectedStatus)
	return h.status(ctx, nil)
}

func (h *Handlers) status(ctx context.Context, _ *noParams) (*agentserver.Status, error) {
	d := h.dialing()
	h.mu.Lock()
	defer h.mu.Unlock()
	st := d.last
	return &st, nil
}

type sendMessageParams struct {
	Text string `json:"text"`
}

type notConnectedError struct{}

func (notConnectedError) Error() string {
	return "not connected to an OpenHands agent-server; run openhands/connect first"
}
func (notConnectedError) Kind() string { return "not_connected" }

// v0RetiredError answers openhands/connect with protocol "v0".
type v0RetiredError struct{}

func (v0RetiredError) Error() string {
	return `protocol "v0" is retired: OpenHands removed its V0 server in April 2026, and no OpenHands server ever had an editor-runtime role to dial. ` +
		`Connect to an OpenHands agent-server instead (protocol "v1", the default; its agent uses this bridge's tools over MCP), ` +
		`or give any MCP agent the bridge's tools with "oh-bridge mcp" or mcp/start. openhands/execute_action still runs V0 actions.`
}
func (v0RetiredError) Kind() string { return "protocol_retired" }

// connected returns the current link.
func (h *Handlers) connected() (*conversation.Link, error) {
	d := h.dialing()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.link == nil {
		return nil, notConnectedError{}
	}
	return d.link, nil
}

func (h *Handlers) sendMessage(ctx context.Context, p *sendMessageParams) (any, error) {
	if p.Text == "" {
		return nil, rpc.InvalidParams("text", "a non-empty message for the agent")
	}
	return h.steer(ctx, func(l *conversation.Link, ctx context.Context) error { return l.SendMessage(ctx, p.Text) })
}

// steer runs one call on the link.
func (h *Handlers) steer(ctx context.Context, f func(*conversation.Link, context.Context) error) (any, error) {
	l, err := h.connected()
	if err != nil {
		return nil, err
	}
	if err := f(l, ctx); err != nil {
		return nil, toRPCError(err)
	}
	return nil, nil
}

func (h *Handlers) pause(ctx context.Context, _ *noParams) (any, error) {
	return h.steer(ctx, (*conversation.Link).Pause)
}

func (h *Handlers) resume(ctx context.Context, _ *noParams) (any, error) {
	return h.steer(ctx, (*conversation.Link).Resume)
}

func (h *Handlers) interrupt(ctx context.Context, _ *noParams) (any, error) {
	return h.steer(ctx, (*conversation.Link).Interrupt)
}
