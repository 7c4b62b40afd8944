package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/oh-bridge/oh-bridge/internal/mcpadopt"
	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/session"
)

// ProtocolVersions are the MCP versions served: the current one,
// stateless, on stdio only (discover.go says why), and those with
// sessions, because an agent's terminal and task list live as long as its
// session.
var ProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}

// Options configure a Server.
type Options struct {
	Version string
	Logger  *slog.Logger
	// NoChangeTimeout is the agents' terminal soft timeout (0: 30 s).
	NoChangeTimeout time.Duration
	// MaxWait bounds how long one terminal call waits before it answers
	// as after a hard timeout, the command running on; 0 means
	// DefaultMaxWait, negative means no bound.
	MaxWait time.Duration
	// ToolPrefix goes before each tool's name ("bridge_" serves
	// bridge_terminal, …), for an agent with tools of the same names; it
	// must pass CheckToolPrefix. The calls, texts and results are
	// OpenHands' own whatever the names.
	ToolPrefix string
	// ExtraTools names tools of the bridge's own to serve beside
	// OpenHands' (ohtools.ExtraTools: "open_file"); they must pass
	// CheckExtraTools. None by default: the tools are OpenHands' own.
	ExtraTools []string
}

// DefaultMaxWait answers a terminal call before OpenHands' MCP client
// gives up on it (MCP_TOOL_TIMEOUT_SECONDS, 300 s), so the agent learns the
// command still runs instead of getting a timeout error.
const DefaultMaxWait = 280 * time.Second

// Server serves the tools of one session to MCP clients.
type Server struct {
	sess   *session.Session
	opts   Options
	log    *slog.Logger
	sdkLog *slog.Logger
	mcp    *mcp.Server
	tools  []*ohtools.Tool // the tools served
	listed []*mcp.Tool     // as served, for a relay to serve the same

	mu     sync.Mutex
	agents map[*mcp.ServerSession]*session.Agent
	watch  *watch // the HTTP endpoint's, if it serves one
	// adopter names the sessions made, and takes over earlier ones
	// (adopt.go); its Making is held while the HTTP endpoint makes one.
	adopter mcpadopt.Adopter
}

const instructions = "These are OpenHands' own tools (%s), acting in the user's workspace " +
	"inside their editor: the user sees each command run in a terminal of the editor, edits land in open buffers, " +
	"and the user may be asked to allow an action first. File paths must be absolute and inside the workspace."

// New returns a server for the session's tools. It panics on a ToolPrefix
// that CheckToolPrefix refuses, or ExtraTools that CheckExtraTools
// refuses: callers check what a person typed first.
func New(sess *session.Session, o Options) *Server {
	if err := CheckToolPrefix(o.ToolPrefix); err != nil {
		panic(err)
	}
	tools, err := ohtools.Select(o.ExtraTools)
	if err != nil {
		panic(err)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case o.MaxWait == 0:
		o.MaxWait = DefaultMaxWait
	case o.MaxWait < 0:
		o.MaxWait = 0
	}
	s := &Server{sess: sess, opts: o, tools: tools, log: o.Logger.With("component", "mcp"), agents: map[*mcp.ServerSession]*session.Agent{}}
	s.sdkLog = slog.New(quieter{o.Logger.With("component", "mcp-sdk").Handler(), slog.LevelWarn})
	s.mcp = mcp.NewServer(s.implementation(),
		&mcp.ServerOptions{
			Instructions:              s.instructions(),
			Logger:                    s.sdkLog,
			Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
			SupportedProtocolVersions: ProtocolVersions,
			GetSessionID:              s.adopter.SessionID,
		})
	for _, t := range tools {
		d := t.Definition(sess.Roots()[0])
		destructive, openWorld := d.Annotations.DestructiveHint, d.Annotations.OpenWorldHint
		// The prefix is applied here only: the handler and the session
		// know the tool by OpenHands' name.
		mt := &mcp.Tool{
			Name:        o.ToolPrefix + d.Name,
			Description: d.Description,
			InputSchema: d.InputSchema,
			Annotations: &mcp.ToolAnnotations{
				Title:           d.Annotations.Title,
				ReadOnlyHint:    d.Annotations.ReadOnlyHint,
				DestructiveHint: &destructive,
				IdempotentHint:  d.Annotations.IdempotentHint,
				OpenWorldHint:   &openWorld,
			},
		}
		s.listed = append(s.listed, mt)
		s.mcp.AddTool(mt, s.tool(d.Name))
	}
	return s
}

// ToolList is the tools as served, and the server's instructions: a
// relay serves the same to an agent elsewhere.
func (s *Server) ToolList() ([]*mcp.Tool, string) { return s.listed, s.instructions() }

