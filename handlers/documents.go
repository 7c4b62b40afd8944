package handlers

import (
	"context"
	"errors"
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

// openDocuments remembers, per resolved path, what the client told of an
// open document: the URI and version workspace/applyEdit must name, and the
// text as the editor last reported it, the base its incremental changes
// apply to. That base is kept here, not read back from the overlay: the
// overlay may already hold an agent's edit that the editor then reports as
// a change of its own (applied to the edited text, the edit would land
// twice), and reads may go to an editor host instead.
type openDocuments struct {
	mu     sync.Mutex
	byPath map[string]docRef
	texts  map[string]*editorText // made on first use
}

type docRef struct {
	uri     string
	version int
}

type editorText struct {
	text string
	// mark is a position of text known from the last change, where the
	// next change's search starts: a keystroke costs a scan of the line
	// typed on, not of the text before it.
	mark mark
}

func (d *openDocuments) get(path string) (docRef, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.byPath[path]
	return r, ok
}

// open records a document the editor opened (again).
func (d *openDocuments) open(path string, r docRef, text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byPath[path] = r
	d.setText(path, &editorText{text: text})
}

func (d *openDocuments) setText(path string, t *editorText) {
	if d.texts == nil {
		d.texts = map[string]*editorText{}
	}
	d.texts[path] = t
}

// errNotOpen is change's answer to an incremental change of a document it
// holds no text for.
var errNotOpen = errors.New("an incremental change to a document that is not open; send didOpen first")

// change applies the content changes of a didChange to the document and
// returns its new text. ok is false when the change is older than the
// version held (the overlay ignores those too).
func (d *openDocuments) change(path string, r docRef, changes []contentChange) (text string, ok bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if old, open := d.byPath[path]; open && r.version < old.version {
		return "", false, nil
	}
	// A change without a range replaces the whole text: the changes
	// before the last such one do not matter.
	from := 0
	for i, c := range changes {
		if c.Range == nil {
			from = i
		}
	}
	var t editorText
	if changes[from].Range == nil {
		t.text = changes[from].Text
		from++
	} else if held, ok := d.texts[path]; ok {
		t = *held
	} else {
		return "", false, errNotOpen
	}
	for _, c := range changes[from:] {
		t.text, t.mark = applyChange(t.text, t.mark, c)
	}
	d.byPath[path] = r
	d.setText(path, &t)
	return t.text, true, nil
}

func (d *openDocuments) drop(path string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.byPath, path)
	delete(d.texts, path)
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
	docs.open(path, docRef{uri: d.URI, version: d.Version}, d.Text)
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
	text, ok, err := docs.change(path, docRef{uri: d.URI, version: d.Version}, p.ContentChanges)
	if errors.Is(err, errNotOpen) {
		h.log.Warn("ignored "+err.Error(), "uri", d.URI)
		return nil, nil
	}
	if !ok {
		return nil, nil
	}
	return nil, s.ChangeDocument(path, text, d.Version)
}

// mark is a position of a text with its byte offset, and the offset of
// its line's start; the zero mark is the text's start.
type mark struct {
	pos       position
	offset    int
	lineStart int
}

// applyChange applies one ranged change to text; m is a mark of text, and
// the mark returned one of the new text (the change's start: nothing
// before it moved). The one copy of the text is the new string itself.
func applyChange(text string, m mark, c contentChange) (string, mark) {
	start := seek(text, m, c.Range.Start)
	end := start
	if c.Range.End != c.Range.Start {
		end = seek(text, start, c.Range.End)
	}
	if end.offset < start.offset {
		start, end = end, start
	}
	text = text[:start.offset] + c.Text + text[end.offset:]
	if start.offset > 0 && text[start.offset-1] == '\r' {
		// The mark starts a line after a lone "\r", which the new text may
		// have joined to a "\n" after it: the line before is still sure.
		start = prevLine(text, start)
	}
	return text, start
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

// clientBuffers is the session.BufferEditor of a client that declared
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
	return seek(text, mark{}, pos).offset
}

// seek finds pos in text, starting from the mark m: forward from it when
// pos is on its line or after, else back line by line or from the start,
// whichever passes fewer lines. "\n", "\r\n" and "\r" end lines; a
// character past the end of its line is the line's end, and a line past
// the last is the end of the text (where the mark then says it is).
func seek(text string, m mark, pos position) mark {
	switch {
	case pos.Line == m.pos.Line && pos.Character >= m.pos.Character:
		// On the mark's line, at or after it.
	case pos.Line >= m.pos.Line-pos.Line:
		// After the mark's line, on it, or nearer to it than to the start.
		for m.pos.Line > pos.Line {
			m = prevLine(text, m)
		}
		m = mark{pos: position{Line: m.pos.Line}, offset: m.lineStart, lineStart: m.lineStart}
	default:
		m = mark{}
	}
	m = nextLines(text, m, pos.Line)
	if m.pos.Line < pos.Line {
		return m // past the last line: the end
	}
	i, units := m.offset, m.pos.Character
	for units < pos.Character && i < len(text) {
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
	m.pos.Character, m.offset = units, i
	return m
}

// nextLines moves the mark m forward to the start of line `line`, or to
// the end of the text if it has fewer lines. A mark already on that line
// stays where it is.
func nextLines(text string, m mark, line int) mark {
	i, l := m.lineStart, m.pos.Line
	if l >= line {
		return m
	}
	// nl is the next "\n" at or after i (len(text) if none), found with one
	// search for many lines: a text of lone "\r" line ends is no slower.
	nl := -1
	for l < line {
		if nl < i {
			nl = len(text)
			if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
				nl = i + j
			}
		}
		end := nl // the line's end
		if r := strings.IndexByte(text[i:nl], '\r'); r >= 0 {
			end = i + r
		}
		if end == len(text) {
			// No more lines: the end of the last one.
			return mark{pos: position{Line: l, Character: m.pos.Character + utf16Count(text[m.offset:])}, offset: len(text), lineStart: i}
		}
		if text[end] == '\r' && end+1 < len(text) && text[end+1] == '\n' {
			end++ // "\r\n" is one line end
		}
		i = end + 1
		l++
		m.pos.Character, m.offset = 0, i
	}
	return mark{pos: position{Line: l}, offset: i, lineStart: i}
}

// prevLine moves the mark m (not on line 0) to the start of the line
// before its own.
func prevLine(text string, m mark) mark {
	end := m.lineStart - 1 // the previous line's line end ...
	if text[end] == '\n' && end > 0 && text[end-1] == '\r' {
		end-- // ... which may be "\r\n"
	}
	start := strings.LastIndexAny(text[:end], "\r\n") + 1
	return mark{pos: position{Line: m.pos.Line - 1}, offset: start, lineStart: start}
}

// utf16Count is the length of s in UTF-16 code units.
func utf16Count(s string) int {
	n := 0
	for _, r := range s {
		n += utf16Len(r)
	}
	return n
}

func utf16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}
