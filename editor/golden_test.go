package editor_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/editor"
	"github.com/oh-bridge/oh-bridge/workspace"
)

var update = flag.Bool("update", false, "rewrite the output/diff/error/kind sections of fixtures/editor/*.txtar (review the diff against the research doc!)")

// placeholder stands for the temporary workspace root in fixtures, because
// OHEditor's texts contain absolute paths.
const placeholder = "/workspace"

// The golden files are txtar archives:
//
//	# comment (where in the research doc the expected text comes from)
//	-- options --        require_absolute_paths (optional)
//	-- dir:sub/deep --   a directory to create
//	-- file:a.py --      a file to create
//	-- prereq --         a request run first, which must succeed
//	-- request --        the request under test, OHEditor's JSON argument names
//	-- output --         expected Result.Output
//	-- diff --           expected Result.Diff
//	-- error --          expected ToolError.Message
//	-- kind --           expected ToolError.Kind
//	-- want:a.py --      expected file content afterwards
//
// Every section's content ends with one newline that is not part of the value.
type section struct{ name, body string }

func parseArchive(data string) (comment string, sections []section) {
	lines := strings.SplitAfter(data, "\n")
	var cur *section
	for _, l := range lines {
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --\n") {
			sections = append(sections, section{name: strings.TrimSuffix(strings.TrimPrefix(l, "-- "), " --\n")})
			cur = &sections[len(sections)-1]
			continue
		}
		if cur == nil {
			comment += l
		} else {
			cur.body += l
		}
	}
	for i := range sections {
		sections[i].body = strings.TrimSuffix(sections[i].body, "\n")
	}
	return comment, sections
}

func formatArchive(comment string, sections []section) string {
	var b strings.Builder
	b.WriteString(comment)
	for _, s := range sections {
		b.WriteString("-- " + s.name + " --\n" + s.body + "\n")
	}
	return b.String()
}

type jsonRequest struct {
	Command    string  `json:"command"`
	Path       string  `json:"path"`
	FileText   *string `json:"file_text"`
	ViewRange  []int   `json:"view_range"`
	OldStr     *string `json:"old_str"`
	NewStr     *string `json:"new_str"`
	InsertLine *int    `json:"insert_line"`
}

func (j jsonRequest) request(root string) editor.Request {
	path := j.Path
	if path == placeholder || strings.HasPrefix(path, placeholder+"/") {
		path = root + strings.TrimPrefix(path, placeholder)
	}
	return editor.Request{Command: j.Command, Path: path, FileText: j.FileText, ViewRange: j.ViewRange,
		OldStr: j.OldStr, NewStr: j.NewStr, InsertLine: j.InsertLine}
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("../fixtures/editor/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			comment, sections := parseArchive(string(data))
			dir := t.TempDir()
			roots, err := workspace.NewRoots([]string{dir})
			if err != nil {
				t.Fatal(err)
			}
			root := roots.First()
			var opts editor.Options
			var reqs []jsonRequest
			for _, s := range sections {
				switch {
				case s.name == "options":
					opts.RequireAbsolutePaths = strings.Contains(s.body, "require_absolute_paths")
				case strings.HasPrefix(s.name, "dir:"):
					mustMkdir(t, filepath.Join(root, strings.TrimPrefix(s.name, "dir:")))
				case strings.HasPrefix(s.name, "file:"):
					mustWrite(t, filepath.Join(root, strings.TrimPrefix(s.name, "file:")), s.body)
				case s.name == "prereq" || s.name == "request":
					var r jsonRequest
					if err := json.Unmarshal([]byte(s.body), &r); err != nil {
						t.Fatalf("%s: bad request %q: %v", s.name, s.body, err)
					}
					reqs = append(reqs, r)
				}
			}
			ed := editor.New(workspace.New(roots, workspace.Options{}), opts)
			ctx := context.Background()
			for _, r := range reqs[:len(reqs)-1] {
				if _, err := ed.Execute(ctx, r.request(root)); err != nil {
					t.Fatalf("prereq %+v: %v", r, err)
				}
			}
			last := reqs[len(reqs)-1]
			res, err := ed.Execute(ctx, last.request(root))
			got := map[string]string{}
			if err != nil {
				var te *editor.ToolError
				if !errors.As(err, &te) {
					t.Fatalf("request %+v: want a *ToolError, got %T: %v", last, err, err)
				}
				got["error"] = strings.ReplaceAll(te.Message, root, placeholder)
				got["kind"] = te.Kind
			} else {
				got["output"] = strings.ReplaceAll(res.Output, root, placeholder)
				got["diff"] = strings.ReplaceAll(res.Diff, root, placeholder)
			}
			if *update {
				for i, s := range sections {
					if v, ok := got[s.name]; ok {
						sections[i].body = v
					}
				}
				if err := os.WriteFile(file, []byte(formatArchive(comment, sections)), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			checked := false
			for _, s := range sections {
				switch {
				case s.name == "output" || s.name == "diff" || s.name == "error" || s.name == "kind":
					checked = true
					g, ok := got[s.name]
					if !ok {
						t.Errorf("request %s: expected a %s, but got %v (err %v)", lastJSON(last), s.name, got, err)
						continue
					}
					assertEqual(t, lastJSON(last), s.body, g)
				case strings.HasPrefix(s.name, "want:"):
					content, rerr := os.ReadFile(filepath.Join(root, strings.TrimPrefix(s.name, "want:")))
					if rerr != nil {
						t.Fatal(rerr)
					}
					assertEqual(t, lastJSON(last)+" (file content)", s.body, string(content))
				}
			}
			if !checked {
				t.Fatal("golden file checks nothing")
			}
		})
	}
}

func lastJSON(r jsonRequest) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// assertEqual is the one assertion helper: it prints the input, and want
// and got quoted, so invisible differences (tabs, trailing newlines) show.
func assertEqual[T comparable](t *testing.T, input string, want, got T) {
	t.Helper()
	if want != got {
		t.Errorf("input: %s\nwant: %#v\ngot:  %#v", input, want, got)
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	mustMkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}
