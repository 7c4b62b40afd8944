package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/conversation"
	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/localserver"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/updates"
)

// acpSession is one ACP session: a workspace session and its conversation
// on the agent-server (nil when none is configured), with the MCP endpoint
// the conversation's agent reaches the session's tools through.
type acpSession struct {
	a    *Agent
	id   string
	sess *session.Session
	conv *conversation.Link
	// servers are the client's own MCP servers, for the conversation's agent.
	servers map[string]any

	mu sync.Mutex
	// catchingUp: session/load or session/resume reads the conversation's
	// history; hideHistory: it is session/resume, which shows none of it.
	catchingUp, hideHistory bool
	turn                    *turn // the prompt running, if any
	// lastError is the last ConversationErrorEvent's code, for the stop
	// reason.
	lastError string
	// continueFrom is a loaded conversation whose tools cannot be served
	// again (exposed says why): the next prompt goes on in a new
	// conversation that starts from its history.
	continueFrom string
	exposed      *conversation.EndpointExposedError
	// via, until the next prompt tells the person, says where the
	// agent's calls come from when not from this machine (a relay).
	via string
	// viaDown is why the way the agent's calls come is down, as last told.
	viaDown string

	// sending is held while an update is checked and written: quiet (a
	// cancelled turn answered, so its late updates are dropped) is set
	// under it, so no update that passed the check is written after the
	// answer.
	sending sync.Mutex
	quiet   bool
}

// mcpServer is one of the client's MCP servers (ACP's McpServer: stdio
// when it has a command, else http or sse).
type mcpServer struct {
	Type    string      `json:"type"`
	Name    string      `json:"name"`
	Command string      `json:"command"`
	Args    []string    `json:"args"`
	Env     []nameValue `json:"env"`
	URL     string      `json:"url"`
	Headers []nameValue `json:"headers"`
}

type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type newSessionParams struct {
	Cwd                   string      `json:"cwd"`
	MCPServers            []mcpServer `json:"mcpServers"`
	AdditionalDirectories []string    `json:"additionalDirectories"`
}

// loadSessionParams are session/load's and session/resume's.
type loadSessionParams struct {
	SessionID  string      `json:"sessionId"`
	Cwd        string      `json:"cwd"`
	MCPServers []mcpServer `json:"mcpServers"`
}

func (a *Agent) newSession(ctx context.Context, p *newSessionParams) (any, error) {
	s, err := a.open(ctx, p.Cwd, p.AdditionalDirectories, p.MCPServers, "", false)
	if err != nil {
		return nil, err
	}
	return newSessionResult{SessionID: s.id}, nil
}

// loadSession attaches to a conversation and replays it as updates before
// it answers, as ACP asks.
func (a *Agent) loadSession(ctx context.Context, p *loadSessionParams) (any, error) {
	return a.attach(ctx, "session/load", p, false)
}

// resumeSession attaches to a conversation without showing its history:
// the client has it (ACP's session/resume). The history is still read, so
// the session knows the calls the agent made, and answered once it is.
func (a *Agent) resumeSession(ctx context.Context, p *loadSessionParams) (any, error) {
	return a.attach(ctx, "session/resume", p, true)
}

func (a *Agent) attach(ctx context.Context, method string, p *loadSessionParams, hideHistory bool) (any, error) {
	if p.SessionID == "" {
		return nil, rpc.InvalidParams("sessionId", "the id of a session this agent created (an OpenHands conversation id; session/list lists them)")
	}
	if _, ok := a.agentServer(ctx, true); !ok {
		found := ""
		if a.cfg.Local != nil {
			found = ", nor found on this machine"
		}
		return nil, rpc.NewError(rpc.CodeInvalidParams, "cannot "+strings.TrimPrefix(method, "session/")+" session "+p.SessionID+
			": no OpenHands agent-server is configured"+found+". "+a.cfg.HowToConfigure, nil)
	}
	a.mu.Lock()
	old := a.sessions[p.SessionID]
	a.mu.Unlock()
	if old != nil {
		return nil, rpc.NewError(rpc.CodeInvalidParams, "session "+p.SessionID+" is already open on this connection; "+
			"send its prompts, or session/close it first", nil)
	}
	s, err := a.open(ctx, p.Cwd, nil, p.MCPServers, p.SessionID, hideHistory)
	if err != nil {
		return nil, err
	}
	if err := s.conv.CaughtUp(ctx); err != nil {
		a.drop(s)
		return nil, fail(fmt.Errorf("reading conversation %s for %s: %w", p.SessionID, method, err))
	}
	s.mu.Lock()
	s.catchingUp = false
	exposed := s.exposed
	s.mu.Unlock()
	if exposed != nil {
		s.update(&updates.Chunk{SessionUpdate: "agent_message_chunk", Content: updates.ContentBlock{Type: "text",
			Text: "This conversation's tools are not served again: " + exposed.Error() + ".\n\nYour next prompt goes on in a new conversation that starts from this one's history."}})
	}
	return empty{}, nil
}

