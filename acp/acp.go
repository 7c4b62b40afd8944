// Package acp is the bridge's face toward editors that host agents over
// the Agent Client Protocol (ACP, protocol version 1): Zed, JetBrains
// IDEs, Neovim (CodeCompanion, avante.nvim) and Emacs (agent-shell).
//
// `oh-bridge acp` is an ACP agent on stdio. Each ACP session is a
// workspace session over the client's cwd and a conversation on an
// OpenHands agent-server, whose agent works with the bridge's tools:
// commands run in the bridge's shell-integrated terminals and stream into
// the client's tool calls, and file reads and writes go through the
// client when it offers fs/read_text_file and fs/write_text_file, so they
// see its unsaved buffers and land in its undo and review.
package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"

	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/localserver"
	"github.com/oh-bridge/oh-bridge/rpc"
)

// ProtocolVersion is the ACP version served.
const ProtocolVersion = 1

// AgentServer is where the agent-server is and how to start conversations on
// it. An empty URL means none is configured: prompts then answer how to
// configure one.
type AgentServer struct {
	URL           string
	SessionAPIKey string
	// LLM is a new agent's "llm" object ({"model", "api_key", ...}).
	LLM json.RawMessage
	// ConfirmationPolicy is a new conversation's policy kind ("" for the
	// server's default).
	ConfirmationPolicy string
}

// Config configures the face.
type Config struct {
	Version string
	Logger  *slog.Logger
	Server  AgentServer
	// StartMCP opens a session's MCP endpoint, where its conversation's
	// agent reaches its tools; nil: this build serves no MCP.
	StartMCP facekit.StartMCP
	// Relay, when set, is where the server's agents reach the sessions'
	// tools instead (the server runs on another machine); StartRelay
	// binds a conversation there.
	Relay      facekit.Relay
	StartRelay facekit.StartRelay
	// HowToConfigure is the plain-words answer to a prompt when no server
	// is configured.
	HowToConfigure string
	// Local finds or starts an agent-server when Server names none; nil:
	// only the configured one is used.
	Local *Local
	// Trust checks every connection to a server on this machine (the
	// person's sockets, and those they confirmed); nil: the person's and
	// root's only.
	Trust *localserver.Trust
}

// Agent is the ACP agent of one connection: `oh-bridge acp` serving an editor.
type Agent struct {
	cfg  Config
	log  *slog.Logger
	peer rpc.Peer

	mu       sync.Mutex
	caps     clientCapabilities
	sessions map[string]*acpSession

	local localState   // the agent-server found or started (localserver.go)
	mcp   *facekit.MCP // the sessions' MCP endpoints, each its own
}

// New returns the face; Bind it to its connection before serving.
func New(cfg Config) *Agent {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := &Agent{cfg: cfg, log: cfg.Logger.With("component", "acp"), sessions: map[string]*acpSession{},
		mcp: &facekit.MCP{Start: cfg.StartMCP, Relay: cfg.StartRelay, Log: cfg.Logger.With("component", "acp")}}
	if cfg.Local != nil {
		a.local.server = &localserver.Local{Find: cfg.Local.Find}
	}
	return a
}

// Bind sets the connection to the client.
func (a *Agent) Bind(p rpc.Peer) { a.peer = p }

// Methods is the ACP method table.
func (a *Agent) Methods() map[string]rpc.Method {
	return map[string]rpc.Method{
		"initialize":     {Class: rpc.Inline, Handle: rpc.Typed(a.initialize)},
		"authenticate":   {Class: rpc.Inline, Handle: rpc.Typed(a.authenticate)},
		"session/new":    {Class: rpc.Concurrent, Handle: rpc.Typed(a.newSession)},
		"session/load":   {Class: rpc.Concurrent, Handle: rpc.Typed(a.loadSession)},
		"session/resume": {Class: rpc.Concurrent, Handle: rpc.Typed(a.resumeSession)},
		"session/list":   {Class: rpc.Concurrent, Handle: rpc.Typed(a.listSessions)},
		"session/close":  {Class: rpc.Concurrent, Handle: rpc.Typed(a.closeSession)},
		"session/prompt": {Class: rpc.Concurrent, Handle: rpc.Typed(a.prompt)},
		"session/cancel": {Class: rpc.Inline, Handle: rpc.Typed(a.cancel)},
	}
}

