package editor

import (
	"context"
	"fmt"
	"sync"

	"github.com/oh-bridge/oh-bridge/workspace"
)

// undoState is what editors made by With share: the per-path locks and
// the undo history, so an edit through one can be undone through another.
type undoState struct {
	locks      workspace.PathLocks
	maxHistory int

	mu      sync.Mutex
	history map[string]*fileHistory // by resolved path
}

// fileHistory is the undo stack of one file.
type fileHistory struct {
	entries []string // earlier texts, oldest first, bytes as they were on disk
	// written is the version the editor last wrote. A file whose version
	// differs was changed by someone else, and undoing would destroy that.
	written string
}

// historyFor returns path's history, discarding it when the file's current
// version is not the one the editor last wrote: older entries predate an
// outside change, and restoring them would silently revert it.
func (e *Editor) historyFor(resolved, currentVersion string) *fileHistory {
	e.mu.Lock()
	defer e.mu.Unlock()
	h := e.history[resolved]
	if h == nil {
		h = &fileHistory{}
		e.history[resolved] = h
	}
	if h.written != currentVersion {
		h.entries = nil
	}
	return h
}

// record pushes the text an edit replaced and notes what was written.
func (e *Editor) record(h *fileHistory, previous, writtenVersion string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	h.entries = append(h.entries, previous)
	if over := len(h.entries) - e.maxHistory; over > 0 {
		h.entries = append([]string(nil), h.entries[over:]...)
	}
	h.written = writtenVersion
}

func (e *Editor) undo(ctx context.Context, t target) (*Result, error) {
	raw, version, err := e.readText(ctx, t)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	h := e.history[t.resolved]
	if h == nil || len(h.entries) == 0 {
		e.mu.Unlock()
		return nil, &ToolError{Kind: KindNoEditHistory, Path: t.display, Message: fmt.Sprintf("No edit history found for %s.", t.display)}
	}
	if h.written != version {
		delete(e.history, t.resolved)
		e.mu.Unlock()
		return nil, &ToolError{Kind: KindChangedOutsideEditor, Path: t.display, Message: fmt.Sprintf(
			"Cannot undo the last edit to %s: the file was changed outside the editor after that edit, and undoing it would overwrite that change. The edit history of this file has been discarded; view the file and edit it again instead.", t.display)}
	}
	previous := h.entries[len(h.entries)-1]
	e.mu.Unlock()

	newVersion, err := e.write(ctx, t, previous, version)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	h.entries = h.entries[:len(h.entries)-1]
	h.written = newVersion
	e.mu.Unlock()

	shown := universalNewlines(previous)
	out := "Last edit to " + t.display + " undone successfully. " + e.makeOutput(shown, t.display, 1)
	return &Result{Path: t.display, Output: out, Diff: UnifiedDiff(t.display, universalNewlines(raw), shown), Version: newVersion, Text: previous}, nil
}