type listSessionsParams struct {
	Cwd    string `json:"cwd"`
	Cursor string `json:"cursor"`
}

// listSessions lists the conversations on the agent-server whose agent
// works in cwd (every one with a directory when cwd is not given), the
// latest active first, as ACP sessions: each can be loaded or resumed.
func (a *Agent) listSessions(ctx context.Context, p *listSessionsParams) (any, error) {
	if p.Cwd != "" && !filepath.IsAbs(p.Cwd) {
		return nil, rpc.InvalidParams("cwd", "the absolute path of the directory whose sessions to list (ACP paths are absolute)")
	}
	srv, ok := a.agentServer(ctx, false)
	if !ok {
		// Nothing to list: no server holds this agent's sessions yet. A
		// client lists at startup, when the bridge probes no port; the
		// first session looks for a server, or offers to start one.
		return listSessionsResult{Sessions: []sessionInfo{}}, nil
	}
	page, err := conversation.List(ctx, conversation.ListOptions{
		ServerURL:     srv.URL,
		SessionAPIKey: srv.SessionAPIKey,
		HTTPClient:    a.httpClient(),
		WorkingDir:    p.Cwd,
		Cursor:        p.Cursor,
	})
	if err != nil {
		return nil, fail(fmt.Errorf("listing the sessions: %w", err))
	}
	out := listSessionsResult{Sessions: make([]sessionInfo, 0, len(page.Conversations)), NextCursor: page.Next}
	for _, c := range page.Conversations {
		out.Sessions = append(out.Sessions, sessionInfo{SessionID: c.ID, Cwd: c.WorkingDir, Title: c.Title, UpdatedAt: c.UpdatedAt})
	}
	return out, nil
}

type closeSessionParams struct {
	SessionID string `json:"sessionId"`
}

// closeSession ends an ACP session on this connection: a running turn is
// cancelled as session/cancel would, the agent interrupted before the link
// closes, then the endpoint and terminals close. The conversation stays
// on the agent-server, to be loaded or resumed later.
func (a *Agent) closeSession(ctx context.Context, p *closeSessionParams) (any, error) {
	a.mu.Lock()
	s := a.sessions[p.SessionID]
	delete(a.sessions, p.SessionID)
	a.mu.Unlock()
	if s == nil {
		return nil, rpc.NewError(rpc.CodeInvalidParams, fmt.Sprintf("session %q is not open on this connection; nothing to close", p.SessionID), nil)
	}
	if t, first := s.stopTurn(); t != nil {
		// The interrupt must reach the agent-server before the link
		// closes; the prompt answers cancelled now.
		if first {
			ictx, cancel := context.WithTimeout(ctx, cancelGrace)
			s.interrupt(ictx, t)
			cancel()
		}
		t.finish("cancelled", nil)
	}
	s.close(ctx)
	return empty{}, nil
}

