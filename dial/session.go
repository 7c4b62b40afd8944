package dial

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Connection states, as the editor shows them.
const (
	StateDisconnected = "disconnected"
	StateConnecting   = "connecting"
	StateConnected    = "connected"
	StateReconnecting = "reconnecting"
	StateFailed       = "failed"
)

// Executor runs one OpenHands action (an event dict) and returns the
// observation dict. It is called for one action at a time, in order.
type Executor func(ctx context.Context, action json.RawMessage) (json.RawMessage, error)

// SessionOptions configure Connect.
type SessionOptions struct {
	ServerURL string
	// ConversationID joins an existing conversation; without it a new one
	// is created, starting with Task as the user's first message.
	ConversationID string
	Task           string
	SessionAPIKey  string
	Header         http.Header
	HTTPClient     *http.Client
	// Registration is the runtime's self-description sent with
	// oh_runtime_register (workspace name and path, version, capabilities).
	Registration map[string]any
	Execute      Executor
	// OnStatus and OnEvent are called from the session's goroutines, in
	// order; they must not block for long.
	OnStatus func(Status)
	OnEvent  func(event json.RawMessage)
	// ConnectTimeout bounds each dial (default 45 s). Reconnects wait
	// between MinBackoff (500 ms) and MaxBackoff (10 s), with jitter.
	ConnectTimeout         time.Duration
	MinBackoff, MaxBackoff time.Duration
	Logger                 *slog.Logger
}

// Status is a snapshot of the session.
type Status struct {
	State               string `json:"state"`
	ServerURL           string `json:"serverUrl"`
	ConversationID      string `json:"conversationId,omitempty"`
	LastEventID         int    `json:"lastEventId"`
	PendingObservations int    `json:"pendingObservations"`
	RunningActions      int    `json:"runningActions"`
	RuntimeID           string `json:"runtimeId,omitempty"`
	Error               string `json:"error,omitempty"`
}

// Session is the bridge's connection to one OpenHands conversation, in the
// runtime role. It reconnects by itself until Close.
type Session struct {
	opts SessionOptions
	log  *slog.Logger
	rest *REST

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	publishMu sync.Mutex
	mu        sync.Mutex
	status    Status
	conn      *Conn
	pending   map[int]json.RawMessage // observations not yet confirmed by the server
	results   map[int]json.RawMessage // every observation produced, by cause
	order     []int                   // causes in results, oldest first
	running   map[int]bool            // actions being executed

	actions chan Event
}

// NotARuntimeServerError means the server does not implement oh-bridge's
// runtime role (docs/openhands-runtime-protocol.md).
type NotARuntimeServerError struct{ URL string }

func (e *NotARuntimeServerError) Error() string {
	return fmt.Sprintf("the OpenHands server at %s does not accept editor runtimes (oh_runtime_register was not answered with a runtimeId); it needs the runtime-role support in docs/openhands-runtime-protocol.md", e.URL)
}

// Kind is "not_a_runtime_server".
func (e *NotARuntimeServerError) Kind() string { return "not_a_runtime_server" }

// maxResults bounds the memory of executed actions kept for idempotency.
const maxResults = 2048

// Connect resolves the conversation (creating it when asked), connects,
// registers as the conversation's runtime and returns. A failure of this
// first connection is returned in plain words and ends the session; later
// disconnections are retried in the background.
func Connect(ctx context.Context, o SessionOptions) (*Session, error) {
	if o.MinBackoff == 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Session{
		opts:    o,
		log:     o.Logger.With("component", "dial"),
		rest:    &REST{BaseURL: o.ServerURL, SessionAPIKey: o.SessionAPIKey, Header: o.Header, HTTPClient: o.HTTPClient},
		done:    make(chan struct{}),
		pending: map[int]json.RawMessage{},
		results: map[int]json.RawMessage{},
		running: map[int]bool{},
		actions: make(chan Event, 64),
		status:  Status{State: StateConnecting, ServerURL: o.ServerURL, LastEventID: -1},
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.publish()

	id := o.ConversationID
	var err error
	if id == "" {
		id, err = s.rest.CreateConversation(ctx, o.Task)
	} else {
		_, err = s.rest.GetConversation(ctx, id)
	}
	if err != nil {
		s.fail(err)
		return nil, err
	}
	s.setStatus(func(st *Status) { st.ConversationID = id })
	conn, err := s.dialAndRegister(ctx)
	if err != nil {
		s.fail(err)
		return nil, err
	}
	go s.executeLoop()
	go s.run(conn)
	return s, nil
}

// Status returns the current state.
func (s *Session) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	st.PendingObservations = len(s.pending)
	st.RunningActions = len(s.running)
	return st
}

