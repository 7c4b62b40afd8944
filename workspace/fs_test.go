package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadTextFile(t *testing.T) {
	fs, root := newFS(t, map[string]string{
		"five.txt": "1\n2\n3\n4\n5",
		"crlf.txt": "a\r\nb\r\n",
		"bin":      "ab\x00cd",
		"latin1":   "ok\ncaf\xe9\n",
		"empty":    "",
		"dir/x":    "x",
	})
	big := strings.Repeat("x", DefaultMaxFileSize+1)
	writeFiles(t, root, map[string]string{"big": big})
	tests := []struct {
		path        string
		line, limit int
		want        string // content, or the error kind
		total       int
		truncated   bool
	}{
		{"five.txt", 0, 0, "1\n2\n3\n4\n5", 5, false},
		{"five.txt", 2, 2, "2\n3\n", 5, true},
		{"five.txt", 4, 0, "4\n5", 5, false},
		{"five.txt", 4, 5, "4\n5", 5, false},
		{"five.txt", 9, 1, "", 5, false},
		{"crlf.txt", 0, 0, "a\r\nb\r\n", 2, false},
		{"empty", 0, 0, "", 0, false},
		{"bin", 0, 0, "binary", 0, false},
		{"latin1", 0, 0, "invalid_utf8", 0, false},
		{"big", 0, 0, "too_large", 0, false},
		{"dir", 0, 0, "is_directory", 0, false},
		{"missing", 0, 0, "not_found", 0, false},
		{"five.txt/x", 0, 0, "not_found", 0, false},
	}
	for _, tt := range tests {
		res, err := fs.ReadTextFile(context.Background(), tt.path, tt.line, tt.limit)
		input := tt.path
		if err != nil {
			assertEqual(t, input, tt.want, kindOf(err))
			continue
		}
		assertEqual(t, input+" content", tt.want, res.Content)
		assertEqual(t, input+" totalLines", tt.total, res.TotalLines)
		assertEqual(t, input+" truncated", tt.truncated, res.Truncated)
		assertEqual(t, input+" encoding", "utf-8", res.Encoding)
		assertEqual(t, input+" version", Version([]byte(readFile(t, filepath.Join(root, tt.path)))), res.Version)
	}
	_, err := fs.ReadTextFile(context.Background(), "latin1", 0, 0)
	var nt *NotTextError
	if errors.As(err, &nt) {
		assertEqual(t, "latin1 offset", int64(6), nt.Offset)
	}
}

