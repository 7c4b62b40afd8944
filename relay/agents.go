package relay

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/internal/mcpadopt"
	"github.com/oh-bridge/oh-bridge/relay/wire"
)

// conversation is one agent-server conversation bound to a window: the
// MCP server its agent reaches, at /mcp/{key}, guarded by its token.
type conversation struct {
	key    string
	token  [32]byte // the token's digest
	window string
	owner  [32]byte

	once    sync.Once
	handler http.Handler // made on the agent's first request, from the window's tools
	server  *mcp.Server
	// adopter names the agent's sessions, and takes over those the agent
	// holds from before a restart of the relay (internal/mcpadopt).
	adopter mcpadopt.Adopter

	mu     sync.Mutex
	agents map[*mcp.ServerSession]*agentLink
}

// agentLink is one of the agent's MCP sessions, carried to the window as
// a stream, with the relay as the MCP client at the window's end.
type agentLink struct {
	stream *wire.Stream
	client *mcp.ClientSession
}

// protocolVersions are the MCP versions the agents' side serves, newest
// first: those with sessions, as an agent's terminal lives as long as its
// session (mcpserver serves the same).
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

var conversationKey = regexp.MustCompile(`^[A-Za-z0-9_-]{16,64}$`)

func (r *Relay) newConversation(key, token, windowID string, owner [32]byte) *conversation {
	return &conversation{key: key, token: sha256.Sum256([]byte(token)), window: windowID, owner: owner, agents: map[*mcp.ServerSession]*agentLink{}}
}

// bind makes a conversation for the window: its key, token and URL.
func (r *Relay) bind(win *window) (wire.Bound, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.conversations) >= r.opts.MaxConversations {
		return wire.Bound{}, errorf(KindRelayFull, "the relay has %d conversations, its cap (--max-conversations): delete finished conversations or raise the cap", r.opts.MaxConversations)
	}
	key, token := wire.NewSecret()[:32], wire.NewSecret()
	r.conversations[key] = r.newConversation(key, token, win.info.ID, win.owner)
	r.boundLocked()
	return wire.Bound{Conversation: key, URL: strings.TrimSuffix(r.opts.AgentBase, "/") + "/mcp/" + key, Token: token}, nil
}

// boundLocked wakes the requests that wait for a conversation to be
// bound. r.mu is held.
func (r *Relay) boundLocked() {
	close(r.bound)
	r.bound = make(chan struct{})
}

// rebindWait is how long after its start the relay holds a request for
// a conversation it does not know: a bridge whose relay went away dials
// again within 5 s (relaylink's longest wait between tries).
const rebindWait = 10 * time.Second

// conversation finds a conversation. In the relay's first seconds after
// it starts, one not known waits for the windows to come back: a relay that
// restarted learns its conversations again from their bridges' hellos,
// and an agent's call that comes first is not refused for that.
func (r *Relay) conversation(ctx context.Context, key string) *conversation {
	for {
		r.mu.Lock()
		c, wait := r.conversations[key], r.bound
		r.mu.Unlock()
		left := rebindWait - time.Since(r.started)
		if c != nil || left <= 0 {
			return c
		}
		t := time.NewTimer(left)
		select {
		case <-wait:
			t.Stop()
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil
		}
	}
}

