package handlers

import (
	"context"
	"encoding/json"

	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/session"
)

// fileCapabilities are merged into initialize's result capabilities.
func (h *Handlers) fileCapabilities(sc session.Capabilities) map[string]any {
	return map[string]any{
		"fs": map[string]any{
			"read": true, "write": true, "list": true, "stat": true,
			"mkdir": true, "delete": true, "move": true, "watch": true,
			"maxFileSize": sc.MaxFileSize,
		},
		"edit": map[string]any{
			"view": true, "strReplace": true, "insert": true, "create": true, "undo": true,
			"maxUndoPerFile": sc.MaxUndoPerFile,
		},
		// LSP's TextDocumentSyncOptions: open/close and incremental changes
		// (2); full-text changes (a change without a range) are accepted too.
		"textDocumentSync": map[string]any{"openClose": true, "change": 2},
	}
}

// pathKeys returns a per-path Keys function: the named string params,
// resolved through the roots. A param that does not resolve gives no keys;
// the handler then reports the error.
func (h *Handlers) pathKeys(fields ...string) func(json.RawMessage) []string {
	return func(raw json.RawMessage) []string {
		s := h.workspaceSession()
		if s == nil {
			return nil
		}
		var params map[string]json.RawMessage
		if json.Unmarshal(raw, &params) != nil {
			return nil
		}
		keys := make([]string, 0, len(fields))
		for _, f := range fields {
			var p string
			if json.Unmarshal(params[f], &p) != nil || p == "" {
				return nil
			}
			resolved, err := s.Resolve(p)
			if err != nil {
				return nil
			}
			keys = append(keys, resolved)
		}
		return keys
	}
}

// requirePath reports an absent or empty path param as -32602.
func requirePath(field, value string) error {
	if value == "" {
		return rpc.InvalidParams(field, "a non-empty path (absolute, or relative to the first workspace root)")
	}
	return nil
}

type watchStatusParams struct {
	// Wait makes the call answer only once the initial walk is over.
	Wait bool `json:"wait"`
}

type watchStatusResult struct {
	State   string `json:"state"` // starting, watching, failed, stopped
	SetupMs *int64 `json:"setupMs,omitempty"`
	Error   string `json:"error,omitempty"`
}

// watchStatus tells whether file watching is up; with wait it answers once
// the watcher has walked the tree (or failed).
func (h *Handlers) watchStatus(ctx context.Context, p *watchStatusParams) (*watchStatusResult, error) {
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	st, err := s.WatchStatus(ctx, p.Wait)
	if err != nil {
		return nil, err
	}
	res := &watchStatusResult{State: st.State}
	if st.State != "starting" {
		ms := st.Setup.Milliseconds()
		res.SetupMs = &ms
	}
	if st.Err != nil {
		res.Error = st.Err.Error()
	}
	return res, nil
}

type fileChange struct {
	Path   string `json:"path"`
	Type   string `json:"type"`   // created, changed, deleted
	Source string `json:"source"` // agent, external
}

type didChangeFilesParams struct {
	Changes []fileChange `json:"changes"`
}
