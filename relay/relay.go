// Package relay is `oh-bridge relay`: it runs where an agent-server runs,
// serves the person's tools to that server's agents over MCP on its own
// side (loopback by default), and carries each call to the editor window
// the conversation is bound to, over the WebSocket that window's bridge
// dialed out to it. The person's machine opens no port. docs/relay.md
// has the picture, the protocol and the security model.
package relay

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/relay/wire"
)

// Options configure a Relay.
type Options struct {
	// Secrets are the pairing secrets, one a person: a window is listed
	// and reached only under the secret that registered it.
	Secrets []string
	// AgentBase is the URL at which the agents reach the agent side
	// ("http://127.0.0.1:8931"); a conversation's MCP URL is under it.
	AgentBase string
	// Grace is how long a window whose link dropped is kept for it to
	// come back (0: DefaultGrace); its calls wait that long too.
	Grace time.Duration
	// CallTimeout bounds one tool call (0: DefaultCallTimeout).
	CallTimeout time.Duration
	// Caps (0: the defaults below).
	MaxWindows, MaxConversations, MaxCalls int
	// Heartbeat is how often a link is pinged (0: wire.Heartbeat).
	Heartbeat time.Duration
	Version   string
	Logger    *slog.Logger
}

func (o Options) heartbeat() time.Duration {
	if o.Heartbeat == 0 {
		return wire.Heartbeat
	}
	return o.Heartbeat
}

// Defaults.
const (
	DefaultGrace            = 30 * time.Second
	DefaultCallTimeout      = 10 * time.Minute
	DefaultMaxWindows       = 256
	DefaultMaxConversations = 1024
	DefaultMaxCalls         = 256
	// helloTimeout bounds the wait for a new link's first frame.
	helloTimeout = 10 * time.Second
)

// Relay is the registry of windows and conversations, and the router of
// calls between them.
type Relay struct {
	opts    Options
	log     *slog.Logger
	secrets [][32]byte
	calls   chan struct{} // a slot per call running

	started time.Time

	mu            sync.Mutex
	windows       map[string]*window
	conversations map[string]*conversation
	// bound is closed, and replaced, each time conversations are bound:
	// a request for one not (yet) known waits on it after a restart.
	bound chan struct{}
}

// New returns a relay. It needs at least one pairing secret.
func New(o Options) (*Relay, error) {
	if len(o.Secrets) == 0 {
		return nil, errors.New("the relay needs a pairing secret: give --secret-file with one secret a line (make one with `oh-bridge relay secret`)")
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.MaxWindows == 0 {
		o.MaxWindows = DefaultMaxWindows
	}
	if o.MaxConversations == 0 {
		o.MaxConversations = DefaultMaxConversations
	}
	if o.MaxCalls == 0 {
		o.MaxCalls = DefaultMaxCalls
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Relay{opts: o, log: o.Logger.With("component", "relay"), calls: make(chan struct{}, o.MaxCalls),
		windows: map[string]*window{}, conversations: map[string]*conversation{}, bound: make(chan struct{}), started: time.Now()}
	for _, s := range o.Secrets {
		if len(s) < 16 {
			return nil, fmt.Errorf("a pairing secret of %d characters is too short to guard a shell: use 16 or more (`oh-bridge relay secret` makes one)", len(s))
		}
		r.secrets = append(r.secrets, sha256.Sum256([]byte(s)))
	}
	return r, nil
}

// SetAgentBase sets the agents' side's URL, once its listener has its
// port; call it before serving.
func (r *Relay) SetAgentBase(url string) { r.opts.AgentBase = url }

// owner finds whose secret a request's Authorization header carries. The
// comparison is of digests, in constant time, over every secret.
func (r *Relay) owner(req *http.Request) ([32]byte, bool) {
	token, ok := bearer(req)
	if !ok {
		return [32]byte{}, false
	}
	sum := sha256.Sum256([]byte(token))
	found := 0
	var who [32]byte
	for _, s := range r.secrets {
		if subtle.ConstantTimeCompare(sum[:], s[:]) == 1 {
			found = 1
			who = s
		}
	}
	return who, found == 1
}

func bearer(req *http.Request) (string, bool) {
	h := req.Header.Get("Authorization")
	const p = "Bearer "
	if len(h) <= len(p) || !strings.EqualFold(h[:len(p)], p) {
		return "", false
	}
	return h[len(p):], true
}

// window is a registered editor window.
type window struct {
	info    wire.Window
	owner   [32]byte
	name    string // info.Name, told apart from its namesakes
	link    *wire.Link
	back    chan struct{} // closed when a link comes (back), after its welcome
	away    *time.Timer   // runs while the link is down
	streams map[string]*carried
	// pending is a link whose welcome is on its way: it becomes link
	// once the welcome went, so that nothing else reaches the bridge
	// before it.
	pending *wire.Link
}

// carried is one agent session's stream to the window, with the
// conversation it belongs to (its open names it).
type carried struct {
	s            *wire.Stream
	conversation string
}

// WindowInfo is a window as discovery lists it.
type WindowInfo struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Roots   []string `json:"roots"`
	Version string   `json:"version"`
	// Connected is false while the window's link is down and the relay
	// waits for it to come back.
	Connected     bool     `json:"connected"`
	Conversations []string `json:"conversations"`
}

// Windows lists the windows registered under owner's secret.
func (r *Relay) windowsOf(owner [32]byte) []WindowInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []WindowInfo{}
	for id, w := range r.windows {
		if w.owner != owner {
			continue
		}
		wi := WindowInfo{ID: id, Name: w.name, Roots: w.info.Roots, Version: w.info.Version, Connected: w.link != nil, Conversations: []string{}}
		for k, c := range r.conversations {
			if c.window == id {
				wi.Conversations = append(wi.Conversations, k)
			}
		}
		out = append(out, wi)
	}
	return out
}

// uniqueName is name, or name with a number when another window of the
// same owner has it already (two windows of one workspace).
func (r *Relay) uniqueName(owner [32]byte, id, name string) string {
	taken := map[string]bool{}
	for wid, w := range r.windows {
		if wid != id && w.owner == owner {
			taken[w.name] = true
		}
	}
	if !taken[name] {
		return name
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s (%d)", name, i); !taken[n] {
			return n
		}
	}
}

// Error kinds the relay gives, to the agent in a tool's text and to the
// bridge in frames.
const (
	KindNoWindow     = "relay_no_window"
	KindWindowGone   = "relay_window_gone"
	KindRelayFull    = "relay_full"
	KindCallTimeout  = "relay_call_timeout"
	KindUnauthorized = "relay_unauthorized"
)

// Error is a relay's refusal, in words, with its kind.
type Error struct {
	kind  string
	words string
}

func (e *Error) Error() string { return e.words }

// Kind is the error's kind.
func (e *Error) Kind() string { return e.kind }

func errorf(kind, format string, args ...any) *Error {
	return &Error{kind: kind, words: fmt.Sprintf(format, args...)}
}