// SendMessage sends the user's text to the conversation.
func (s *Session) SendMessage(ctx context.Context, text string) error {
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn == nil {
		return errors.New("not connected to OpenHands right now; the message was not sent (it reconnects by itself — try again in a moment)")
	}
	return conn.Emit(ctx, "oh_user_action", map[string]any{
		"action": "message",
		"args":   map[string]any{"content": text, "image_urls": []string{}, "file_urls": []string{}},
	})
}

// Close disconnects and stops reconnecting.
func (s *Session) Close() error {
	s.cancel()
	s.mu.Lock()
	conn := s.conn
	s.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
	<-s.done
	s.setStatus(func(st *Status) { st.State, st.Error = StateDisconnected, "" })
	return nil
}

// Done is closed when the session has ended.
func (s *Session) Done() <-chan struct{} { return s.done }

func (s *Session) dialAndRegister(ctx context.Context) (*Conn, error) {
	s.mu.Lock()
	q := url.Values{"conversation_id": {s.status.ConversationID}, "latest_event_id": {strconv.Itoa(s.status.LastEventID)}}
	s.mu.Unlock()
	if s.opts.SessionAPIKey != "" {
		q.Set("session_api_key", s.opts.SessionAPIKey)
	}
	conn, err := Dial(ctx, Options{URL: s.opts.ServerURL, Query: q, Header: s.opts.Header, HTTPClient: s.opts.HTTPClient, ConnectTimeout: s.opts.ConnectTimeout, Logger: s.opts.Logger})
	if err != nil {
		return nil, err
	}
	// Events replayed before CONNECT are handled by run; registering needs
	// its ack, which arrives after them, so drain concurrently.
	regCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ack, err := conn.Call(regCtx, "oh_runtime_register", s.opts.Registration)
	if err != nil {
		conn.Close()
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, &NotARuntimeServerError{URL: s.opts.ServerURL}
		}
		return nil, err
	}
	var reg struct {
		RuntimeID string `json:"runtimeId"`
	}
	if len(ack) == 0 || json.Unmarshal(ack[0], &reg) != nil || reg.RuntimeID == "" {
		conn.Close()
		return nil, &NotARuntimeServerError{URL: s.opts.ServerURL}
	}
	s.mu.Lock()
	previous := s.status.RuntimeID
	s.status.RuntimeID = reg.RuntimeID
	s.status.State, s.status.Error = StateConnected, ""
	s.conn = conn
	s.mu.Unlock()
	if previous != "" && previous != reg.RuntimeID {
		s.log.Info("registered again; the server may have restarted", "previous", previous, "now", reg.RuntimeID)
	}
	s.publish()
	s.resendPending(ctx, conn)
	return conn, nil
}