// ServeConnection serves one MCP session on t (a relay's stream) until
// the client ends it or ctx ends; ending ctx ends this session only.
func (s *Server) ServeConnection(ctx context.Context, t mcp.Transport) error {
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("serving MCP: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	defer stop()
	err = ss.Wait()
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// instructions name the tools as served.
func (s *Server) instructions() string {
	var own, extra []*ohtools.Tool
	for _, t := range s.tools {
		if t.Extra {
			extra = append(extra, t)
		} else {
			own = append(own, t)
		}
	}
	text := fmt.Sprintf(instructions, toolNames(s.opts.ToolPrefix, own))
	if len(extra) > 0 {
		text += fmt.Sprintf(" Also served, tools of the bridge's own that OpenHands does not have: %s.", toolNames(s.opts.ToolPrefix, extra))
	}
	return text
}

// implementation is who the server says it is, at initialize and at
// server/discover.
func (s *Server) implementation() *mcp.Implementation {
	return &mcp.Implementation{Name: "oh-bridge", Title: "OpenHands tools in the editor", Version: s.opts.Version}
}

// tool handles calls of one tool.
func (s *Server) tool(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		agent, err := s.agentFor(req.Session)
		if err != nil {
			return failure(err.Error()), nil
		}
		var progress func(ohtools.Progress)
		if token := req.Params.GetProgressToken(); token != nil {
			progress = func(p ohtools.Progress) {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token,
					Progress:      p.Elapsed.Seconds(),
					Message:       p.Message,
				})
				if err != nil && ctx.Err() == nil {
					s.log.Debug("progress not sent", "error", err)
				}
			}
		}
		obs, err := agent.Call(ctx, name, req.Params.Arguments, progress)
		if err != nil {
			if ctx.Err() != nil {
				// Cancelled: the command was interrupted, and MCP sends no
				// result for a cancelled request.
				return nil, ctx.Err()
			}
			r := failure(err.Error())
			var k interface{ Kind() string }
			if errors.As(err, &k) {
				r.Meta = mcp.Meta{ErrorMetaKey: map[string]any{"kind": k.Kind()}}
			}
			return r, nil
		}
		return result(obs), nil
	}
}

// ErrorMetaKey is the key of a failed call's _meta that says what kind of
// error its text reports: {"kind", and for a disk fault "path", "op",
// "unchanged"}, the kind and data the editor's face gives in error.data.
// Not structuredContent: some clients hand the model structuredContent in
// place of the text, and the agent must read OpenHands' words; _meta is
// for the client alone.
const ErrorMetaKey = "oh-bridge/error"

// result is an observation as MCP content: OpenHands' texts, and images;
// an error's kind goes in _meta.
func result(obs *ohtools.Observation) *mcp.CallToolResult {
	r := &mcp.CallToolResult{IsError: obs.IsError, Content: make([]mcp.Content, 0, len(obs.Content))}
	for _, c := range obs.Content {
		if c.MIMEType != "" {
			r.Content = append(r.Content, &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType})
			continue
		}
		r.Content = append(r.Content, &mcp.TextContent{Text: c.Text})
	}
	if obs.IsError && obs.Error != nil {
		r.Meta = mcp.Meta{ErrorMetaKey: obs.Error.Fields()}
	}
	return r
}

func failure(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// agentFor returns the agent of an MCP session, making it on the session's
// first call; it is closed when the session ends.
func (s *Server) agentFor(ss *mcp.ServerSession) (*session.Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.agents[ss]; a != nil {
		return a, nil
	}
	a, err := s.sess.NewAgent(session.AgentOptions{Name: clientName(ss), NoChangeTimeout: s.opts.NoChangeTimeout, MaxWait: s.opts.MaxWait})
	if err != nil {
		return nil, err
	}
	s.agents[ss] = a
	go func() {
		ss.Wait()
		s.mu.Lock()
		delete(s.agents, ss)
		w := s.watch
		s.mu.Unlock()
		if w != nil {
			w.forget(ss.ID())
		}
		a.Close()
		s.log.Info("an MCP session ended; its terminal is closed", "agent", a.Info().ID)
	}()
	return a, nil
}

// clientName is who the client says it is ("claude-code 2.1"), for the
// agent's terminal and permission prompts.
func clientName(ss *mcp.ServerSession) string {
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
		return strings.TrimSpace(p.ClientInfo.Name + " " + p.ClientInfo.Version)
	}
	return "MCP client"
}

// Sessions counts the MCP sessions connected now.
func (s *Server) Sessions() int { return s.liveSessions() }

func (s *Server) liveSessions() int {
	n := 0
	for range s.mcp.Sessions() {
		n++
	}
	return n
}

// closeSessionID ends the session with this id: its agent's terminal
// first (a running call waits for its command), then the session.
func (s *Server) closeSessionID(id string) {
	for ss := range s.mcp.Sessions() {
		if ss.ID() != id {
			continue
		}
		s.mu.Lock()
		a := s.agents[ss]
		s.mu.Unlock()
		if a != nil {
			a.Close()
		}
		ss.Close()
	}
}

// closeSessions ends every agent's terminal, then every MCP session. In
// that order: closing a session waits for its running calls, and a call
// waits for its command.
func (s *Server) closeSessions() {
	s.mu.Lock()
	agents := make([]*session.Agent, 0, len(s.agents))
	for _, a := range s.agents {
		agents = append(agents, a)
	}
	s.mu.Unlock()
	for _, a := range agents {
		a.Close()
	}
	for ss := range s.mcp.Sessions() {
		ss.Close()
	}
}

// ServeStdio serves one MCP client on t (stdin and stdout for `oh-bridge
// mcp`) until it disconnects or ctx ends.
func (s *Server) ServeStdio(ctx context.Context, t mcp.Transport) error {
	// The SDK waits for running calls before Run returns; a call waits
	// for its command. So when ctx ends (a signal), the agents' terminals
	// close first, which ends their commands and so the calls.
	served := make(chan struct{})
	defer close(served)
	go func() {
		select {
		case <-ctx.Done():
			s.closeSessions()
		case <-served:
		}
	}()
	err := s.mcp.Run(ctx, t)
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return fmt.Errorf("serving MCP: %w", err)
}

// quieter passes on only records at or above min: the SDK logs every
// connection at Info, which is our Debug.
type quieter struct {
	slog.Handler
	min slog.Level
}

func (q quieter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= q.min && q.Handler.Enabled(ctx, l)
}

func (q quieter) WithAttrs(as []slog.Attr) slog.Handler {
	return quieter{q.Handler.WithAttrs(as), q.min}
}

func (q quieter) WithGroup(name string) slog.Handler {
	return quieter{q.Handler.WithGroup(name), q.min}
}