// open makes a session over cwd; with a server configured it starts a
// conversation, or attaches to conversationID, showing its history unless
// hideHistory.
func (a *Agent) open(ctx context.Context, cwd string, extra []string, servers []mcpServer, conversationID string, hideHistory bool) (*acpSession, error) {
	if !filepath.IsAbs(cwd) {
		return nil, rpc.InvalidParams("cwd", "the absolute path of the directory to work in (ACP paths are absolute)")
	}
	s := &acpSession{a: a, catchingUp: conversationID != "", hideHistory: hideHistory}
	caps := a.capabilities()
	opts := session.Options{
		Roots: append(session.Candidates("session/new cwd", cwd),
			session.Candidates("session/new additionalDirectories", extra...)...),
		Logger:        a.cfg.Logger,
		AskPermission: s.askPermission,
	}
	if caps.FS.ReadTextFile {
		opts.ReadText = s.readFile
	}
	if caps.FS.WriteTextFile {
		opts.WriteText = s.writeFile
	}
	sess, err := session.New(opts)
	if err != nil {
		var data any
		var k interface{ Kind() string }
		if errors.As(err, &k) && k.Kind() == "invalid_root" {
			data = map[string]any{"kind": "invalid_root"}
		}
		return nil, rpc.NewError(rpc.CodeInvalidParams, err.Error(), data)
	}
	s.sess = sess
	s.servers = mcpConfig(servers)
	srv, ok := a.agentServer(ctx, true)
	if !ok {
		// Its first prompt offers to start a server (localserver.go).
		s.id = "unconfigured-" + randomID()
		a.add(s)
		return s, nil
	}
	conv, err := a.follow(ctx, s, srv, conversationID, followOptions{})
	var exposed *conversation.EndpointExposedError
	if errors.As(err, &exposed) {
		// Its tools cannot be served again: its history is shown, and the
		// next prompt continues it in a new conversation (prompt.go).
		a.log.Warn("the conversation's tools are not served again", "conversation", conversationID, "why", exposed.Error())
		conv, err = a.follow(ctx, s, srv, conversationID, followOptions{historyOnly: true})
		s.mu.Lock()
		s.continueFrom, s.exposed = conversationID, exposed
		s.mu.Unlock()
	}
	if err != nil {
		s.close(context.Background())
		return nil, fail(err)
	}
	s.mu.Lock()
	s.conv, s.id = conv, conv.ConversationID()
	s.mu.Unlock()
	a.add(s)
	return s, nil
}

// follow opens the session's conversation on the server: conversationID,
// or a new one.
func (a *Agent) follow(ctx context.Context, s *acpSession, srv AgentServer, conversationID string, o followOptions) (*conversation.Link, error) {
	return conversation.Open(ctx, conversation.Options{
		Session:            s.sess,
		ServerURL:          srv.URL,
		SessionAPIKey:      srv.SessionAPIKey,
		HTTPClient:         a.httpClient(),
		ConversationID:     conversationID,
		HistoryOnly:        o.historyOnly,
		ContinueFrom:       o.continueFrom,
		Task:               o.task,
		LLM:                srv.LLM,
		FallbackLLM:        localserver.FallbackLLM(a.log),
		ConfirmationPolicy: srv.ConfirmationPolicy,
		WorkingDir:         s.sess.Roots()[0],
		MCP:                a.endpoint(s),
		ExtraMCP:           s.servers,
		OnUpdate:           s.update,
		TerminalOutput:     a.capabilities().terminalOutput(),
		OnEvent:            s.event,
		OnStatus:           s.status,
		Logger:             a.cfg.Logger,
	})
}

// endpoint is where the session's conversation's agent reaches its
// tools: an endpoint of its own on this machine, or, with a relay set,
// the relay on the agent-server's machine (which is then told the
// person at the next prompt).
func (a *Agent) endpoint(s *acpSession) func(context.Context, conversation.Listen) (conversation.Endpoint, error) {
	local := a.mcp.Private(s.sess)
	if !a.cfg.Relay.On() {
		return local
	}
	relayed := a.mcp.Relayed(s.sess, a.cfg.Relay, local)
	return func(ctx context.Context, at conversation.Listen) (conversation.Endpoint, error) {
		ep, err := relayed(ctx, at)
		if err == nil && ep.Via != "" {
			s.mu.Lock()
			s.via = ep.Via
			s.mu.Unlock()
		}
		return ep, err
	}
}

// followOptions: conversation.Options' HistoryOnly, and a new
// conversation's ContinueFrom and Task.
type followOptions struct {
	historyOnly  bool
	continueFrom string
	task         string
}

// httpClient is the client for agent-servers: every connection to one on
// this machine is checked to be the person's, or one they confirmed.
func (a *Agent) httpClient() *http.Client { return a.cfg.Trust.HTTPClient(30 * time.Second) }

// link is the session's conversation, nil before it has one.
func (s *acpSession) link() *conversation.Link {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conv
}

func (a *Agent) add(s *acpSession) {
	a.mu.Lock()
	a.sessions[s.id] = s
	a.mu.Unlock()
}

func (a *Agent) drop(s *acpSession) {
	a.mu.Lock()
	delete(a.sessions, s.id)
	a.mu.Unlock()
	s.close(context.Background())
}

func (a *Agent) session(id string) (*acpSession, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	if s == nil {
		return nil, rpc.NewError(rpc.CodeInvalidParams, fmt.Sprintf("session %q is not open on this connection; create one with session/new or load it with session/load", id), nil)
	}
	return s, nil
}

