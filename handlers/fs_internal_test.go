package handlers

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// The results that encode themselves (rpc.JSONAppender) must write what
// encoding/json writes for them, as rpc encodes other results.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	tests := []struct {
		name string
		v    rpc.JSONAppender
	}{
		{"read", &readTextFileResult{Content: "a \"b\" <c> & d\n\te\u2028\x01", TotalLines: 2, Truncated: true, Encoding: "utf-8", Version: "0123456789abcdef"}},
		{"read empty", &readTextFileResult{}},
		{"list", &listDirectoryResult{Entries: []listEntry{
			{Path: "/w/a \"q\".txt", Type: "file", Size: 12, MTime: 1700000000123},
			{Path: "/w/dir", Type: "directory", MTime: -5},
			{Path: "/w/ü\\l", Type: "symlink", Size: 1 << 40},
		}, Truncated: true}},
		{"list empty", &listDirectoryResult{Entries: []listEntry{}}},
		{"list nil", &listDirectoryResult{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(tt.v); err != nil {
				t.Fatal(err)
			}
			want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			if got := tt.v.AppendJSON([]byte("x")); string(got) != "x"+string(want) {
				t.Fatalf("AppendJSON\n got %s\nwant x%s", got, want)
			}
		})
	}
}
