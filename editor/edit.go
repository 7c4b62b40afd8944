package editor

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/oh-bridge/oh-bridge/pytext"
	"github.com/oh-bridge/oh-bridge/workspace"
)

func (e *Editor) create(ctx context.Context, t target, fileText string) (*Result, error) {
	version, err := e.write(ctx, t, fileText, "")
	if err != nil {
		return nil, err
	}
	// OHEditor quirk, kept: create pushes the new text, so the first undo
	// after a create "restores" the same content.
	e.mu.Lock()
	e.history[t.resolved] = &fileHistory{}
	h := e.history[t.resolved]
	e.mu.Unlock()
	e.record(h, fileText, version)
	return &Result{
		Path:    t.display,
		Output:  "File created successfully at: " + t.display,
		Diff:    UnifiedDiff(t.display, "", fileText),
		Version: version,
		Text:    fileText,
	}, nil
}

// opened is a file read for an edit: its text as on disk, as edited
// (universal newlines), its version and its history.
type opened struct {
	raw, content, version string
	history               *fileHistory
}

// openForEdit reads the file an edit changes, refusing it when it is no
// longer the version the caller saw.
func (e *Editor) openForEdit(ctx context.Context, t target, expectedVersion string) (*opened, error) {
	raw, version, err := e.readText(ctx, t)
	if err != nil {
		return nil, err
	}
	if expectedVersion != "" && expectedVersion != version {
		return nil, &workspace.StaleVersionError{Path: t.display, Expected: expectedVersion, Actual: version}
	}
	return &opened{raw: raw, content: universalNewlines(raw), version: version, history: e.historyFor(t.resolved, version)}, nil
}

func (e *Editor) strReplace(ctx context.Context, t target, oldStr, newStr, expectedVersion string) (*Result, error) {
	o, err := e.openForEdit(ctx, t, expectedVersion)
	if err != nil {
		return nil, err
	}
	raw, version, h, content := o.raw, o.version, o.history, o.content

	occ := findAll(content, oldStr)
	if len(occ) == 0 {
		// Both retry without old_str's surrounding whitespace; OHEditor
		// strips new_str too, FileEditor keeps it as given.
		oldStr = pytext.Strip(oldStr)
		if e.opts.Dialect == OHEditor {
			newStr = pytext.Strip(newStr)
		}
		occ = findAll(content, oldStr)
		if len(occ) == 0 {
			return nil, &ToolError{Kind: KindOldStrNotFound, Path: t.display, Message: fmt.Sprintf(
				"No replacement was performed, old_str `%s` did not appear verbatim in %s.", oldStr, t.display)}
		}
	}
	if len(occ) > 1 {
		lines := occurrenceLines(content, occ)
		return nil, &ToolError{Kind: KindOldStrNotUnique, Path: t.display, Lines: lines, Message: fmt.Sprintf(
			"No replacement was performed. Multiple occurrences of old_str `%s` in lines %s. Please ensure it is unique.", oldStr, pyIntList(lines))}
	}
	idx := occ[0]
	line := strings.Count(content[:idx], "\n") + 1
	newContent := content[:idx] + newStr + content[idx+len(oldStr):]
	newRaw := withLineEnding(newContent, lineEndingOf(raw))
	// The snippet and the diff need only the two texts: they are made on
	// another goroutine while the file is written and fsynced, which waits
	// on the disk.
	type shown struct{ out, diff string }
	shownC := make(chan shown, 1)
	go func() {
		start := max(0, line-SnippetContextWindow)
		end := line + SnippetContextWindow + strings.Count(newStr, "\n")
		snippet := pyReadRange(newContent, start+1, end)
		out := "The file " + t.display + " has been edited. " +
			e.makeOutput(snippet, "a snippet of "+t.display, start+1) +
			"Review the changes and make sure they are as expected. Edit the file again if necessary."
		shownC <- shown{out, UnifiedDiff(t.display, content, newContent)}
	}()
	newVersion, err := e.write(ctx, t, newRaw, version)
	if err != nil {
		return nil, err
	}
	e.record(h, raw, newVersion)
	sh := <-shownC
	return &Result{Path: t.display, Output: sh.out, Diff: sh.diff, Version: newVersion, Text: newRaw}, nil
}

