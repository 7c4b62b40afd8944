package handlers

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/session"
)

// ProtocolVersion is the integer version of oh-bridge's own protocol,
// bumped on incompatible changes.
const ProtocolVersion = 1

type initializeParams struct {
	ProcessID        *int   `json:"processId"`
	RootURI          string `json:"rootUri"`
	RootPath         string `json:"rootPath"`
	WorkspaceFolders []struct {
		URI  string `json:"uri"`
		Name string `json:"name"`
	} `json:"workspaceFolders"`
	Capabilities struct {
		Workspace struct {
			ApplyEdit     bool `json:"applyEdit"`
			WorkspaceEdit struct {
				DocumentChanges bool `json:"documentChanges"`
			} `json:"workspaceEdit"`
		} `json:"workspace"`
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
		Terminal struct {
			Streaming bool `json:"streaming"`
		} `json:"terminal"`
		Permissions struct {
			RequestPermission bool `json:"requestPermission"`
		} `json:"permissions"`
	} `json:"capabilities"`
	ClientInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
}

type serverInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type initializeResult struct {
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      serverInfo     `json:"serverInfo"`
	ProtocolVersion int            `json:"protocolVersion"`
}

func (h *Handlers) initialize(ctx context.Context, p *initializeParams) (*initializeResult, error) {
	var folders []string
	for i, f := range p.WorkspaceFolders {
		path, err := fileURIPath(f.URI)
		if err != nil {
			return nil, rpc.InvalidParams(fmt.Sprintf("workspaceFolders[%d].uri", i), "a file:// URI ("+err.Error()+")")
		}
		folders = append(folders, path)
	}
	if len(folders) == 0 && p.RootURI != "" {
		path, err := fileURIPath(p.RootURI)
		if err != nil {
			return nil, rpc.InvalidParams("rootUri", "a file:// URI ("+err.Error()+")")
		}
		folders = append(folders, path)
	}
	if len(folders) == 0 && p.RootPath != "" {
		folders = append(folders, p.RootPath)
	}
	c := p.Capabilities
	h.mu.Lock()
	h.caps = ClientCapabilities{
		ApplyEdit:         c.Workspace.ApplyEdit,
		DocumentChanges:   c.Workspace.WorkspaceEdit.DocumentChanges,
		WorkDoneProgress:  c.Window.WorkDoneProgress,
		TerminalStreaming: c.Terminal.Streaming,
		RequestPermission: c.Permissions.RequestPermission,
	}
	h.mu.Unlock()
	sess, err := h.startSession(append(session.Candidates("--workspace", h.cfg.Roots...), session.Candidates("initialize", folders...)...))
	if err != nil {
		return nil, err
	}
	roots := sess.ChosenRoots()
	h.mu.Lock()
	h.roots = roots
	h.mu.Unlock()
	client := "unknown client"
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	h.log.Info("initialized", "client", client, "roots", roots, "capabilities", h.caps)
	return &initializeResult{
		Capabilities:    h.serverCapabilities(sess.Capabilities()),
		ServerInfo:      serverInfo{Name: "oh-bridge", Version: h.cfg.Version},
		ProtocolVersion: ProtocolVersion,
	}, nil
}

// serverCapabilities advertises what this build serves, with the bounds
// of the session it opened. Keys are oh-bridge's own, except where the LSP
// feature itself is meant.
func (h *Handlers) serverCapabilities(sc session.Capabilities) map[string]any {
	caps := map[string]any{
		"positionEncoding": "utf-16",
		"bridge":           map[string]any{"info": true, "cancelRequest": true, "workDoneProgress": true},
	}
	if h.cfg.StartMCP != nil {
		// The tools' own list: OpenHands' and the extra ones asked for
		// (checked by the command line already).
		tools, _ := ohtools.Select(h.cfg.ExtraTools)
		caps["mcp"] = map[string]any{"http": true, "tools": ohtools.Names(tools)}
	}
	for _, area := range []map[string]any{h.fileCapabilities(sc), h.terminalCapabilities(sc), h.openhandsCapabilities()} {
		for k, v := range area {
			caps[k] = v
		}
	}
	return caps
}

type noParams struct{}

func (h *Handlers) initialized(ctx context.Context, _ *noParams) (any, error) { return nil, nil }

type infoResult struct {
	Version  string   `json:"version"`
	Roots    []string `json:"roots"`
	PID      int      `json:"pid"`
	UptimeMs int64    `json:"uptimeMs"`
	InFlight int      `json:"inFlight"`
}

func (h *Handlers) info(ctx context.Context, _ *noParams) (*infoResult, error) {
	return &infoResult{
		Version:  h.cfg.Version,
		Roots:    h.Roots(),
		PID:      os.Getpid(),
		UptimeMs: h.conn.Uptime().Milliseconds(),
		InFlight: h.conn.InFlight(),
	}, nil
}

type waitParams struct {
	Ms int `json:"ms"`
}

type waitResult struct {
	WaitedMs int64 `json:"waitedMs"`
}

// wait is a diagnostic: it answers after ms milliseconds, or -32800 when
// cancelled first, so a client can check its cancellation and timing
// plumbing against a real request.
func (h *Handlers) wait(ctx context.Context, p *waitParams) (*waitResult, error) {
	if p.Ms < 0 || p.Ms > 600_000 {
		return nil, rpc.InvalidParams("ms", "an integer between 0 and 600000")
	}
	start := time.Now()
	t := time.NewTimer(time.Duration(p.Ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return &waitResult{WaitedMs: time.Since(start).Milliseconds()}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
