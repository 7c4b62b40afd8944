package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/localserver"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/session"
)

// Config is what the command line gives the handlers.
type Config struct {
	Version string
	// Roots are workspace roots from the command line (--workspace); the
	// client's workspace folders are added at initialize.
	Roots  []string
	Logger *slog.Logger
	// StartMCP opens the MCP endpoints: mcp/start's, and where an
	// attached conversation's agent reaches its tools; nil answers that
	// this build has no MCP.
	StartMCP facekit.StartMCP
	// StartRelay binds a conversation through a relay, for a server on
	// another machine (connect's relayUrl); nil: this build cannot.
	StartRelay facekit.StartRelay
	// ExtraTools are the tools of the bridge's own its MCP endpoint serves
	// beside OpenHands' (--extra-tools), for the capability's tool list.
	ExtraTools []string
	// ServerConfig is what the bridge's config file says of the
	// agent-server, for openhands/find_server; ConfigError why the file
	// was left out, said there too.
	ServerConfig localserver.Config
	ConfigError  error
	// Trust checks every connection to a server on this machine (the
	// person's sockets, and those they confirmed with
	// openhands/trust_server); nil: the person's and root's only.
	Trust *localserver.Trust
}

// Conn is the connection as the handlers need it: the peer to notify or
// call, and a few facts for bridge/info. *rpc.Server implements it.
type Conn interface {
	rpc.Peer
	Uptime() time.Duration
	InFlight() int
}

// ClientCapabilities are the client features the handlers adapt to.
type ClientCapabilities struct {
	ApplyEdit         bool // workspace.applyEdit: edits to open documents go to the editor
	DocumentChanges   bool // workspace.workspaceEdit.documentChanges: versioned edits
	WorkDoneProgress  bool // window.workDoneProgress: server-created progress tokens
	TerminalStreaming bool // terminal.streaming: terminal/did_output notifications
	RequestPermission bool // permissions.requestPermission: ask before risky actions
}

// Handlers serves one editor connection.
type Handlers struct {
	cfg  Config
	log  *slog.Logger
	conn Conn

	mu    sync.Mutex
	roots []string
	caps  ClientCapabilities

	// The workspace's session, shared with the other faces: the only door
	// to files, buffers, terminals, permissions and undo (session.go).
	sess *session.Session
	// What belongs to this connection alone:
	docs  *openDocuments // the client's open documents, as applyEdit must name them (documents.go)
	terms *termStreams   // terminal output streamed to the client (terminals.go)
	dial  *dialState     // the conversation on an OpenHands agent-server (dial.go)
	mcp   *facekit.MCP   // the MCP endpoint, while one runs (mcp.go)
	// local is the agent-server found or started here (localserver.go).
	local *localserver.Local
}

// New returns handlers for one connection. Call Bind before serving.
func New(cfg Config) *Handlers {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handlers{cfg: cfg, log: cfg.Logger.With("component", "handlers"),
		mcp:   &facekit.MCP{Start: cfg.StartMCP, Relay: cfg.StartRelay, Log: cfg.Logger.With("component", "handlers")},
		local: &localserver.Local{Find: localserver.Options{Config: cfg.ServerConfig, Trust: cfg.Trust}}}
}

// Bind connects the handlers to the connection that serves them.
func (h *Handlers) Bind(conn Conn) { h.conn = conn }

// Shutdown releases everything the connection's session holds (child
// processes, watchers). It is safe to call more than once.
func (h *Handlers) Shutdown(ctx context.Context) {
	h.log.Debug("shutdown")
	h.stopDial(ctx)
	h.stopLocal()
	h.mcp.Stop(ctx)
	h.stopTerminals()
	h.closeSession(ctx)
}

// Roots returns the session's workspace roots.
func (h *Handlers) Roots() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.roots...)
}

// Capabilities returns what the client declared at initialize.
func (h *Handlers) Capabilities() ClientCapabilities {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.caps
}

// fileURIPath turns a file:// URI into a local path.
func fileURIPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("%q is not a file:// URI", uri)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("%q names host %q; only local file:// URIs are supported", uri, u.Host)
	}
	p := u.Path
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' && filepath.VolumeName(p[1:]) != "" {
		p = p[1:] // file:///C:/work is C:\work on Windows
	}
	return filepath.FromSlash(p), nil
}
