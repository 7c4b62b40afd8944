package editor

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/oh-bridge/oh-bridge/pytext"
	"github.com/oh-bridge/oh-bridge/workspace"
)

func (e *Editor) viewFile(ctx context.Context, t target, info *workspace.FileInfo, viewRange []int) (*Result, error) {
	if e.opts.Dialect == FileEditor {
		if mime, ok := imageTypes[strings.ToLower(pySuffix(t.display))]; ok {
			return e.viewImage(ctx, t, mime)
		}
	} else if ext := pySuffix(t.display); supportedBinaryExts[strings.ToLower(ext)] {
		if info.Size > e.fs.MaxFileSize() {
			return nil, e.tooLarge(t, info.Size, nil)
		}
		// OHEditor converts these to Markdown (markitdown); we have no
		// converter, so we fail the way its conversion failures do.
		return nil, &ToolError{Kind: KindUnsupportedBinary, Path: t.display, Message: fmt.Sprintf(
			"Error in converting file to Markdown: oh-bridge cannot convert %s files. Please use Python code to read %s", ext, t.display)}
	}
	raw, version, err := e.readText(ctx, t)
	if err != nil {
		return nil, err
	}
	content := universalNewlines(raw)
	res := &Result{Path: t.display, Version: version}
	if len(viewRange) == 0 {
		res.Output = e.makeOutput(content, t.display, 1)
		return res, nil
	}
	numLines := pyLineCount(content)
	rangeText := pyIntList(viewRange)
	if len(viewRange) != 2 {
		return nil, invalidParameter(KindInvalidViewRange, "view_range", rangeText, "It should be a list of two integers.")
	}
	start, end := viewRange[0], viewRange[1]
	if start < 1 || start > numLines {
		return nil, invalidParameter(KindInvalidViewRange, "view_range", rangeText, fmt.Sprintf(
			"Its first element `%d` should be within the range of lines of the file: %s.", start, pyIntList([]int{1, numLines})))
	}
	warning := ""
	switch {
	case end == -1:
		end = numLines
	case end > numLines:
		warning = fmt.Sprintf("We only show up to %d since there're only %d lines in this file.", numLines, numLines)
		end = numLines
	}
	if end < start {
		return nil, invalidParameter(KindInvalidViewRange, "view_range", rangeText, fmt.Sprintf(
			"Its second element `%d` should be greater than or equal to the first element `%d`.", end, start))
	}
	selected := pyReadRange(content, start, end)
	if e.opts.Dialect != FileEditor {
		// OHEditor rejoins the lines with splitlines, which also breaks
		// at \f, \v and Unicode separators and drops the last "\n";
		// FileEditor keeps the "\n"-separated lines as read.
		selected = strings.Join(pySplitlines(selected), "\n")
	}
	res.Output = e.makeOutput(selected, t.display, start)
	if warning != "" {
		res.Output = "NOTE: " + warning + "\n" + res.Output
	}
	return res, nil
}

// makeOutput is OHEditor's _make_output: truncate (OHEditor cuts the end,
// FileEditor the middle), then number every "\n"-separated line as cat -n
// does ("%6d\t"). OHEditor numbers the empty field after a final "\n" as
// a line of its own; FileEditor takes that "\n" as the end of the last
// line, so a file "a\n" is one numbered line and an empty file none.
func (e *Editor) makeOutput(content, description string, startLine int) string {
	if e.opts.Dialect == FileEditor {
		content = pytext.MiddleTruncate(content, MaxResponseLen, textTruncatedNotice)
	} else {
		content = truncateRunes(content, MaxResponseLen, textTruncatedNotice)
	}
	var b strings.Builder
	b.Grow(len(content) + len(content)/8 + 100)
	b.WriteString("Here's the result of running `cat -n` on " + description + ":\n")
	if e.opts.Dialect == FileEditor {
		if content == "" {
			return b.String()
		}
		content = strings.TrimSuffix(content, "\n")
	}
	n := startLine
	for {
		i := strings.IndexByte(content, '\n')
		line := content
		if i >= 0 {
			line = content[:i]
		}
		fmt.Fprintf(&b, "%6d\t", n)
		b.WriteString(line)
		b.WriteByte('\n')
		if i < 0 {
			break
		}
		content = content[i+1:]
		n++
	}
	return b.String()
}