func TestWriteTextFile(t *testing.T) {
	ctx := context.Background()
	fs, root := newFS(t, map[string]string{"a.txt": "old\n", "script.sh": "#!/bin/sh\n"})
	os.Chmod(filepath.Join(root, "script.sh"), 0o751)
	fi, err := os.Stat(filepath.Join(root, "script.sh"))
	if err != nil {
		t.Fatal(err)
	}
	mode := fi.Mode().Perm() // 0751; 0666 on Windows, which keeps only the read-only bit
	oldVersion := Version([]byte("old\n"))
	tests := []struct {
		name          string
		path, content string
		expected      string
		parents       bool
		wantErr       string
		wantCreated   bool
	}{
		{"new file", "n.txt", "x", "", false, "", true},
		{"crlf and no final newline kept", "crlf.txt", "a\r\nb", "", false, "", true},
		{"matching version", "a.txt", "new\n", oldVersion, false, "", false},
		{"stale version", "a.txt", "newer\n", oldVersion, false, "stale_version", false},
		{"version of a missing file", "gone.txt", "x", oldVersion, false, "stale_version", false},
		{"missing parent", "d/e/f.txt", "x", "", false, "not_found", false},
		{"create parents", "d/e/f.txt", "x", "", true, "", true},
		{"directory", "d", "x", "", false, "is_directory", false},
		{"keeps mode", "script.sh", "#!/bin/sh\necho\n", "", false, "", false},
	}
	for _, tt := range tests {
		before, _ := os.ReadFile(filepath.Join(root, tt.path))
		res, err := fs.WriteTextFile(ctx, tt.path, tt.content, tt.expected, tt.parents)
		assertEqual(t, tt.name+" error", tt.wantErr, kindOf(err))
		if err != nil {
			if after, _ := os.ReadFile(filepath.Join(root, tt.path)); string(after) != string(before) {
				t.Errorf("%s: failed write changed the file to %q", tt.name, after)
			}
			continue
		}
		assertEqual(t, tt.name+" content", tt.content, readFile(t, filepath.Join(root, tt.path)))
		assertEqual(t, tt.name+" created", tt.wantCreated, res.Created)
		assertEqual(t, tt.name+" version", Version([]byte(tt.content)), res.Version)
	}
	fi, _ = os.Stat(filepath.Join(root, "script.sh"))
	assertEqual(t, "mode after rewrite", mode, fi.Mode().Perm())
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		if strings.Contains(e.Name(), tmpMarker) {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestStat(t *testing.T) {
	fs, root := newFS(t, map[string]string{"a.txt": "hello\n", "b.bin": "\x00\x01"})
	haveLink := symlink(t, "a.txt", filepath.Join(root, "link"))
	ctx := context.Background()
	for _, tt := range []struct {
		path                     string
		exists                   bool
		typ                      string
		symlink, binary, version bool
	}{
		{"a.txt", true, TypeFile, false, false, true},
		{"b.bin", true, TypeFile, false, true, false},
		{"link", true, TypeFile, true, false, true},
		{".", true, TypeDirectory, false, false, false},
		{"missing", false, "", false, false, false},
	} {
		if tt.path == "link" && !haveLink {
			continue
		}
		info, err := fs.Stat(ctx, tt.path)
		if err != nil {
			t.Errorf("Stat(%s): %v", tt.path, err)
			continue
		}
		assertEqual(t, tt.path+" exists", tt.exists, info.Exists)
		assertEqual(t, tt.path+" type", tt.typ, info.Type)
		assertEqual(t, tt.path+" symlink", tt.symlink, info.IsSymlink)
		assertEqual(t, tt.path+" binary", tt.binary, info.IsBinary)
		assertEqual(t, tt.path+" has version", tt.version, info.Version != "")
	}
}

func TestMkdirDeleteMove(t *testing.T) {
	ctx := context.Background()
	fs, root := newFS(t, map[string]string{"a.txt": "a", "b.txt": "b", "full/x": "x"})
	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"mkdir", func() error { return fs.Mkdir(ctx, "new", false) }, ""},
		{"mkdir existing", func() error { return fs.Mkdir(ctx, "new", false) }, "exists"},
		{"mkdir -p existing", func() error { return fs.Mkdir(ctx, "new", true) }, ""},
		{"mkdir missing parent", func() error { return fs.Mkdir(ctx, "p/q", false) }, "not_found"},
		{"mkdir -p", func() error { return fs.Mkdir(ctx, "p/q", true) }, ""},
		{"delete non-empty", func() error { return fs.Delete(ctx, "full", false) }, "directory_not_empty"},
		{"delete recursive", func() error { return fs.Delete(ctx, "full", true) }, ""},
		{"delete missing", func() error { return fs.Delete(ctx, "full", true) }, "not_found"},
		{"move onto existing", func() error { return fs.Move(ctx, "a.txt", "b.txt", false) }, "exists"},
		{"move overwrite", func() error { return fs.Move(ctx, "a.txt", "b.txt", true) }, ""},
		{"move missing", func() error { return fs.Move(ctx, "a.txt", "c.txt", false) }, "not_found"},
		{"move into missing dir", func() error { return fs.Move(ctx, "b.txt", "nodir/b.txt", false) }, "not_found"},
		{"move the root", func() error { return fs.Move(ctx, ".", "elsewhere", false) }, "workspace_root"},
	}
	for _, tt := range tests {
		assertEqual(t, tt.name, tt.want, kindOf(tt.run()))
	}
	assertEqual(t, "moved content", "a", readFile(t, filepath.Join(root, "b.txt")))
}

func TestErrorKinds(t *testing.T) {
	for _, tt := range []struct {
		err  interface{ Kind() string }
		want string
	}{
		{&OutsideRootsError{}, "path_outside_workspace"},
		{&NotFoundError{}, "not_found"},
		{&IsDirectoryError{}, "is_directory"},
		{&NotDirectoryError{}, "not_directory"},
		{&NotTextError{Reason: NotTextBinary}, "binary"},
		{&NotTextError{Reason: NotTextTooLarge}, "too_large"},
		{&NotTextError{Reason: NotTextInvalidUTF8}, "invalid_utf8"},
		{&StaleVersionError{}, "stale_version"},
		{&ExistsError{}, "exists"},
		{&DirectoryNotEmptyError{}, "directory_not_empty"},
		{&RootOperationError{}, "workspace_root"},
		{&BufferEditRejectedError{}, "buffer_edit_rejected"},
	} {
		assertEqual(t, "Kind", tt.want, tt.err.Kind())
	}
	msg := (&OutsideRootsError{Path: "/x", Roots: []string{"/w", "/v"}}).Error()
	assertEqual(t, "OutsideRootsError message", "path /x is outside the workspace roots [/w /v]; use a path inside one of them", msg)
}

