package handlers_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/oh-bridge/oh-bridge/handlers"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/rpc/rpctest"
)

// openWorkspace serves a session whose one root holds files (name →
// content), initialized with the given client capabilities.
func openWorkspace(t *testing.T, files map[string]string, caps map[string]any) (string, *rpctest.Client) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, root, files)
	_, c := serve(t, handlers.Config{Version: "1.0.0", Roots: []string{root}})
	if caps == nil {
		caps = map[string]any{}
	}
	if _, err := c.Initialize(ctxT(t), map[string]any{"capabilities": caps}); err != nil {
		t.Fatal(err)
	}
	return root, c
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readDisk(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// versionOf is the version the protocol promises for s: XXH64 (seed 0) as 16
// hex digits, computed here independently of package workspace.
func versionOf(s string) string {
	return fmt.Sprintf("%016x", xxhash.Sum64String(s))
}

// call is Call with a map result, failing the test on error.
func call(t *testing.T, c *rpctest.Client, method string, params any) map[string]any {
	t.Helper()
	var res map[string]any
	if err := c.Call(ctxT(t), method, params, &res); err != nil {
		t.Fatalf("%s %v: %v", method, params, err)
	}
	return res
}

// wantError checks an error answer: code, data.kind (if kind != "") and a
// fragment of the message. It returns error.data.
func wantError(t *testing.T, err error, code int64, kind, fragment string) map[string]any {
	t.Helper()
	var e *rpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v; want error %d %s %q", err, code, kind, fragment)
	}
	var data map[string]any
	if e.Data != nil {
		json.Unmarshal(*e.Data, &data)
	}
	if e.Code != code || (kind != "" && data["kind"] != kind) || !strings.Contains(e.Message, fragment) {
		t.Fatalf("got error %d %q data %v;\nwant %d kind %q mentioning %q", e.Code, e.Message, data, code, kind, fragment)
	}
	return data
}

func TestReadTextFile(t *testing.T) {
	text := "one\ntwo\nthree\nfour"
	root, c := openWorkspace(t, map[string]string{"a.txt": text}, nil)
	cases := []struct {
		name   string
		params map[string]any
		want   string
		trunc  bool
	}{
		{"whole file, relative path", map[string]any{"path": "a.txt"}, text, false},
		{"whole file, absolute path", map[string]any{"path": filepath.Join(root, "a.txt")}, text, false},
		{"from line 2", map[string]any{"path": "a.txt", "line": 2}, "two\nthree\nfour", false},
		{"a window", map[string]any{"path": "a.txt", "line": 2, "limit": 2}, "two\nthree\n", true},
		{"past the end", map[string]any{"path": "a.txt", "line": 9}, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, c, "fs/read_text_file", tc.params)
			if res["content"] != tc.want || res["truncated"] != tc.trunc || res["totalLines"] != 4.0 ||
				res["encoding"] != "utf-8" || res["version"] != versionOf(text) {
				t.Fatalf("params %v:\ngot %v\nwant content %q truncated %v", tc.params, res, tc.want, tc.trunc)
			}
		})
	}
}

func TestWriteTextFile(t *testing.T) {
	root, c := openWorkspace(t, map[string]string{"a.txt": "old\n"}, nil)
	res := call(t, c, "fs/write_text_file", map[string]any{"path": "new.txt", "content": "hello\n"})
	if res["created"] != true || res["version"] != versionOf("hello\n") || readDisk(t, filepath.Join(root, "new.txt")) != "hello\n" {
		t.Fatalf("create: %v", res)
	}
	res = call(t, c, "fs/write_text_file", map[string]any{"path": "a.txt", "content": "new\n", "expectedVersion": versionOf("old\n")})
	if res["created"] != false || readDisk(t, filepath.Join(root, "a.txt")) != "new\n" {
		t.Fatalf("replace: %v", res)
	}
	err := c.Call(ctxT(t), "fs/write_text_file", map[string]any{"path": "a.txt", "content": "lost\n", "expectedVersion": versionOf("old\n")}, nil)
	data := wantError(t, err, 1008, "stale_version", "nothing was written")
	if data["expectedVersion"] != versionOf("old\n") || data["actualVersion"] != versionOf("new\n") {
		t.Fatalf("stale data %v", data)
	}
	if got := readDisk(t, filepath.Join(root, "a.txt")); got != "new\n" {
		t.Fatalf("a stale write changed the disk: %q", got)
	}
	err = c.Call(ctxT(t), "fs/write_text_file", map[string]any{"path": "x/y/z.txt", "content": ""}, nil)
	wantError(t, err, 1001, "not_found", "createParents")
	call(t, c, "fs/write_text_file", map[string]any{"path": "x/y/z.txt", "content": "", "createParents": true})
	if readDisk(t, filepath.Join(root, "x/y/z.txt")) != "" {
		t.Fatal("createParents did not create the file")
	}
}