// findAll returns the start offsets of the non-overlapping occurrences of
// sub, as re.finditer(re.escape(sub)) finds them: an empty sub matches at
// every character boundary.
func findAll(s, sub string) []int {
	var occ []int
	if sub == "" {
		for i := range s {
			occ = append(occ, i)
		}
		return append(occ, len(s))
	}
	for off := 0; ; {
		i := strings.Index(s[off:], sub)
		if i < 0 {
			return occ
		}
		occ = append(occ, off+i)
		off += i + len(sub)
	}
}

// occurrenceLines returns the sorted, distinct 1-based lines of offsets.
func occurrenceLines(s string, offsets []int) []int {
	var lines []int
	line, pos := 1, 0
	for _, off := range offsets { // offsets ascend
		line += strings.Count(s[pos:off], "\n")
		pos = off
		if len(lines) == 0 || lines[len(lines)-1] != line {
			lines = append(lines, line)
		}
	}
	return lines
}

func (e *Editor) insert(ctx context.Context, t target, insertLine int, newStr, expectedVersion string) (*Result, error) {
	o, err := e.openForEdit(ctx, t, expectedVersion)
	if err != nil {
		return nil, err
	}
	raw, version, h, content := o.raw, o.version, o.history, o.content
	numLines := pyLineCount(content)
	if insertLine < 0 || insertLine > numLines {
		return nil, invalidParameter(KindInvalidInsertLine, "insert_line", strconv.Itoa(insertLine),
			"It should be within the range of allowed values: "+pyIntList([]int{0, numLines}))
	}
	newLines := strings.Split(newStr, "\n")
	cut := lineOffset(content, insertLine)
	before, after := content[:cut], content[cut:]
	if before != "" && !strings.HasSuffix(before, "\n") {
		// Deliberate fix: OHEditor glues the text to a last line lacking "\n".
		before += "\n"
	}
	newContent := before + newStr + "\n" + after
	newRaw := withLineEnding(newContent, lineEndingOf(raw))
	newVersion, err := e.write(ctx, t, newRaw, version)
	if err != nil {
		return nil, err
	}
	e.record(h, raw, newVersion)

	start := max(0, insertLine-SnippetContextWindow)
	end := min(numLines+len(newLines), insertLine+SnippetContextWindow+len(newLines))
	snippet := pyReadRange(newContent, start+1, end)
	out := "The file " + t.display + " has been edited. " +
		e.makeOutput(snippet, "a snippet of the edited file", max(1, insertLine-SnippetContextWindow+1)) +
		"Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary."
	return &Result{Path: t.display, Output: out, Diff: UnifiedDiff(t.display, content, newContent), Version: newVersion, Text: newRaw}, nil
}

// lineOffset returns the byte offset just after the first n lines of s.
func lineOffset(s string, n int) int {
	off := 0
	for range n {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return len(s)
		}
		off += i + 1
	}
	return off
}

// lineEndingOf returns the file's dominant line break, so an edit keeps a
// CRLF file CRLF (OHEditor rewrites every file to "\n").
func lineEndingOf(raw string) string {
	if strings.IndexByte(raw, '\r') < 0 {
		return "\n"
	}
	crlf := strings.Count(raw, "\r\n")
	cr := strings.Count(raw, "\r") - crlf
	lf := strings.Count(raw, "\n") - crlf
	switch {
	case crlf > lf && crlf >= cr:
		return "\r\n"
	case cr > lf && cr > crlf:
		return "\r"
	}
	return "\n"
}

func withLineEnding(normalized, eol string) string {
	if eol == "\n" {
		return normalized
	}
	return strings.ReplaceAll(normalized, "\n", eol)
}
