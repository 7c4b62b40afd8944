package editor

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/oh-bridge/oh-bridge/pytext"
	"github.com/oh-bridge/oh-bridge/workspace"
)

// What the FileEditor dialect does differently from OHEditor, where it is
// more than a changed word.

// imageTypes are the extensions FileEditor shows as images, with the MIME
// type Python's mimetypes module gives each.
var imageTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".bmp": "image/bmp",
}

// viewImage answers a view of an image file with the picture itself.
func (e *Editor) viewImage(ctx context.Context, t target, mime string) (*Result, error) {
	data, err := e.fs.ReadFile(ctx, t.resolved)
	if err != nil {
		if te, ok := e.readError(t, err).(*ToolError); ok && te.Kind == KindTooLarge {
			return nil, te
		}
		return nil, &ToolError{Kind: faultKind(err), Path: t.display, Err: err, Message: fmt.Sprintf(
			"Failed to read image file %s: %v", t.display, err)}
	}
	return &Result{
		Path:   t.display,
		Output: fmt.Sprintf("Image file %s read successfully. Displaying image content.", t.display),
		Image:  &Image{MIMEType: mime, Data: data},
	}, nil
}

// listLevels is FileEditor's directory view: the directory, then each
// visible entry in name order, each directory's visible children right
// after it; directories end in "/" (the listed directory too). The whole
// text is truncated in the middle. As in OHEditor's listing here, a
// symlink counts as a directory only when its target is a directory inside
// the workspace roots.
func (e *Editor) listLevels(ctx context.Context, t target) (*Result, error) {
	p := t.display
	list, err := e.fs.ListDirectory(ctx, t.resolved, workspace.ListOptions{Depth: 2, IncludeHidden: true, Limit: viewListLimit})
	if err != nil {
		return nil, e.readError(t, err)
	}
	type entry struct {
		name string
		dir  bool
		kids []child
	}
	top := map[string]*entry{}
	hidden := 0
	for _, ent := range list.Entries {
		rel := strings.TrimPrefix(ent.Path, t.resolved+"/")
		dir := ent.Type == workspace.TypeDirectory
		if ent.Type == workspace.TypeSymlink {
			dir = e.isDirInside(ctx, ent.Path)
		}
		parent, name, nested := strings.Cut(rel, "/")
		if !nested {
			if strings.HasPrefix(rel, ".") {
				hidden++
				continue
			}
			if top[rel] == nil {
				top[rel] = &entry{name: rel}
			}
			top[rel].dir = dir
			if dir && ent.Type == workspace.TypeSymlink {
				top[rel].kids = e.linkedChildren(ctx, ent.Path)
			}
			continue
		}
		if strings.HasPrefix(parent, ".") || strings.HasPrefix(name, ".") || strings.Contains(name, "/") {
			continue
		}
		if top[parent] == nil {
			top[parent] = &entry{name: parent, dir: true}
		}
		top[parent].kids = append(top[parent].kids, child{name: name, dir: dir})
	}
	names := make([]string, 0, len(top))
	for n := range top {
		names = append(names, n)
	}
	sort.Strings(names)
	show := func(rel string, dir bool) string {
		s := p + "/" + rel
		if dir {
			s += "/"
		}
		return s
	}
	lines := []string{p + "/"}
	for _, n := range names {
		ent := top[n]
		lines = append(lines, show(n, ent.dir))
		if !ent.dir {
			continue
		}
		sort.Slice(ent.kids, func(i, j int) bool { return ent.kids[i].name < ent.kids[j].name })
		for _, k := range ent.kids {
			if !strings.HasPrefix(k.name, ".") {
				lines = append(lines, show(n+"/"+k.name, k.dir))
			}
		}
	}
	out := "Here's the files and directories up to 2 levels deep in " + p + ", excluding hidden items:\n" + strings.Join(lines, "\n")
	if hidden > 0 {
		out += fmt.Sprintf("\n\n%d hidden files/directories in this directory are excluded. You can use 'ls -la %s' to see them.", hidden, p)
	}
	return &Result{Path: p, Output: pytext.MiddleTruncate(out, MaxResponseLen, dirTruncatedNotice)}, nil
}

// pyTempName is the kind of name FileEditor's NamedTemporaryFile gives the
// file it writes before renaming it over path: ".{name}." plus eight of
// tempfile's random characters plus ".tmp", beside path.
func pyTempName(path string) string {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789_"
	var b [8]byte
	rand.Read(b[:])
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+"."+string(b[:])+".tmp")
}