func TestListStatMkdirDeleteMove(t *testing.T) {
	root, c := openWorkspace(t, map[string]string{"a.txt": "a", "d/b.txt": "bb", "d/e/c.txt": "ccc", ".hidden": "h", "bin": "\x00\x01"}, nil)
	var list struct {
		Entries []struct {
			Path, Type string
			Size       int64
			Mtime      int64
		}
		Truncated bool
	}
	names := func() string {
		var out []string
		for _, e := range list.Entries {
			rel, _ := filepath.Rel(root, e.Path)
			out = append(out, rel+":"+e.Type)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		params map[string]any
		want   string
		trunc  bool
	}{
		{map[string]any{"path": "."}, "a.txt:file bin:file d:directory", false},
		{map[string]any{"path": root, "depth": 3, "includeHidden": true}, ".hidden:file a.txt:file bin:file d:directory d/b.txt:file d/e:directory d/e/c.txt:file", false},
		{map[string]any{"path": ".", "limit": 2}, "a.txt:file bin:file", true},
	} {
		if err := c.Call(ctxT(t), "fs/list_directory", tc.params, &list); err != nil {
			t.Fatal(err)
		}
		if names() != tc.want || list.Truncated != tc.trunc {
			t.Errorf("list %v:\ngot  %s (truncated %v)\nwant %s (truncated %v)", tc.params, names(), list.Truncated, tc.want, tc.trunc)
		}
	}
	if e := list.Entries[0]; e.Size != 1 || e.Mtime == 0 {
		t.Errorf("entry %+v lacks size or mtime", e)
	}

	st := call(t, c, "fs/stat", map[string]any{"path": "a.txt"})
	if st["exists"] != true || st["type"] != "file" || st["size"] != 1.0 || st["mode"] != "0644" || st["isBinary"] != false || st["version"] != versionOf("a") || st["mtime"] == 0.0 {
		t.Errorf("stat a.txt: %v", st)
	}
	if st := call(t, c, "fs/stat", map[string]any{"path": "bin"}); st["isBinary"] != true || st["version"] != nil {
		t.Errorf("stat bin: %v", st)
	}
	if st := call(t, c, "fs/stat", map[string]any{"path": "nope"}); st["exists"] != false {
		t.Errorf("stat nope: %v", st)
	}

	if err := c.Call(ctxT(t), "fs/mkdir", map[string]any{"path": "m/n", "parents": true}, nil); err != nil {
		t.Fatal(err)
	}
	if st := call(t, c, "fs/stat", map[string]any{"path": "m/n"}); st["type"] != "directory" {
		t.Fatalf("mkdir -p: %v", st)
	}
	if err := c.Call(ctxT(t), "fs/move", map[string]any{"from": "a.txt", "to": "m/n/a.txt"}, nil); err != nil {
		t.Fatal(err)
	}
	if readDisk(t, filepath.Join(root, "m/n/a.txt")) != "a" {
		t.Fatal("move lost the content")
	}
	if err := c.Call(ctxT(t), "fs/delete", map[string]any{"path": "m", "recursive": true}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "m")); !os.IsNotExist(err) {
		t.Fatalf("delete left m behind: %v", err)
	}
}