// AgentHandler serves the agents' side: /mcp/{conversation}, MCP over
// Streamable HTTP with the conversation's token as bearer.
func (r *Relay) AgentHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rest, ok := strings.CutPrefix(req.URL.Path, "/mcp/")
		key, _, _ := strings.Cut(rest, "/")
		if !ok || !conversationKey.MatchString(key) {
			http.Error(w, "the relay serves an agent's tools at /mcp/{conversation}", http.StatusNotFound)
			return
		}
		c := r.conversation(req.Context(), key)
		token, _ := bearer(req)
		sum := sha256.Sum256([]byte(token))
		if c == nil || subtle.ConstantTimeCompare(sum[:], c.token[:]) != 1 {
			// One answer for an unknown conversation and a wrong token.
			w.Header().Set("WWW-Authenticate", `Bearer realm="oh-bridge relay"`)
			http.Error(w, "this conversation's tools need its token (Authorization: Bearer <token>, as the bridge set it in the conversation's mcp_config)", http.StatusUnauthorized)
			return
		}
		h, err := r.handlerFor(c)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		id := req.Header.Get(mcpadopt.SessionHeader)
		switch {
		case id == "" && req.Method == http.MethodPost:
			// An initialize: one session is made at a time, so an
			// adopted id goes to no other.
			c.adopter.Making.Lock()
			defer c.adopter.Making.Unlock()
		case id != "" && (req.Method == http.MethodPost || req.Method == http.MethodGet) && !mcpadopt.Knows(c.server, id):
			// A session from before the relay restarted.
			if err := c.adopter.Adopt(req, h, c.server, req.URL.Path, id, protocolVersions); err != nil {
				r.log.Info("an agent's MCP session from before could not be taken over", "conversation", key, "error", err)
			}
		}
		h.ServeHTTP(w, req)
	})
}

// handlerFor makes the conversation's MCP server on its first request:
// the window's tools, schemas and instructions, each call carried to the
// window.
func (r *Relay) handlerFor(c *conversation) (http.Handler, error) {
	r.mu.Lock()
	win := r.windows[c.window]
	var info wire.Window
	if win != nil {
		info = win.info
	}
	r.mu.Unlock()
	if win == nil {
		return nil, errorf(KindNoWindow, "no editor window is bound to this conversation: the window that made it closed; start the conversation again from an editor connected to this relay")
	}
	var err error
	c.once.Do(func() {
		srv := mcp.NewServer(&mcp.Implementation{Name: "oh-bridge-relay", Version: r.opts.Version},
			&mcp.ServerOptions{Instructions: info.Instructions, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
				SupportedProtocolVersions: protocolVersions, GetSessionID: c.adopter.SessionID})
		c.server = srv
		for _, raw := range info.Tools {
			var t mcp.Tool
			if e := json.Unmarshal(raw, &t); e != nil || t.Name == "" {
				err = errorf("bad_window", "the editor window sent a tool the relay cannot serve: %v", e)
				return
			}
			srv.AddTool(&t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return r.call(ctx, c, req)
			})
		}
		c.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Logger: r.log})
	})
	if err != nil {
		return nil, err
	}
	if c.handler == nil {
		return nil, errorf("bad_window", "the conversation's tools could not be set up; start it again")
	}
	return c.handler, nil
}

// call carries one tool call to the window and its answer back. The
// window runs it as a local call: its terminal, buffers and questions.
func (r *Relay) call(ctx context.Context, c *conversation, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	select {
	case r.calls <- struct{}{}:
		defer func() { <-r.calls }()
	default:
		return failure(errorf(KindRelayFull, "the relay runs %d calls at once, its cap (--max-calls): try again when one ends", r.opts.MaxCalls)), nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.CallTimeout)
	defer cancel()
	al, err := r.agentLink(ctx, c, req.Session)
	if err != nil {
		return r.answerErr(ctx, err)
	}
	params := &mcp.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments}
	if tok, ok := progressToken(req.Params.GetProgressToken()); ok {
		params.SetProgressToken(tok)
	}
	res, err := al.client.CallTool(ctx, params)
	if err != nil {
		return r.answerErr(ctx, err)
	}
	return res, nil
}

// progressToken is the agent's token as the SDK takes it again: a
// number arrives decoded as a float64 (the agent-server's MCP client
// sends 2), which the SDK's setter refuses, so a whole one becomes an
// int64, the same on the wire. Any other is not passed on: the call
// runs without progress rather than the relay failing.
func progressToken(tok any) (any, bool) {
	switch v := tok.(type) {
	case string, int, int32, int64:
		return v, true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v), true
		}
	}
	return nil, false
}