type clientCapabilities struct {
	FS struct {
		ReadTextFile  bool `json:"readTextFile"`
		WriteTextFile bool `json:"writeTextFile"`
	} `json:"fs"`
	Terminal bool `json:"terminal"`
	// Meta is read leniently: what other extensions put there must not
	// make initialize fail.
	Meta json.RawMessage `json:"_meta"`
}

// terminalOutput says the client shows a command's output in a display
// terminal of its own: _meta.terminal_output is true, the convention of
// claude-agent-acp and codex-acp that the ACP registry's validator sends.
func (c clientCapabilities) terminalOutput() bool {
	var meta map[string]json.RawMessage
	if json.Unmarshal(c.Meta, &meta) != nil {
		return false
	}
	var on bool
	return json.Unmarshal(meta["terminal_output"], &on) == nil && on
}

type initializeParams struct {
	ProtocolVersion    int                `json:"protocolVersion"`
	ClientCapabilities clientCapabilities `json:"clientCapabilities"`
	ClientInfo         *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
}

func (a *Agent) initialize(ctx context.Context, p *initializeParams) (any, error) {
	a.mu.Lock()
	a.caps = p.ClientCapabilities
	a.mu.Unlock()
	if p.ClientInfo != nil {
		a.log.Info("ACP client", "name", p.ClientInfo.Name, "version", p.ClientInfo.Version, "protocol", p.ProtocolVersion,
			"fsRead", p.ClientCapabilities.FS.ReadTextFile, "fsWrite", p.ClientCapabilities.FS.WriteTextFile,
			"terminalOutput", p.ClientCapabilities.terminalOutput())
	}
	// An agent answers with the latest version it supports; the client
	// decides whether it can go on.
	return initializeResult{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: agentCapabilities{
			LoadSession:        true,
			PromptCapabilities: promptCapabilities{EmbeddedContext: true},
			MCPCapabilities:    mcpCapabilities{HTTP: true, SSE: true},
			// ACP v1 (schema 1.21): {} says the method is served.
			SessionCapabilities: sessionCapabilities{List: &served{}, Resume: &served{}, Close: &served{}},
		},
		AuthMethods: []authMethodAgent{authMethod},
		AgentInfo:   implementation{Name: "oh-bridge", Title: "OpenHands (oh-bridge)", Version: a.cfg.Version},
	}, nil
}

// authMethodID is the one authentication method initialize offers.
const authMethodID = "agent-server"

// authMethod is that method, of ACP's default type, "agent" (no "type"
// field): the agent handles it itself, through authenticate. The ACP
// registry lists only agents that offer a method of type "agent" or
// "terminal". The bridge signs in to nothing: the agent-server and its
// session API key come from its configuration, or it finds or starts a
// server on this machine, so the method only says where the key comes
// from, and authenticate has nothing to do. The bridge never answers
// auth_required, so a client has no reason to call it.
var authMethod = authMethodAgent{
	ID:   authMethodID,
	Name: "OpenHands agent-server",
	Description: "oh-bridge uses the agent-server and session API key of its configuration (OH_BRIDGE_SERVER_URL and " +
		"OH_BRIDGE_SESSION_API_KEY, or serverUrl and sessionApiKey in ~/.config/oh-bridge/config.json), or one it finds " +
		"or starts on this machine; there is nothing to sign in to.",
}

type authenticateParams struct {
	MethodID string `json:"methodId"`
}

// authenticate accepts the one method, which needs nothing done: the
// agent-server's key comes from the bridge's configuration.
func (a *Agent) authenticate(ctx context.Context, p *authenticateParams) (any, error) {
	if p.MethodID == authMethodID {
		return empty{}, nil
	}
	return nil, rpc.NewError(rpc.CodeInvalidParams, fmt.Sprintf("oh-bridge offers one authentication method, %q, not %q (initialize lists it); "+
		"the agent-server's session API key is configured with OH_BRIDGE_SESSION_API_KEY or sessionApiKey in the config file", authMethodID, p.MethodID), nil)
}

func (a *Agent) capabilities() clientCapabilities {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.caps
}

// Shutdown ends every session: conversations stop streaming (they go on
// on the server), terminals and MCP endpoints close.
func (a *Agent) Shutdown(ctx context.Context) {
	a.mu.Lock()
	all := make([]*acpSession, 0, len(a.sessions))
	for _, s := range a.sessions {
		all = append(all, s)
	}
	a.sessions = map[string]*acpSession{}
	a.mu.Unlock()
	defer a.stopLocal()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.close(ctx)
		}()
	}
	wg.Wait()
}
