package handlers

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/oh-bridge/oh-bridge/session"
)

// The textDocument/* notifications keep the workspace overlay in step with
// the editor's buffers, so reads and edits see unsaved text. Edits to an
// open document go back to the editor as workspace/applyEdit when the
// client declared workspace.applyEdit; positions are UTF-16, the encoding
// initialize advertises.

// openDocuments remembers, per resolved path, the URI and version the
// client uses for an open document: workspace/applyEdit must name them.
type openDocuments struct {
	mu     sync.Mutex
	byPath map[string]docRef
}

type docRef struct {
	uri     string
	version int
}

func (d *openDocuments) get(path string) (docRef, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.byPath[path]
	return r, ok
}

func (d *openDocuments) set(path string, r docRef) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if old, ok := d.byPath[path]; ok && r.version < old.version {
		return // stale, as the overlay treats it
	}
	d.byPath[path] = r
}

func (d *openDocuments) drop(path string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.byPath, path)
}

type textDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

// resolveDocument turns a document URI into a resolved workspace path.
// Documents outside the roots are none of the bridge's business: ok is
// false and the notification is ignored.
func (h *Handlers) resolveDocument(method, uri string) (s *session.Session, docs *openDocuments, path string, ok bool) {
	h.mu.Lock()
	s, docs = h.sess, h.docs
	h.mu.Unlock()
	if s == nil {
		return nil, nil, "", false
	}
	local, err := fileURIPath(uri)
	if err != nil {
		h.log.Debug("ignored a document that is not a local file", "method", method, "uri", uri, "error", err)
		return nil, nil, "", false
	}
	path, err = s.Resolve(local)
	if err != nil {
		h.log.Debug("ignored a document outside the workspace", "method", method, "uri", uri)
		return nil, nil, "", false
	}
	return s, docs, path, true
}

func (h *Handlers) didOpen(ctx context.Context, p *didOpenParams) (any, error) {
	d := p.TextDocument
	s, docs, path, ok := h.resolveDocument("textDocument/didOpen", d.URI)
	if !ok {
		return nil, nil
	}
	if err := s.OpenDocument(path, d.Text, d.Version); err != nil {
		return nil, err
	}
	docs.drop(path)
	docs.set(path, docRef{uri: d.URI, version: d.Version})
	return nil, nil
}

type position struct {
	Line      int `json:"line"`
	Character int `json:"character"` // UTF-16 code units
}

type textRange struct {
	Start position `json:"start"`
	End   position `json:"end"`
}

type contentChange struct {
	Range *textRange `json:"range"`
	Text  string     `json:"text"`
}

type didChangeParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int    `json:"version"`
	} `json:"textDocument"`
	ContentChanges []contentChange `json:"contentChanges"`
}

func (h *Handlers) didChange(ctx context.Context, p *didChangeParams) (any, error) {
	d := p.TextDocument
	s, docs, path, ok := h.resolveDocument("textDocument/didChange", d.URI)
	if !ok || len(p.ContentChanges) == 0 {
		return nil, nil
	}
	var text string
	if last := len(p.ContentChanges) - 1; hasNoRange(p.ContentChanges[last:]) {
		text = p.ContentChanges[last].Text
	} else {
		// Incremental sync: apply the changes in order to the text held.
		if !s.IsDocumentOpen(path) {
			h.log.Warn("ignored an incremental change to a document that is not open; send didOpen first", "uri", d.URI)
			return nil, nil
		}
		f, err := s.ReadTextFile(ctx, path, 0, 0)
		if err != nil {
			return nil, err
		}
		text = applyChanges(f.Content, p.ContentChanges)
	}
	if err := s.ChangeDocument(path, text, d.Version); err != nil {
		return nil, err
	}
	docs.set(path, docRef{uri: d.URI, version: d.Version})
	return nil, nil
}

func hasNoRange(changes []contentChange) bool {
	for _, c := range changes {
		if c.Range != nil {
			return false
		}
	}
	return true
}

// applyChanges applies LSP content changes in order: a change without a
// range replaces the whole text, one with a range replaces that range.
func applyChanges(text string, changes []contentChange) string {
	for _, c := range changes {
		if c.Range == nil {
			text = c.Text
			continue
		}
		start := offsetOf(text, c.Range.Start)
		end := offsetOf(text, c.Range.End)
		if end < start {
			start, end = end, start
		}
		text = text[:start] + c.Text + text[end:]
	}
	return text
}

type didCloseParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
}

func (h *Handlers) didClose(ctx context.Context, p *didCloseParams) (any, error) {
	s, docs, path, ok := h.resolveDocument("textDocument/didClose", p.TextDocument.URI)
	if !ok {
		return nil, nil
	}
	docs.drop(path)
	return nil, s.CloseDocument(path)
}

// didChangeWatchedFiles is accepted and ignored: the bridge watches the
// roots itself, and reads always go to the disk (or the overlay).
func (h *Handlers) didChangeWatchedFiles(ctx context.Context, _ *noParams) (any, error) {
	return nil, nil
}

// applyEdit is LSP's request that lands an edit in the editor's buffers.
const applyEdit = "workspace/applyEdit"

// clientBuffers is the workspace.BufferEditor of a client that declared
// workspace.applyEdit: edits to open documents are sent to the editor, so
// they land in its buffer and undo stack rather than under it on disk.
type clientBuffers struct {
	h    *Handlers
	docs *openDocuments
}