// answerErr words a failed call for the agent. A call the agent
// cancelled gets no result, as MCP has it.
func (r *Relay) answerErr(ctx context.Context, err error) (*mcp.CallToolResult, error) {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return failure(errorf(KindCallTimeout, "the editor window did not answer the call within %s (the relay's --call-timeout); the command may still run there", r.opts.CallTimeout)), nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var re *Error
	if errors.As(err, &re) {
		return failure(re), nil
	}
	var ce *wire.ClosedError
	if errors.As(err, &ce) {
		return failure(&Error{kind: ce.Kind(), words: ce.Error()}), nil
	}
	return failure(errorf(KindWindowGone, "the call to the editor window failed: %v", err)), nil
}

func failure(e *Error) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: e.Error()}},
		Meta: mcp.Meta{"oh-bridge/error": map[string]any{"kind": e.Kind()}}}
}

// agentImplementation is who the relay says it is to the window for one
// agent's session: the agent's own client, as it would say itself to a
// window it reached directly (the window names the agent's terminal after
// it), and the relay when the agent gave no name.
func agentImplementation(ss *mcp.ServerSession, version string) *mcp.Implementation {
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
		return &mcp.Implementation{Name: p.ClientInfo.Name, Version: p.ClientInfo.Version}
	}
	return &mcp.Implementation{Name: "oh-bridge-relay", Version: version}
}

// agentLink returns the stream and client that carry one agent MCP
// session to the window, opening them on its first call.
func (r *Relay) agentLink(ctx context.Context, c *conversation, ss *mcp.ServerSession) (*agentLink, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if al := c.agents[ss]; al != nil {
		return al, nil
	}
	r.mu.Lock()
	win := r.windows[c.window]
	r.mu.Unlock()
	if win == nil {
		return nil, errorf(KindNoWindow, "no editor window is bound to this conversation: the window that made it closed; start the conversation again from an editor connected to this relay")
	}
	if err := r.waitBack(ctx, win); err != nil {
		return nil, err
	}
	s := wire.NewStream(wire.NewSecret()[:24])
	r.mu.Lock()
	link := win.link
	if link == nil || win.streams == nil {
		r.mu.Unlock()
		return nil, errorf(KindWindowGone, "the editor window %q dropped its link as the call began; try the call again", win.name)
	}
	win.streams[s.ID()] = &carried{s: s, conversation: c.key}
	r.mu.Unlock()
	if err := link.Send(wire.Frame{T: wire.TOpen, S: s.ID(), Conversation: c.key}); err != nil {
		return nil, errorf(KindWindowGone, "the editor window %q dropped its link as the call began; try the call again", win.name)
	}
	_ = link.Carry(s, 0)
	client := mcp.NewClient(agentImplementation(ss, r.opts.Version), &mcp.ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, p *mcp.ProgressNotificationClientRequest) {
			_ = ss.NotifyProgress(ctx, p.Params)
		},
	})
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cs, err := client.Connect(cctx, wire.Transport{Stream: s}, nil)
	if err != nil {
		s.Shut(err)
		return nil, errorf(KindWindowGone, "the editor window %q did not start a session for the agent: %v", win.name, err)
	}
	al := &agentLink{stream: s, client: cs}
	c.agents[ss] = al
	go func() {
		// The agent's session ends: so does its stream to the window.
		_ = ss.Wait()
		_ = cs.Close()
		s.Shut(wire.ErrStreamClosed)
		c.mu.Lock()
		delete(c.agents, ss)
		c.mu.Unlock()
		r.mu.Lock()
		if win.streams != nil {
			delete(win.streams, s.ID())
		}
		l := win.link
		r.mu.Unlock()
		if l != nil {
			_ = l.Send(wire.Frame{T: wire.TClose, S: s.ID(), Why: "the agent's MCP session ended", Kind: "session_ended"})
			l.Drop(s.ID())
		}
	}()
	return al, nil
}