// viewDirectory reproduces OHEditor's listing, which shells out to
//
//	find -L {path} -maxdepth 2 -not \( -path '{path}/\.*' -o -path '{path}/*/\.*' \) | sort
//
// plus a count of the hidden entries directly in {path}. Differences: the
// sort is bytewise (sort under LC_ALL=C), and a symlink is followed only if
// its target lies inside the workspace roots (find -L follows any).
func (e *Editor) viewDirectory(ctx context.Context, t target, viewRange []int) (*Result, error) {
	p := t.display
	if len(viewRange) > 0 {
		return nil, invalidParameter(KindInvalidViewRange, "view_range", pyIntList(viewRange),
			"The `view_range` parameter is not allowed when `path` points to a directory.")
	}
	if e.opts.Dialect == FileEditor {
		return e.listLevels(ctx, t)
	}
	list, err := e.fs.ListDirectory(ctx, t.resolved, workspace.ListOptions{Depth: 2, IncludeHidden: true, Limit: viewListLimit})
	if err != nil {
		return nil, e.readError(t, err)
	}
	join := func(dir, rel string) string {
		if strings.HasSuffix(dir, "/") {
			return dir + rel
		}
		return dir + "/" + rel
	}
	isDir := map[string]bool{p: true}
	paths := []string{p}
	hidden := 0
	for _, ent := range list.Entries {
		rel := strings.TrimPrefix(ent.Path, t.resolved+"/")
		topLevel := !strings.Contains(rel, "/")
		if topLevel && strings.HasPrefix(rel, ".") {
			hidden++
		}
		if hasHiddenComponent(rel) {
			continue
		}
		shown := join(p, rel)
		dir := ent.Type == workspace.TypeDirectory
		if ent.Type == workspace.TypeSymlink {
			dir = e.isDirInside(ctx, ent.Path)
			if dir && topLevel {
				// find -L descends into a linked directory.
				for _, child := range e.linkedChildren(ctx, ent.Path) {
					if !strings.HasPrefix(child.name, ".") {
						cp := join(shown, child.name)
						paths = append(paths, cp)
						isDir[cp] = child.dir
					}
				}
			}
		}
		paths = append(paths, shown)
		isDir[shown] = dir
	}
	sort.Strings(paths)
	var raw strings.Builder
	for _, s := range paths {
		raw.WriteString(s + "\n")
	}
	stdout := truncateRunes(raw.String(), MaxResponseLen, dirTruncatedNotice)
	lines := strings.Split(pytext.Strip(stdout), "\n")
	for i, l := range lines {
		if isDir[l] {
			lines[i] = l + "/"
		}
	}
	out := "Here's the files and directories up to 2 levels deep in " + p + ", excluding hidden items:\n" + strings.Join(lines, "\n")
	if hidden > 0 {
		out += fmt.Sprintf("\n\n%d hidden files/directories in this directory are excluded. You can use 'ls -la %s' to see them.", hidden, p)
	}
	return &Result{Path: p, Output: out}, nil
}

func hasHiddenComponent(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}

// isDirInside reports whether path leads to a directory inside the roots.
func (e *Editor) isDirInside(ctx context.Context, path string) bool {
	info, err := e.fs.Probe(ctx, path)
	return err == nil && info.Type == workspace.TypeDirectory
}

type child struct {
	name string
	dir  bool
}

// linkedChildren lists the entries of the directory a symlink points to.
func (e *Editor) linkedChildren(ctx context.Context, link string) []child {
	target, err := e.fs.Roots().Resolve(link)
	if err != nil {
		return nil
	}
	list, err := e.fs.ListDirectory(ctx, target, workspace.ListOptions{Depth: 1, IncludeHidden: true, Limit: viewListLimit})
	if err != nil {
		return nil
	}
	var out []child
	for _, ent := range list.Entries {
		c := child{name: filepath.Base(ent.Path), dir: ent.Type == workspace.TypeDirectory}
		if ent.Type == workspace.TypeSymlink {
			c.dir = e.isDirInside(ctx, ent.Path)
		}
		out = append(out, c)
	}
	return out
}
