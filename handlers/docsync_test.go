package handlers_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// TestIncrementalChangeOfAnAgentEdit: an agent's edit of an open document
// goes to the editor as workspace/applyEdit, and the editor then reports
// it back as a change of its buffer, a range and its text. Whether that
// report arrives before the editor answers applyEdit or after (when the
// bridge already holds the edited text), the edit must land once.
func TestIncrementalChangeOfAnAgentEdit(t *testing.T) {
	const buffer = "first 🙂 line\r\nsecond line\r\n"
	const want = "first 🙂 line\r\nsecond line, appended\r\n"
	for _, reportFirst := range []bool{false, true} {
		name := "reported after the answer"
		if reportFirst {
			name = "reported before the answer"
		}
		t.Run(name, func(t *testing.T) {
			root, c := openWorkspace(t, map[string]string{"doc.txt": "on disk\n"},
				map[string]any{"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}}})
			p := filepath.Join(root, "doc.txt")
			fe := &fakeEditor{buffers: map[string]string{uri(p): buffer}}
			// The change the editor reports: the edit it was sent, as VS
			// Code reports an applied edit.
			report := func(params json.RawMessage) {
				var e struct {
					Edit struct {
						DocumentChanges []struct {
							Edits []struct {
								Range   json.RawMessage
								NewText string
							}
						}
					}
				}
				json.Unmarshal(params, &e)
				edit := e.Edit.DocumentChanges[0].Edits[0]
				c.Notify("textDocument/didChange", map[string]any{
					"textDocument":   map[string]any{"uri": uri(p), "version": 2},
					"contentChanges": []map[string]any{{"range": edit.Range, "text": edit.NewText}},
				})
			}
			var sent json.RawMessage
			c.OnRequest = func(method string, params json.RawMessage) (any, *rpc.Error) {
				sent = params
				if reportFirst {
					report(params)
				}
				return fe.onRequest(method, params)
			}
			c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri(p), "languageId": "plaintext", "version": 1, "text": buffer}})
			call(t, c, "edit/str_replace", map[string]any{"path": "doc.txt", "oldStr": "second line", "newStr": "second line, appended"})
			if !reportFirst {
				report(sent)
			}
			if res := call(t, c, "fs/read_text_file", map[string]any{"path": "doc.txt"}); res["content"] != want {
				t.Fatalf("after the editor reported the agent's edit (%s):\ngot  %q\nwant %q", sent, res["content"], want)
			}
			// The next keystroke applies to the same text.
			c.Notify("textDocument/didChange", map[string]any{
				"textDocument": map[string]any{"uri": uri(p), "version": 3},
				"contentChanges": []map[string]any{{"range": map[string]any{
					"start": map[string]int{"line": 0, "character": 13}, "end": map[string]int{"line": 0, "character": 13}}, "text": "!"}},
			})
			if res := call(t, c, "fs/read_text_file", map[string]any{"path": "doc.txt"}); res["content"] != "first 🙂 line!\r\nsecond line, appended\r\n" {
				t.Fatalf("after a keystroke: %q", res["content"])
			}
		})
	}
}
