package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/oh-bridge/oh-bridge/conversation"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// dialMethods connect the bridge to OpenHands, on demand: no network
// traffic of any kind happens before openhands/connect. Protocol "v1"
// (the default) dials an OpenHands agent-server (dial_v1.go); "v0" plays
// the runtime role of the V0 Socket.IO server (dial_v0.go).
func (h *Handlers) dialMethods() map[string]rpc.Method {
	return map[string]rpc.Method{
		"openhands/connect":      {Class: rpc.Concurrent, Handle: handle(h.connect)},
		"openhands/disconnect":   {Class: rpc.Concurrent, Handle: handle(h.disconnect)},
		"openhands/status":       {Class: rpc.Inline, Handle: handle(h.status)},
		"openhands/send_message": {Class: rpc.Concurrent, Handle: handle(h.sendMessage)},
		"openhands/pause":        {Class: rpc.Concurrent, Handle: handle(h.pause)},
		"openhands/resume":       {Class: rpc.Concurrent, Handle: handle(h.resume)},
		"openhands/interrupt":    {Class: rpc.Concurrent, Handle: handle(h.interrupt)},
	}
}

// link is a connection to one OpenHands conversation, of either protocol.
type link interface {
	SendMessage(ctx context.Context, text string) error
	Close()
	// reusable says whether a new openhands/connect with these params can
	// keep this connection.
	reusable(p *connectParams) bool
	// status is the current status, as openhands/status answers it.
	status() any
}

// steerable links can pause, resume and interrupt the agent (V1).
type steerable interface {
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
	tracker atomic.Pointer[conversation.Tracker]
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
	// Protocol is "v1" (an agent-server; the default) or "v0".
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
		return nil, rpc.InvalidParams("serverUrl", "the OpenHands server's http(s) URL, e.g. http://localhost:8000 (an agent-server) or http://localhost:3000 (V0)")
	}
	switch p.Protocol {
	case "", "v1", "v0":
	default:
		return nil, rpc.InvalidParams("protocol", `"v1" (an OpenHands agent-server, the default) or "v0" (an OpenHands V0 server)`)
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
	var l link
	var err error
	if p.Protocol == "v0" {
		l, err = h.connectV0(ctx, p, header)
	} else {
		l, err = h.connectV1(ctx, p, header)
	}
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

type unsupportedSteerError struct{ what string }

func (e unsupportedSteerError) Error() string {
	return e.what + " needs an OpenHands V1 agent-server; this connection plays the V0 runtime role (protocol \"v0\")"
}
func (e unsupportedSteerError) Kind() string { return "unsupported_action" }

// steer runs pause, resume or interrupt on a V1 link.
func (h *Handlers) steer(ctx context.Context, what string, f func(steerable, context.Context) error) (any, error) {
	l, err := h.connected()
	if err != nil {
		return nil, err
	}
	s, ok := l.(steerable)
	if !ok {
		return nil, unsupportedSteerError{what}
	}
	if err := f(s, ctx); err != nil {
		return nil, toRPCError(err)
	}
	return nil, nil
}

func (h *Handlers) pause(ctx context.Context, _ *noParams) (any, error) {
	return h.steer(ctx, "pause", steerable.Pause)
}

func (h *Handlers) resume(ctx context.Context, _ *noParams) (any, error) {
	return h.steer(ctx, "resume", steerable.Resume)
}

func (h *Handlers) interrupt(ctx context.Context, _ *noParams) (any, error) {
	return h.steer(ctx, "interrupt", steerable.Interrupt)
}
