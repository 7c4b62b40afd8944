package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

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
	// StartMCP opens the MCP endpoint for mcp/start; nil answers that
	// this build has no MCP.
	StartMCP MCPStarter
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

// Handlers holds one session's state.
type Handlers struct {
	cfg  Config
	log  *slog.Logger
	conn Conn

	mu    sync.Mutex
	roots []string
	caps  ClientCapabilities

	sess  *session.Session // the workspace's state, shared with the other faces (session.go)
	files *filesState      // the session's workspace and editor, open documents (files.go)
	terms *termState       // the session's terminal pool, streaming state (terminals.go)
	oh    *ohState         // the session's OpenHands action runtime (openhands.go)
	dial  *dialState       // the connection to an OpenHands server (dial.go)
	mcp   mcpState         // the MCP endpoint, while one runs (mcp.go)
}

// New returns handlers for one session. Call Bind before serving.
func New(cfg Config) *Handlers {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handlers{cfg: cfg, log: cfg.Logger.With("component", "handlers")}
}

// Bind connects the handlers to the connection that serves them.
func (h *Handlers) Bind(conn Conn) { h.conn = conn }

// Shutdown releases everything the session holds (child processes,
// watchers). It is safe to call more than once.
func (h *Handlers) Shutdown(ctx context.Context) {
	h.log.Debug("shutdown")
	h.stopDial(ctx)
	h.stopMCP(ctx)
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

// rootsFrom combines command-line roots with the client's folders; with
// neither, the current directory is the root.
func rootsFrom(flagRoots []string, folders []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(dir, origin string) error {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return &invalidRootError{dir: abs, origin: origin, reason: "does not exist"}
		}
		if !fi.IsDir() {
			return &invalidRootError{dir: abs, origin: origin, reason: "is not a directory"}
		}
		if !seen[abs] {
			seen[abs] = true
			out = append(out, abs)
		}
		return nil
	}
	for _, r := range flagRoots {
		if err := add(r, "--workspace"); err != nil {
			return nil, err
		}
	}
	for _, f := range folders {
		if err := add(f, "initialize"); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("no workspace root given and the current directory is unreadable: %w", err)
		}
		out = append(out, wd)
	}
	return out, nil
}

type invalidRootError struct{ dir, origin, reason string }

func (e *invalidRootError) Error() string {
	return fmt.Sprintf("workspace root %s (from %s) %s; open an existing folder", e.dir, e.origin, e.reason)
}
func (e *invalidRootError) Kind() string { return "invalid_root" }

// ValidateRoots checks command-line roots before serving, so a typo fails
// at start-up with a clear message.
func ValidateRoots(roots []string) error {
	_, err := ResolveRoots(roots)
	return err
}

// ResolveRoots makes command-line roots absolute and checks them; with
// none, the current directory is the root.
func ResolveRoots(roots []string) ([]string, error) { return rootsFrom(roots, nil) }

// fileURIPath turns a file:// URI into a local path.
func fileURIPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("%q is not a file:// URI", uri)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("%q names host %q; only local file:// URIs are supported", uri, u.Host)
	}
	return filepath.FromSlash(u.Path), nil
}