type textEdit struct {
	Range   textRange `json:"range"`
	NewText string    `json:"newText"`
}

type versionedDocument struct {
	URI     string `json:"uri"`
	Version *int   `json:"version"` // null: whatever the editor holds
}

type textDocumentEdit struct {
	TextDocument versionedDocument `json:"textDocument"`
	Edits        []textEdit        `json:"edits"`
}

type applyEditParams struct {
	Label string `json:"label"`
	Edit  struct {
		DocumentChanges []textDocumentEdit    `json:"documentChanges,omitempty"`
		Changes         map[string][]textEdit `json:"changes,omitempty"`
	} `json:"edit"`
}

type applyEditResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason"`
}

// ApplyFullText sends the smallest single edit that turns oldText into
// newText, against the document version the editor last reported.
func (b *clientBuffers) ApplyFullText(ctx context.Context, path, oldText, newText string) (bool, error) {
	doc := versionedDocument{URI: fileURI(path)}
	if ref, ok := b.docs.get(path); ok {
		v := ref.version
		doc = versionedDocument{URI: ref.uri, Version: &v}
	}
	var p applyEditParams
	p.Label = "oh-bridge: agent edit"
	edit := minimalEdit(oldText, newText)
	// Versioned documentChanges let the editor refuse an edit made against
	// an older buffer; a client that did not declare them gets the plain
	// LSP "changes" form.
	if b.h.Capabilities().DocumentChanges {
		p.Edit.DocumentChanges = []textDocumentEdit{{TextDocument: doc, Edits: []textEdit{edit}}}
	} else {
		p.Edit.Changes = map[string][]textEdit{doc.URI: {edit}}
	}
	var res applyEditResult
	if err := b.h.conn.Call(ctx, applyEdit, &p, &res); err != nil {
		return false, err
	}
	if !res.Applied {
		b.h.log.Info("the editor declined an edit", "uri", doc.URI, "reason", res.FailureReason)
	}
	return res.Applied, nil
}

// fileURI is the file:// URI of a local path.
func fileURI(path string) string {
	p := filepath.ToSlash(path)
	if filepath.VolumeName(path) != "" && !strings.HasPrefix(p, "/") {
		p = "/" + p // C:\work is file:///C:/work
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// minimalEdit returns one edit replacing the part of oldText that differs
// from newText: the common prefix and suffix are kept. The cut points never
// split a UTF-8 sequence or a "\r\n" pair, so the range is exact in UTF-16
// positions.
func minimalEdit(oldText, newText string) textEdit {
	prefix := 0
	for prefix < len(oldText) && prefix < len(newText) && oldText[prefix] == newText[prefix] {
		prefix++
	}
	for prefix > 0 && prefix < len(oldText) && !utf8.RuneStart(oldText[prefix]) {
		prefix--
	}
	if prefix > 0 && prefix < len(oldText) && oldText[prefix-1] == '\r' && oldText[prefix] == '\n' {
		prefix--
	}
	suffix := 0
	for suffix < len(oldText)-prefix && suffix < len(newText)-prefix &&
		oldText[len(oldText)-1-suffix] == newText[len(newText)-1-suffix] {
		suffix++
	}
	for suffix > 0 && !utf8.RuneStart(oldText[len(oldText)-suffix]) {
		suffix--
	}
	if s := len(oldText) - suffix; suffix > 0 && s > 0 && oldText[s-1] == '\r' && oldText[s] == '\n' {
		suffix--
	}
	start, end := prefix, len(oldText)-suffix
	return textEdit{
		Range:   textRange{Start: positionOf(oldText, start), End: positionOf(oldText, end)},
		NewText: newText[prefix : len(newText)-suffix],
	}
}

// positionOf converts a byte offset of text (at a rune boundary) into an
// LSP position: "\n", "\r\n" and "\r" end lines, characters are UTF-16
// code units.
func positionOf(text string, offset int) position {
	var pos position
	for i := 0; i < offset; {
		c := text[i]
		switch {
		case c == '\n':
			pos.Line++
			pos.Character = 0
			i++
		case c == '\r':
			if i+1 < len(text) && text[i+1] == '\n' && i+1 < offset {
				i++ // "\r\n" is one line break
			}
			pos.Line++
			pos.Character = 0
			i++
		case c < utf8.RuneSelf:
			pos.Character++
			i++
		default:
			r, n := utf8.DecodeRuneInString(text[i:])
			pos.Character += utf16Len(r)
			i += n
		}
	}
	return pos
}

// offsetOf converts an LSP position into a byte offset of text. As LSP
// asks, a character past the end of its line means the line's end, and a
// line past the last means the end of the text.
func offsetOf(text string, pos position) int {
	i := 0
	for line := 0; line < pos.Line; line++ {
		j := strings.IndexAny(text[i:], "\r\n")
		if j < 0 {
			return len(text)
		}
		i += j
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		i++
	}
	for units := 0; units < pos.Character && i < len(text); {
		c := text[i]
		if c == '\n' || c == '\r' {
			break
		}
		if c < utf8.RuneSelf {
			units++
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		if units+utf16Len(r) > pos.Character {
			break // inside a surrogate pair: stay before it
		}
		units += utf16Len(r)
		i += n
	}
	return i
}

func utf16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}
