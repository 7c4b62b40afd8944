package workspace

import (
	"context"
	"sync"
)

// BufferEditor applies an edit to a document the editor has open, so the
// change lands in the editor's buffer (and its undo stack) instead of under
// it on disk. Handlers implement it with LSP workspace/applyEdit.
type BufferEditor interface {
	// ApplyFullText replaces the document's text oldText with newText.
	// applied is false when the editor declined (e.g. the buffer changed).
	ApplyFullText(ctx context.Context, path, oldText, newText string) (applied bool, err error)
}

// Overlay holds the text of documents open in the editor, which may differ
// from the disk while unsaved. Reads, Stat and version tokens see the overlay
// text. Paths are resolved like every other path, so a document open under
// a symlinked name is the same document.
type Overlay struct {
	roots *Roots
	mu    sync.RWMutex
	docs  map[string]*document
}

type document struct {
	text    string
	version int
}

func newOverlay(roots *Roots) *Overlay {
	return &Overlay{roots: roots, docs: make(map[string]*document)}
}

// DidOpen records that the editor opened path with text at version.
func (o *Overlay) DidOpen(path, text string, version int) error {
	p, err := o.roots.Resolve(path)
	if err != nil {
		return err
	}
	o.mu.Lock()
	o.docs[p] = &document{text: text, version: version}
	o.mu.Unlock()
	return nil
}

// DidChange records the full new text of path. A change for a document not
// open is treated as an open, so a missed DidOpen does not lose the buffer;
// a change older than the one held is ignored, since notifications can race
// with edits the bridge itself applied.
func (o *Overlay) DidChange(path, text string, version int) error {
	p, err := o.roots.Resolve(path)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if d, ok := o.docs[p]; ok && version < d.version {
		return nil
	}
	o.docs[p] = &document{text: text, version: version}
	return nil
}

// DidClose forgets path: reads go to the disk again.
func (o *Overlay) DidClose(path string) error {
	p, err := o.roots.Resolve(path)
	if err != nil {
		return err
	}
	o.mu.Lock()
	delete(o.docs, p)
	o.mu.Unlock()
	return nil
}

// IsOpen reports whether path is open in the overlay.
func (o *Overlay) IsOpen(path string) bool {
	p, err := o.roots.Resolve(path)
	if err != nil {
		return false
	}
	_, _, ok := o.get(p)
	return ok
}

func (o *Overlay) get(p string) (string, int, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	d, ok := o.docs[p]
	if !ok {
		return "", 0, false
	}
	return d.text, d.version, true
}

// setText stores text the bridge wrote, keeping the editor's version number:
// the editor will report its own next version.
func (o *Overlay) setText(p, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d, ok := o.docs[p]; ok {
		d.text = text
	}
}