func TestListDirectory(t *testing.T) {
	fs, root := newFS(t, map[string]string{
		".gitignore":         "*.log\nbuild/\n/top.txt\n!keep.log\nsrc/**/gen\n",
		"a.go":               "",
		"debug.log":          "",
		"keep.log":           "",
		"top.txt":            "",
		"build/out":          "",
		".hidden/x":          "",
		"src/top.txt":        "",
		"src/b.go":           "",
		"src/x/gen/z":        "",
		"src/.gitignore":     "*.tmp\n",
		"src/c.tmp":          "",
		"src/deep/d/e/f.txt": "",
		".git/HEAD":          "",
	})
	haveLink := symlink(t, "/etc", filepath.Join(root, "etc-link"))
	ctx := context.Background()
	rel := func(l *Listing) string {
		var parts []string
		for _, e := range l.Entries {
			s := relSlash(root, e.Path)
			if e.Type == TypeDirectory {
				s += "/"
			} else if e.Type == TypeSymlink {
				s += "@"
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, " ")
	}
	tests := []struct {
		name string
		path string
		opts ListOptions
		want string
	}{
		{"depth 1", ".", ListOptions{}, "a.go build/ debug.log etc-link@ keep.log src/ top.txt"},
		{"hidden", ".", ListOptions{IncludeHidden: true}, ".git/ .gitignore .hidden/ a.go build/ debug.log etc-link@ keep.log src/ top.txt"},
		{"gitignore", ".", ListOptions{RespectGitignore: true, Depth: 3}, "a.go etc-link@ keep.log src/ src/b.go src/deep/ src/deep/d/ src/top.txt src/x/"},
		{"gitignore with hidden", ".", ListOptions{RespectGitignore: true, IncludeHidden: true}, ".gitignore .hidden/ a.go etc-link@ keep.log src/"},
		{"gitignore from a subdirectory", "src", ListOptions{RespectGitignore: true, Depth: 2}, "src/b.go src/deep/ src/deep/d/ src/top.txt src/x/"},
		{"limit", ".", ListOptions{Limit: 3}, "a.go build/ debug.log"},
	}
	for _, tt := range tests {
		if !haveLink {
			tt.want = strings.ReplaceAll(tt.want, " etc-link@", "")
		}
		l, err := fs.ListDirectory(ctx, tt.path, tt.opts)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		assertEqual(t, tt.name, tt.want, rel(l))
		assertEqual(t, tt.name+" truncated", tt.opts.Limit > 0, l.Truncated)
	}
	_, err := fs.ListDirectory(ctx, "a.go", ListOptions{})
	assertEqual(t, "list a file", "not_directory", kindOf(err))
}

func TestGitignoreRules(t *testing.T) {
	tests := []struct {
		pattern string
		path    string
		isDir   bool
		want    bool
	}{
		{"*.log", "a.log", false, true},
		{"*.log", "x/y/a.log", false, true},
		{"*.log", "a.logx", false, false},
		{"build/", "build", true, true},
		{"build/", "build", false, false},
		{"build/", "x/build", true, true},
		{"/top", "top", false, true},
		{"/top", "x/top", false, false},
		{"a/b", "a/b", false, true},
		{"a/b", "x/a/b", false, false},
		{"**/gen", "x/y/gen", true, true},
		{"a/**/z", "a/z", false, true},
		{"a/**/z", "a/b/c/z", false, true},
		{"a/**", "a/b", false, true},
		{"a/**", "a", true, false},
		{"?.go", "a.go", false, true},
		{"[abc].go", "b.go", false, true},
		{"[!abc].go", "b.go", false, false},
		{"[!abc].go", "d.go", false, true},
		{`\#hash`, "#hash", false, true},
		{"trailing   ", "trailing", false, true},
	}
	for _, tt := range tests {
		r, ok := parseIgnoreLine(tt.pattern)
		if !ok {
			t.Errorf("pattern %q did not parse", tt.pattern)
			continue
		}
		assertEqual(t, tt.pattern+" ~ "+tt.path, tt.want, r.match(tt.path, tt.isDir))
	}
	for _, line := range []string{"", "# comment", "   ", "/"} {
		if _, ok := parseIgnoreLine(line); ok {
			t.Errorf("input: %q\nwant: no rule\ngot:  a rule", line)
		}
	}
	stack := ignoreStack{{rules: mustRules("*.log", "!keep.log")}}
	assertEqual(t, "negation", false, stack.ignored("keep.log", false))
	assertEqual(t, "negation other", true, stack.ignored("drop.log", false))
}

func mustRules(lines ...string) []ignoreRule {
	var rs []ignoreRule
	for _, l := range lines {
		r, _ := parseIgnoreLine(l)
		rs = append(rs, r)
	}
	return rs
}