func TestEditMethods(t *testing.T) {
	root, c := openWorkspace(t, map[string]string{"a.py": "def f():\n    return 1\n"}, nil)
	abs := filepath.Join(root, "a.py")

	view := call(t, c, "edit/view", map[string]any{"path": "a.py"})
	if want := "Here's the result of running `cat -n` on " + abs + ":\n     1\tdef f():\n     2\t    return 1\n     3\t\n"; view["output"] != want || view["version"] != versionOf("def f():\n    return 1\n") {
		t.Fatalf("view:\n%q\nwant\n%q", view["output"], want)
	}
	if view := call(t, c, "edit/view", map[string]any{"path": "a.py", "viewRange": []int{2, -1}}); !strings.Contains(view["output"].(string), "     2\t    return 1") {
		t.Fatalf("view range: %v", view["output"])
	}
	if dir := call(t, c, "edit/view", map[string]any{"path": root}); !strings.HasPrefix(dir["output"].(string), "Here's the files and directories up to 2 levels deep in "+root) {
		t.Fatalf("view dir: %v", dir["output"])
	}

	rep := call(t, c, "edit/str_replace", map[string]any{"path": abs, "oldStr": "return 1", "newStr": "return 2"})
	if !strings.HasPrefix(rep["output"].(string), "The file "+abs+" has been edited.") ||
		rep["diff"] != "--- "+abs+"\n+++ "+abs+"\n@@ -2 +2 @@\n-    return 1\n+    return 2" ||
		rep["version"] != versionOf("def f():\n    return 2\n") || readDisk(t, abs) != "def f():\n    return 2\n" {
		t.Fatalf("str_replace: %v", rep)
	}
	ins := call(t, c, "edit/insert", map[string]any{"path": "a.py", "insertLine": 0, "newStr": "# top"})
	if readDisk(t, abs) != "# top\ndef f():\n    return 2\n" || ins["version"] != versionOf("# top\ndef f():\n    return 2\n") {
		t.Fatalf("insert: %v", ins)
	}
	undo := call(t, c, "edit/undo", map[string]any{"path": "a.py"})
	if undo["content"] != "def f():\n    return 2\n" || readDisk(t, abs) != "def f():\n    return 2\n" ||
		!strings.HasPrefix(undo["output"].(string), "Last edit to "+abs+" undone successfully.") {
		t.Fatalf("undo: %v", undo)
	}
	cr := call(t, c, "edit/create", map[string]any{"path": "pkg/new.py", "fileText": "x = 1\n"})
	if cr["output"] != "File created successfully at: "+filepath.Join(root, "pkg/new.py") || readDisk(t, filepath.Join(root, "pkg/new.py")) != "x = 1\n" {
		t.Fatalf("create: %v", cr)
	}
}