// fail turns a failure into an answer whose message says it in plain
// words (the agent-server's errors already do).
func fail(err error) error {
	var re *rpc.Error
	if errors.As(err, &re) {
		return re
	}
	return rpc.NewError(rpc.CodeInternalError, err.Error(), nil)
}

func randomID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// mcpConfig turns the client's MCP servers into the agent's mcp_config
// entries: the agent-server starts or dials them for the agent.
func mcpConfig(servers []mcpServer) map[string]any {
	if len(servers) == 0 {
		return nil
	}
	out := map[string]any{}
	for _, m := range servers {
		pairs := func(list []nameValue) map[string]string {
			kv := map[string]string{}
			for _, p := range list {
				kv[p.Name] = p.Value
			}
			return kv
		}
		if m.Command != "" {
			args := m.Args
			if args == nil {
				args = []string{}
			}
			out[m.Name] = map[string]any{"command": m.Command, "args": args, "env": pairs(m.Env)}
			continue
		}
		transport := "http"
		if m.Type == "sse" {
			transport = "sse"
		}
		out[m.Name] = map[string]any{"url": m.URL, "transport": transport, "headers": pairs(m.Headers)}
	}
	return out
}

// close ends the session's streaming, endpoint and terminals.
func (s *acpSession) close(ctx context.Context) {
	if s.conv != nil {
		s.conv.Close(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	s.sess.Close(ctx)
}

// update sends one session/update. During a live turn the user's own
// messages are not echoed: the client shows what it sent.
func (s *acpSession) update(u updates.Update) {
	s.mu.Lock()
	id, history, hidden := s.id, s.catchingUp, s.hideHistory
	s.mu.Unlock()
	if history && hidden {
		return
	}
	if c, ok := u.(*updates.Chunk); ok && c.SessionUpdate == "user_message_chunk" && !history {
		return
	}
	s.sending.Lock()
	defer s.sending.Unlock()
	if s.quiet && !history {
		return
	}
	_ = s.a.peer.Notify(context.Background(), "session/update", sessionNotification{SessionID: id, Update: u})
}

// setQuiet drops the session's live updates (a cancelled turn answered),
// or lets them through again (a new turn). It returns once no update is
// being written, so the prompt's answer follows every update let through.
func (s *acpSession) setQuiet(quiet bool) {
	s.sending.Lock()
	s.quiet = quiet
	s.sending.Unlock()
}

func (s *acpSession) sessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// readFile reads through the client, unsaved buffers included.
func (s *acpSession) readFile(ctx context.Context, path string) (string, error) {
	var res struct {
		Content string `json:"content"`
	}
	err := s.a.peer.Call(ctx, "fs/read_text_file", readTextFileRequest{SessionID: s.sessionID(), Path: path}, &res)
	return res.Content, err
}

// writeFile writes through the client, into its buffer and review.
func (s *acpSession) writeFile(ctx context.Context, path, content string) error {
	return s.a.peer.Call(ctx, "fs/write_text_file", writeTextFileRequest{SessionID: s.sessionID(), Path: path, Content: content}, nil)
}

// askPermission puts an action to the person (session.Options.AskPermission).
func (s *acpSession) askPermission(ctx context.Context, req session.PermissionRequest) (session.PermissionOutcome, error) {
	return s.asker().Permission(ctx, req)
}

// asker puts actions to the person through the client (askClient): a
// question names the tool call the conversation already shows, when the
// agent-server has reported it (without a server there is none to wait
// for), with the title its card has, so the question and the card say the
// action the same way ("Run `make test`"). A question the client
// withdraws cancelled the turn (agent-shell answers it before its
// session/cancel): the turn ends there, not with a "no" the agent would
// work around.
func (s *acpSession) asker() *facekit.Asker {
	return &facekit.Asker{Ask: s.askClient, Link: s.link, CardTitles: true, Cancelled: s.cancelTurn}
}

// askClient puts a question to the client (session/request_permission),
// saying the file a file action really touches when the path the agent
// named leads to another.
func (s *acpSession) askClient(ctx context.Context, req session.PermissionRequest, toolCallID string) (session.PermissionOutcome, error) {
	if named, real := s.realTarget(req); real != "" {
		req.Title = titleWithTarget(req.Title, req.Kind, named, real)
	}
	return updates.AskPermission(ctx, s.a.peer.Call, req, toolCallID, s.sessionID(), "")
}