// resendPending delivers observations whose ack may have been lost.
func (s *Session) resendPending(ctx context.Context, conn *Conn) {
	s.mu.Lock()
	causes := make([]int, 0, len(s.pending))
	for c := range s.pending {
		causes = append(causes, c)
	}
	s.mu.Unlock()
	for _, cause := range causes {
		s.mu.Lock()
		obs, ok := s.pending[cause]
		s.mu.Unlock()
		if !ok {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := conn.Call(cctx, "oh_runtime_observation", obs)
		cancel()
		if err != nil {
			s.log.Warn("could not resend an observation; will retry after the next reconnect", "cause", cause, "error", err)
			return
		}
		s.confirm(cause)
	}
}

// run handles one connection's events, then reconnects until Close.
func (s *Session) run(conn *Conn) {
	defer close(s.done)
	defer close(s.actions)
	for {
		s.handle(conn)
		if s.ctx.Err() != nil {
			return
		}
		s.mu.Lock()
		s.conn = nil
		s.mu.Unlock()
		err := conn.Err()
		s.setStatus(func(st *Status) { st.State, st.Error = StateReconnecting, plain(err) })
		conn = s.reconnect()
		if conn == nil {
			return
		}
	}
}

func (s *Session) handle(conn *Conn) {
	for e := range conn.Events() {
		switch e.Name {
		case "oh_event":
			if len(e.Args) == 0 {
				continue
			}
			var ev struct {
				ID          *int   `json:"id"`
				Cause       *int   `json:"cause"`
				Observation string `json:"observation"`
			}
			json.Unmarshal(e.Args[0], &ev)
			if ev.ID != nil {
				s.setStatus(func(st *Status) {
					if *ev.ID > st.LastEventID {
						st.LastEventID = *ev.ID
					}
				})
			}
			// Our own observation, stored by the server: delivered.
			if ev.Observation != "" && ev.Cause != nil {
				s.confirm(*ev.Cause)
			}
			if s.opts.OnEvent != nil {
				s.opts.OnEvent(e.Args[0])
			}
		case "oh_runtime_action":
			select {
			case s.actions <- e:
			case <-s.ctx.Done():
				return
			}
		default:
			s.log.Debug("ignored event", "name", e.Name)
		}
	}
}

// reconnect dials with exponential backoff and jitter until it succeeds or
// the session is closed.
func (s *Session) reconnect() *Conn {
	delay := s.opts.MinBackoff
	for attempt := 1; ; attempt++ {
		jittered := delay/2 + time.Duration(rand.Int64N(int64(delay)))
		select {
		case <-time.After(jittered):
		case <-s.ctx.Done():
			return nil
		}
		conn, err := s.dialAndRegister(s.ctx)
		if err == nil {
			s.log.Info("reconnected", "attempt", attempt)
			return conn
		}
		if s.ctx.Err() != nil {
			return nil
		}
		s.log.Info("reconnect failed", "attempt", attempt, "error", err)
		s.setStatus(func(st *Status) { st.State, st.Error = StateReconnecting, plain(err) })
		delay = min(delay*2, s.opts.MaxBackoff)
	}
}

// executeLoop runs actions one at a time, in the order they arrived.
func (s *Session) executeLoop() {
	for e := range s.actions {
		if len(e.Args) == 0 {
			continue
		}
		action := e.Args[0]
		var a struct {
			ID *int `json:"id"`
		}
		if json.Unmarshal(action, &a) != nil || a.ID == nil {
			s.log.Warn("ignored an action without an id; it cannot be correlated")
			continue
		}
		id := *a.ID
		s.mu.Lock()
		obs, done := s.results[id]
		if !done {
			s.running[id] = true
		}
		s.mu.Unlock()
		if !done {
			s.publish()
			obs = s.execute(action)
			s.mu.Lock()
			delete(s.running, id)
			s.remember(id, obs)
			s.mu.Unlock()
			s.publish()
		}
		// An action already executed (sent again after a reconnect) gets
		// the same observation: it never runs twice.
		if e.WantsAck() {
			ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
			err := e.Ack(ctx, obs)
			cancel()
			if err == nil {
				continue
			}
			s.log.Warn("could not answer an action on its connection", "cause", id, "error", err)
		}
		// The connection the action came on is gone: deliver on the current
		// one, or keep it for resendPending after the next reconnect.
		s.mu.Lock()
		conn := s.conn
		s.mu.Unlock()
		if conn != nil && conn != e.conn {
			s.resendPending(s.ctx, conn)
		}
	}
}

func (s *Session) execute(action json.RawMessage) json.RawMessage {
	obs, err := s.opts.Execute(s.ctx, action)
	if err == nil {
		return obs
	}
	var a struct {
		ID int `json:"id"`
	}
	json.Unmarshal(action, &a)
	b, _ := json.Marshal(map[string]any{
		"observation": "error", "content": "The editor runtime could not execute the action: " + err.Error(),
		"extras": map[string]any{"error_id": ""}, "cause": a.ID, "source": "agent", "message": err.Error(),
	})
	return b
}

// remember keeps an observation until the server confirms it; mu held.
func (s *Session) remember(cause int, obs json.RawMessage) {
	s.results[cause] = obs
	s.pending[cause] = obs
	s.order = append(s.order, cause)
	if len(s.order) > maxResults {
		old := s.order[0]
		s.order = s.order[1:]
		if _, waiting := s.pending[old]; !waiting {
			delete(s.results, old)
		}
	}
}

func (s *Session) confirm(cause int) {
	s.mu.Lock()
	_, was := s.pending[cause]
	delete(s.pending, cause)
	s.mu.Unlock()
	if was {
		s.publish()
	}
}

func (s *Session) fail(err error) {
	s.setStatus(func(st *Status) { st.State, st.Error = StateFailed, plain(err) })
}

func (s *Session) setStatus(f func(*Status)) {
	s.mu.Lock()
	f(&s.status)
	s.mu.Unlock()
	s.publish()
}

// publish reports the current status; publishMu keeps reports from
// interleaving, so the last one seen is the latest state.
func (s *Session) publish() {
	if s.opts.OnStatus == nil {
		return
	}
	s.publishMu.Lock()
	defer s.publishMu.Unlock()
	s.opts.OnStatus(s.Status())
}

func plain(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