// TestErrors is the error table of the fs/* and edit/* methods, through
// the protocol: codes, kinds and the messages people read.
func TestErrors(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	root, c := openWorkspace(t, map[string]string{
		"a.txt":   "x\nx\n",
		"dir/f":   "f",
		"bin.dat": "ab\x00cd",
		"bad.txt": "ok\xff\xfe",
	}, nil)
	if err := os.Symlink("/etc", filepath.Join(root, "etc-link")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(outside, filepath.Join(root, "out-link"))
	big := filepath.Join(root, "big.txt")
	if f, err := os.Create(big); err == nil {
		f.Truncate(11 << 20)
		f.Close()
	}
	abs := filepath.Join(root, "a.txt")
	rootsText := "[" + root + "]"

	cases := []struct {
		name     string
		method   string
		params   map[string]any
		code     int64
		kind     string
		fragment string
	}{
		// containment
		{"dot-dot", "fs/read_text_file", map[string]any{"path": "../x"}, 1003, "path_outside_workspace", "path ../x is outside the workspace roots " + rootsText},
		{"absolute outside", "fs/read_text_file", map[string]any{"path": "/etc/passwd"}, 1003, "path_outside_workspace", "/etc/passwd is outside"},
		{"symlink to /etc", "fs/read_text_file", map[string]any{"path": "etc-link/passwd"}, 1003, "path_outside_workspace", "etc-link/passwd is outside"},
		{"write through a symlink", "fs/write_text_file", map[string]any{"path": "out-link/new", "content": "x"}, 1003, "path_outside_workspace", "out-link/new"},
		{"stat outside", "fs/stat", map[string]any{"path": outside + "/secret"}, 1003, "path_outside_workspace", "secret"},
		{"list outside", "fs/list_directory", map[string]any{"path": "out-link"}, 1003, "path_outside_workspace", "out-link"},
		{"mkdir outside", "fs/mkdir", map[string]any{"path": "../made"}, 1003, "path_outside_workspace", "../made"},
		{"delete outside", "fs/delete", map[string]any{"path": outside + "/secret"}, 1003, "path_outside_workspace", "secret"},
		{"move out", "fs/move", map[string]any{"from": "a.txt", "to": "../stolen"}, 1003, "path_outside_workspace", "../stolen"},
		{"edit outside", "edit/str_replace", map[string]any{"path": "etc-link/hosts", "oldStr": "a", "newStr": "b"}, 1003, "path_outside_workspace", "etc-link/hosts"},
		{"view outside", "edit/view", map[string]any{"path": "/etc"}, 1003, "path_outside_workspace", "/etc is outside"},
		// files that are not text, or not there
		{"missing", "fs/read_text_file", map[string]any{"path": "nope"}, 1001, "not_found", "nope does not exist"},
		{"a directory", "fs/read_text_file", map[string]any{"path": "dir"}, 1002, "is_directory", "dir is a directory"},
		{"binary", "fs/read_text_file", map[string]any{"path": "bin.dat"}, 1004, "binary", "appears to be binary"},
		{"too large", "fs/read_text_file", map[string]any{"path": "big.txt"}, 1004, "too_large", "11534336 bytes; the limit is 10485760"},
		{"invalid UTF-8", "fs/read_text_file", map[string]any{"path": "bad.txt"}, 1004, "invalid_utf8", "offset 2"},
		{"list a file", "fs/list_directory", map[string]any{"path": "a.txt"}, 1002, "not_directory", "a.txt is not a directory"},
		{"mkdir existing", "fs/mkdir", map[string]any{"path": "dir"}, 1013, "exists", "dir already exists"},
		{"move onto existing", "fs/move", map[string]any{"from": "dir/f", "to": "a.txt"}, 1013, "exists", "pass overwrite"},
		{"delete missing", "fs/delete", map[string]any{"path": "nope"}, 1001, "not_found", "nope does not exist"},
		{"delete non-empty", "fs/delete", map[string]any{"path": "dir"}, 1014, "directory_not_empty", "pass recursive"},
		{"delete a root", "fs/delete", map[string]any{"path": root, "recursive": true}, 1014, "workspace_root", "it is a workspace root"},
		// OHEditor's errors, with its texts
		{"old_str not found", "edit/str_replace", map[string]any{"path": "a.txt", "oldStr": "zz", "newStr": "y"}, 1005, "old_str_not_found",
			"No replacement was performed, old_str `zz` did not appear verbatim in " + abs + "."},
		{"old_str not unique", "edit/str_replace", map[string]any{"path": "a.txt", "oldStr": "x", "newStr": "y"}, 1006, "old_str_not_unique",
			"No replacement was performed. Multiple occurrences of old_str `x` in lines [1, 2]. Please ensure it is unique."},
		{"same strings", "edit/str_replace", map[string]any{"path": "a.txt", "oldStr": "x", "newStr": "x"}, 1017, "new_str_equals_old_str", "must be different"},
		{"stale edit", "edit/str_replace", map[string]any{"path": "a.txt", "oldStr": "x\nx", "newStr": "y", "expectedVersion": "0000"}, 1008, "stale_version", "changed since version 0000"},
		{"nothing to undo", "edit/undo", map[string]any{"path": "a.txt"}, 1007, "no_edit_history", "No edit history found for " + abs + "."},
		{"create existing", "edit/create", map[string]any{"path": "a.txt", "fileText": ""}, 1013, "file_exists", "File already exists at: " + abs + ". Cannot overwrite files using command `create`."},
		{"view missing", "edit/view", map[string]any{"path": "nope"}, 1001, "not_found", "The path " + root + "/nope does not exist. Please provide a valid path."},
		{"edit a directory", "edit/insert", map[string]any{"path": "dir", "insertLine": 0, "newStr": "x"}, 1002, "is_directory", "only the `view` command can be used on directories"},
		{"insert out of range", "edit/insert", map[string]any{"path": "a.txt", "insertLine": 9, "newStr": "x"}, 1017, "invalid_insert_line", "It should be within the range of allowed values: [0, 2]"},
		{"view range", "edit/view", map[string]any{"path": "a.txt", "viewRange": []int{3, 4}}, 1017, "invalid_view_range", "Its first element `3` should be within the range of lines of the file: [1, 2]."},
		{"edit binary", "edit/str_replace", map[string]any{"path": "bin.dat", "oldStr": "a", "newStr": "b"}, 1004, "binary", "File appears to be binary"},
		{"edit too large", "edit/view", map[string]any{"path": "big.txt"}, 1004, "too_large", "File is too large (11.0MB). Maximum allowed size is 10MB."},
		// bad params name the field
		{"no path", "fs/read_text_file", map[string]any{}, rpc.CodeInvalidParams, "invalid_params", `"path"`},
		{"line 0", "fs/read_text_file", map[string]any{"path": "a.txt", "line": 0}, rpc.CodeInvalidParams, "invalid_params", `"line"`},
		{"limit as text", "fs/read_text_file", map[string]any{"path": "a.txt", "limit": "ten"}, rpc.CodeInvalidParams, "invalid_params", `"limit"`},
		{"no content", "fs/write_text_file", map[string]any{"path": "a.txt"}, rpc.CodeInvalidParams, "invalid_params", `"content"`},
		{"depth 0", "fs/list_directory", map[string]any{"path": ".", "depth": 0}, rpc.CodeInvalidParams, "invalid_params", `"depth"`},
		{"no to", "fs/move", map[string]any{"from": "a.txt"}, rpc.CodeInvalidParams, "invalid_params", `"to"`},
		{"no oldStr", "edit/str_replace", map[string]any{"path": "a.txt", "newStr": "y"}, rpc.CodeInvalidParams, "invalid_params", `"oldStr"`},
		{"no insertLine", "edit/insert", map[string]any{"path": "a.txt", "newStr": "y"}, rpc.CodeInvalidParams, "invalid_params", `"insertLine"`},
		{"no newStr", "edit/insert", map[string]any{"path": "a.txt", "insertLine": 1}, rpc.CodeInvalidParams, "invalid_params", `"newStr"`},
		{"no fileText", "edit/create", map[string]any{"path": "b.txt"}, rpc.CodeInvalidParams, "invalid_params", `"fileText"`},
		{"viewRange as text", "edit/view", map[string]any{"path": "a.txt", "viewRange": "1-2"}, rpc.CodeInvalidParams, "invalid_params", `"viewRange"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Call(ctxT(t), tc.method, tc.params, nil)
			data := wantError(t, err, tc.code, tc.kind, tc.fragment)
			switch tc.kind {
			case "too_large":
				if data["size"] != float64(11<<20) {
					t.Errorf("too_large without the size: %v", data)
				}
			case "old_str_not_unique":
				if fmt.Sprint(data["lines"]) != "[1 2]" {
					t.Errorf("old_str_not_unique without the lines: %v", data)
				}
			case "path_outside_workspace":
				if fmt.Sprint(data["roots"]) != "["+root+"]" {
					t.Errorf("path_outside_workspace without the roots: %v", data)
				}
			}
		})
	}
	if got := readDisk(t, abs); got != "x\nx\n" {
		t.Fatalf("a failed call changed a.txt: %q", got)
	}
}

// fakeEditor is the client side of open documents: it holds buffers and
// applies the bridge's workspace/applyEdit requests to them.
type fakeEditor struct {
	mu      sync.Mutex
	buffers map[string]string // uri → text
	edits   []json.RawMessage
	refuse  bool
}

func (f *fakeEditor) onRequest(method string, params json.RawMessage) (any, *rpc.Error) {
	if method != "workspace/applyEdit" {
		return nil, &rpc.Error{Code: rpc.CodeMethodNotFound, Message: method}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.edits = append(f.edits, params)
	if f.refuse {
		return map[string]any{"applied": false, "failureReason": "the buffer is read-only"}, nil
	}
	type edit struct {
		Range struct {
			Start, End struct{ Line, Character int }
		}
		NewText string
	}
	var p struct {
		Edit struct {
			DocumentChanges []struct {
				TextDocument struct{ URI string }
				Edits        []edit
			}
			Changes map[string][]edit
		}
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpc.Error{Code: rpc.CodeInvalidParams, Message: err.Error()}
	}
	apply := func(uri string, edits []edit) {
		text := f.buffers[uri]
		for _, e := range edits {
			s, en := utf16Offset(text, e.Range.Start.Line, e.Range.Start.Character), utf16Offset(text, e.Range.End.Line, e.Range.End.Character)
			text = text[:s] + e.NewText + text[en:]
		}
		f.buffers[uri] = text
	}
	for _, dc := range p.Edit.DocumentChanges {
		apply(dc.TextDocument.URI, dc.Edits)
	}
	for uri, edits := range p.Edit.Changes {
		apply(uri, edits)
	}
	return map[string]any{"applied": true}, nil
}

// utf16Offset is an independent, slow LSP position → byte offset ("\n"
// line ends only), for checking the bridge's ranges.
func utf16Offset(text string, line, char int) int {
	off := 0
	for range line {
		off += strings.IndexByte(text[off:], '\n') + 1
	}
	units := 0
	for i, r := range text[off:] {
		if units >= char || r == '\n' {
			return off + i
		}
		units++
		if r >= 0x10000 {
			units++
		}
	}
	return len(text)
}

func TestOpenDocuments(t *testing.T) {
	disk := "first 🙂 line\nsecond line\n"
	buffer := "first 🙂 line\nsecond line, unsaved\n"
	t.Run("applyEdit without documentChanges gets the changes form", func(t *testing.T) {
		root, c := openWorkspace(t, map[string]string{"doc.txt": disk}, map[string]any{"workspace": map[string]any{"applyEdit": true}})
		p := filepath.Join(root, "doc.txt")
		fe := &fakeEditor{buffers: map[string]string{uri(p): buffer}}
		c.OnRequest = fe.onRequest
		c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri(p), "languageId": "plaintext", "version": 3, "text": buffer}})
		call(t, c, "edit/str_replace", map[string]any{"path": "doc.txt", "oldStr": "🙂 line", "newStr": "😀 row"})
		fe.mu.Lock()
		defer fe.mu.Unlock()
		var sent struct {
			Edit map[string]json.RawMessage
		}
		json.Unmarshal(fe.edits[0], &sent)
		if _, ok := sent.Edit["documentChanges"]; ok || sent.Edit["changes"] == nil {
			t.Fatalf("sent %s, want only the changes form", fe.edits[0])
		}
		if got := fe.buffers[uri(p)]; got != "first 😀 row\nsecond line, unsaved\n" {
			t.Fatalf("buffer %q", got)
		}
	})
	t.Run("applyEdit declared", func(t *testing.T) {
		root, c := openWorkspace(t, map[string]string{"doc.txt": disk}, map[string]any{"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}}})
		p := filepath.Join(root, "doc.txt")
		fe := &fakeEditor{buffers: map[string]string{uri(p): buffer}}
		c.OnRequest = fe.onRequest
		c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri(p), "languageId": "plaintext", "version": 3, "text": buffer}})

		if res := call(t, c, "fs/read_text_file", map[string]any{"path": "doc.txt"}); res["content"] != buffer || res["version"] != versionOf(buffer) {
			t.Fatalf("read of an open document: %v", res)
		}
		res := call(t, c, "edit/str_replace", map[string]any{"path": "doc.txt", "oldStr": "🙂 line", "newStr": "😀 row"})
		want := "first 😀 row\nsecond line, unsaved\n"
		if res["version"] != versionOf(want) {
			t.Fatalf("str_replace on a buffer: %v", res)
		}
		fe.mu.Lock()
		got, edits := fe.buffers[uri(p)], len(fe.edits)
		var sent map[string]any
		json.Unmarshal(fe.edits[0], &sent)
		fe.mu.Unlock()
		if got != want || edits != 1 {
			t.Fatalf("the editor's buffer is %q after %d edits, want %q", got, edits, want)
		}
		dc := sent["edit"].(map[string]any)["documentChanges"].([]any)[0].(map[string]any)
		if td := dc["textDocument"].(map[string]any); td["uri"] != uri(p) || td["version"] != 3.0 {
			t.Fatalf("applyEdit names %v, want the open document at version 3", td)
		}
		// A minimal edit: only the emoji changed (UTF-16 column 6, 2 units).
		if e := fmt.Sprint(dc["edits"]); e != "[map[newText:😀 row range:map[end:map[character:13 line:0] start:map[character:6 line:0]]]]" {
			t.Fatalf("edit %s", e)
		}
		if got := readDisk(t, p); got != disk {
			t.Fatalf("the disk changed under an open document: %q", got)
		}
		if res := call(t, c, "fs/read_text_file", map[string]any{"path": p}); res["content"] != want {
			t.Fatalf("read after the edit: %v", res["content"])
		}

		fe.mu.Lock()
		fe.refuse = true
		fe.mu.Unlock()
		err := c.Call(ctxT(t), "fs/write_text_file", map[string]any{"path": "doc.txt", "content": "x"}, nil)
		wantError(t, err, 1008, "buffer_edit_rejected", "the editor did not apply the edit to the open document")

		c.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri(p)}})
		if res := call(t, c, "fs/read_text_file", map[string]any{"path": "doc.txt"}); res["content"] != disk {
			t.Fatalf("read after didClose: %v", res["content"])
		}
	})
	t.Run("without applyEdit, writes go to disk", func(t *testing.T) {
		root, c := openWorkspace(t, map[string]string{"doc.txt": disk}, nil)
		p := filepath.Join(root, "doc.txt")
		c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri(p), "languageId": "plaintext", "version": 1, "text": buffer}})
		call(t, c, "edit/str_replace", map[string]any{"path": p, "oldStr": "unsaved", "newStr": "saved"})
		want := "first 🙂 line\nsecond line, saved\n"
		if got := readDisk(t, p); got != want {
			t.Fatalf("disk %q, want %q", got, want)
		}
	})
	t.Run("incremental changes in UTF-16 positions", func(t *testing.T) {
		root, c := openWorkspace(t, map[string]string{"doc.txt": disk}, nil)
		p := filepath.Join(root, "doc.txt")
		c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri(p), "languageId": "plaintext", "version": 1, "text": "a🙂b\r\nline two\n"}})
		c.Notify("textDocument/didChange", map[string]any{
			"textDocument": map[string]any{"uri": uri(p), "version": 2},
			"contentChanges": []map[string]any{
				{"range": map[string]any{"start": map[string]int{"line": 0, "character": 3}, "end": map[string]int{"line": 0, "character": 4}}, "text": "B"},
				{"range": map[string]any{"start": map[string]int{"line": 1, "character": 5}, "end": map[string]int{"line": 1, "character": 99}}, "text": "2"},
				{"range": map[string]any{"start": map[string]int{"line": 9, "character": 0}, "end": map[string]int{"line": 9, "character": 0}}, "text": "end"},
			},
		})
		if res := call(t, c, "fs/read_text_file", map[string]any{"path": "doc.txt"}); res["content"] != "a🙂B\r\nline 2\nend" {
			t.Fatalf("after ranged changes: %q", res["content"])
		}
		c.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri(p), "version": 3},
			"contentChanges": []map[string]any{{"text": "full text"}},
		})
		if res := call(t, c, "fs/read_text_file", map[string]any{"path": "doc.txt"}); res["content"] != "full text" {
			t.Fatalf("after a full change: %q", res["content"])
		}
	})
}

// TestConcurrentEditsOfOneFile sends 50 str_replace calls at once, half
// with a relative and half with an absolute path: per-path ordering must
// treat both spellings as one file, and none may be lost.
func TestConcurrentEditsOfOneFile(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "line %02d: old\n", i)
	}
	root, c := openWorkspace(t, map[string]string{"many.txt": b.String()}, nil)
	abs := filepath.Join(root, "many.txt")
	var chans []<-chan rpctest.Message
	for i := range 50 {
		path := "many.txt"
		if i%2 == 1 {
			path = abs
		}
		_, ch, err := c.Start("edit/str_replace", map[string]any{"path": path, "oldStr": fmt.Sprintf("line %02d: old", i), "newStr": fmt.Sprintf("line %02d: new", i)})
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	for i, ch := range chans {
		select {
		case m := <-ch:
			if m.Error != nil {
				t.Fatalf("edit %d: %v", i, m.Error)
			}
		case <-ctxT(t).Done():
			t.Fatal("edits did not finish")
		}
	}
	got := readDisk(t, abs)
	if strings.Count(got, ": new\n") != 50 || strings.Contains(got, "old") {
		t.Fatalf("edits lost:\n%s", got)
	}
}

type change struct{ Path, Type, Source string }

// awaitChanges waits until fs/did_change notifications have named every
// change in want (in one batch or several).
func awaitChanges(t *testing.T, c *rpctest.Client, want ...change) {
	t.Helper()
	missing := map[change]bool{}
	for _, w := range want {
		missing[w] = true
	}
	for len(missing) > 0 {
		_, err := c.AwaitNotification(ctxT(t), "fs/did_change", func(raw json.RawMessage) bool {
			var p struct{ Changes []change }
			json.Unmarshal(raw, &p)
			hit := false
			for _, ch := range p.Changes {
				if missing[ch] {
					delete(missing, ch)
					hit = true
				}
			}
			return hit
		})
		if err != nil {
			t.Fatalf("fs/did_change never named %v: %v", missing, err)
		}
	}
}

func TestWatcherNotifies(t *testing.T) {
	root, c := openWorkspace(t, map[string]string{"keep.txt": "k", "ext.txt": "e"}, nil)
	var st struct{ State string }
	if err := c.Call(ctxT(t), "fs/watch_status", map[string]any{"wait": true}, &st); err != nil || st.State != "watching" {
		t.Fatalf("watch status %v %v", st, err)
	}
	j := func(name string) string { return filepath.Join(root, name) }

	// The agent's changes, through the protocol.
	call(t, c, "fs/write_text_file", map[string]any{"path": "agent.txt", "content": "1"})
	awaitChanges(t, c, change{j("agent.txt"), "created", "agent"})
	call(t, c, "edit/str_replace", map[string]any{"path": "keep.txt", "oldStr": "k", "newStr": "K"})
	awaitChanges(t, c, change{j("keep.txt"), "changed", "agent"})
	call(t, c, "fs/move", map[string]any{"from": "agent.txt", "to": "moved.txt"})
	awaitChanges(t, c, change{j("agent.txt"), "deleted", "agent"}, change{j("moved.txt"), "created", "agent"})
	call(t, c, "fs/delete", map[string]any{"path": "moved.txt"})
	awaitChanges(t, c, change{j("moved.txt"), "deleted", "agent"})

	// Everyone else's.
	os.WriteFile(j("human.txt"), []byte("h"), 0o644)
	awaitChanges(t, c, change{j("human.txt"), "created", "external"})
	os.WriteFile(j("ext.txt"), []byte("changed"), 0o644)
	awaitChanges(t, c, change{j("ext.txt"), "changed", "external"})
	os.Rename(j("human.txt"), j("renamed.txt"))
	awaitChanges(t, c, change{j("human.txt"), "deleted", "external"}, change{j("renamed.txt"), "created", "external"})
	os.Remove(j("renamed.txt"))
	awaitChanges(t, c, change{j("renamed.txt"), "deleted", "external"})
	os.MkdirAll(j("sub/deeper"), 0o755)
	os.WriteFile(j("sub/deeper/x.txt"), nil, 0o644)
	awaitChanges(t, c, change{j("sub/deeper/x.txt"), "created", "external"})
}

func TestFileCapabilities(t *testing.T) {
	_, c := serve(t, handlers.Config{Roots: []string{t.TempDir()}})
	res, err := c.Initialize(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Capabilities struct {
			FS               map[string]any `json:"fs"`
			Edit             map[string]any `json:"edit"`
			TextDocumentSync map[string]any `json:"textDocumentSync"`
		}
	}
	json.Unmarshal(res, &r)
	if r.Capabilities.FS["watch"] != true || r.Capabilities.Edit["maxUndoPerFile"] != 10.0 || r.Capabilities.TextDocumentSync["change"] != 2.0 {
		t.Fatalf("capabilities %s", res)
	}
}
