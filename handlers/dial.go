package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/oh-bridge/oh-bridge/updates"

	"github.com/oh-bridge/oh-bridge/rpc"
)

type link interface {
	SendMessage(ctx context.Context, text string) error
	Close()
	// reusable says whether a new openhands/connect with these params can
	// keep this connection.
	reusable(p *connectParams) bool
	// status is the current status, as openhands/status answers it.
	status() any
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
	Interrupt(ctx context.Context) error
}

// dialState is the session's OpenHands connection.
type dialState struct {
	mu   sync.Mutex // serializes connect and disconnect
	link link
	// last is the last status sent to the client, as JSON. It is guarded
	// by h.mu, not mu: connect holds mu while the link reports its status.
	last json.RawMessage
	// tracker follows the V1 conversation, for the view and to name the
	// calls the person is asked about.
	tracker atomic.Pointer[updates.Tracker]
}

// disconnectedStatus is the status with no connection.
var disconnectedStatus = map[string]any{"state": "disconnected", "lastEventId": -1}

func (h *Handlers) dialing() *dialState {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dial == nil {
		b, _ := json.Marshal(disconnectedStatus)
		h.dial = &dialState{last: b}
	}
	return h.dial
}

func (h *Handlers) stopDial(ctx context.Context) {
	d := h.dialing()
	d.mu.Lock()
	l := d.link
	d.link = nil
	d.mu.Unlock()
	if l != nil {
		l.Close()
	}
}

type connectParams struct {
	// Protocol is "v1" (an agent-server), or empty; "v0" is retired.
	Protocol       string            `json:"protocol"`
	ServerURL      string            `json:"serverUrl"`
	ConversationID string            `json:"conversationId"`
	Task           string            `json:"task"`
	SessionAPIKey  string            `json:"sessionApiKey"`
	Headers        map[string]string `json:"headers"`
	// V1 only: the new agent's LLM, fields of its spec to set, and the
	// conversation's confirmation policy kind.
	LLM                json.RawMessage `json:"llm"`
	Agent              json.RawMessage `json:"agent"`
	ConfirmationPolicy string          `json:"confirmationPolicy"`
}

type connectResult struct {
	ConversationID string `json:"conversationId"`
	Status         any    `json:"status"`
}

func (h *Handlers) connect(ctx context.Context, p *connectParams) (*connectResult, error) {
	if u, err := url.Parse(p.ServerURL); p.ServerURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, rpc.InvalidParams("serverUrl", "the OpenHands agent-server's http(s) URL, e.g. http://localhost:8000")
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
	d := h.dialing()
	d.mu.Lock()
	defer d.mu.Unlock()
	if old := d.link; old != nil {
		if old.reusable(p) {
			return linkResult(old), nil
		}
		old.Close()
		d.link = nil
	}
	header := http.Header{}
	for k, v := range p.Headers {
		header.Set(k, v)
	}
	l, err := h.connectV1(ctx, p, header)
	if err != nil {
		return nil, toRPCError(err)
	}
	d.link = l
	h.reportStatus(l.status())
	return linkResult(l), nil
}

func linkResult(l link) *connectResult {
	st := l.status()
	var id struct {
		ConversationID string `json:"conversationId"`
	}
	b, _ := json.Marshal(st)
	json.Unmarshal(b, &id)
	return &connectResult{ConversationID: id.ConversationID, Status: st}
}

// reportStatus sends openhands/did_change_status when the status changed.
func (h *Handlers) reportStatus(st any) {
	b, err := json.Marshal(st)
	if err != nil {
		return
	}
	d := h.dialing()
	h.mu.Lock()
	changed := string(b) != string(d.last)
	d.last = b
	h.mu.Unlock()
	if changed {
		_ = h.conn.Notify(context.Background(), "openhands/did_change_status", json.RawMessage(b))
	}
}

// receiveEvent passes a conversation event to the client.
func (h *Handlers) receiveEvent(event json.RawMessage) {
	_ = h.conn.Notify(context.Background(), "openhands/did_receive_event", map[string]any{"event": event})
}

func (h *Handlers) disconnect(ctx context.Context, _ *noParams) (json.RawMessage, error) {
	h.stopDial(ctx)
	h.reportStatus(disconnectedStatus)
	return h.status(ctx, nil)
}

func (h *Handlers) status(ctx context.Context, _ *noParams) (json.RawMessage, error) {
	d := h.dialing()
	h.mu.Lock()
	defer h.mu.Unlock()
	return d.last, nil
}

type sendMessageParams struct {
	Text string `json:"text"`
}

type notConnectedError struct{}

func (notConnectedError) Error() string {
	return "not connected to an OpenHands server; run openhands/connect first"
}
func (notConnectedError) Kind() string { return "not_connected" }

// connected returns the current link.
func (h *Handlers) connected() (link, error) {
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
	l, err := h.connected()
	if err != nil {
		return nil, err
	}
	if err := l.SendMessage(ctx, p.Text); err != nil {
		return nil, toRPCError(err)
	}
	return nil, nil
}

// v0RetiredError answers openhands/connect with protocol "v0".
type v0RetiredError struct{}

func (v0RetiredError) Error() string {
	return `protocol "v0" is retired: OpenHands removed its V0 server in April 2026, and no OpenHands server ever had an editor-runtime role to dial. ` +
		`Connect to an OpenHands agent-server instead (protocol "v1", the default; its agent uses this bridge's tools over MCP), ` +
		`or give any MCP agent the bridge's tools with "oh-bridge mcp" or mcp/start. openhands/execute_action still runs V0 actions.`
}
func (v0RetiredError) Kind() string { return "protocol_retired" }

// steer runs pause, resume or interrupt on the link.
func (h *Handlers) steer(ctx context.Context, f func(link, context.Context) error) (any, error) {
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
	return h.steer(ctx, link.Pause)
}

func (h *Handlers) resume(ctx context.Context, _ *noParams) (any, error) {
	return h.steer(ctx, link.Resume)
}

func (h *Handlers) interrupt(ctx context.Context, _ *noParams) (any, error) {
	return h.steer(ctx, link.Interrupt)
}
