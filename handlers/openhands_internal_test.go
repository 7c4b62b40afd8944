package handlers

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/ohactions"
)

// TestExecuteActionResultEncoding: the result encodes itself byte for byte
// as encoding/json encodes it (through Observation.MarshalJSON, HTML
// characters unescaped), for every kind of value an observation holds.
func TestExecuteActionResultEncoding(t *testing.T) {
	user, empty := "root<&>", ""
	cause := int64(7)
	yes, no := true, false
	obs := []*ohactions.Observation{
		{ID: 1, Timestamp: time.Date(2026, 11, 23, 12, 0, 0, 123456000, time.Local), Source: "agent",
			Message: "Command `echo hi` executed with exit code 0.", Cause: &cause, Type: "run", Content: "hi",
			Extras: ohactions.Object{{Key: "command", Value: "echo hi"}, {Key: "metadata", Value: ohactions.Object{
				{Key: "exit_code", Value: 0}, {Key: "pid", Value: -1}, {Key: "username", Value: &user},
				{Key: "hostname", Value: (*string)(nil)}, {Key: "working_dir", Value: &empty},
				{Key: "suffix", Value: "\n[The command completed with exit code 0.]"}}}, {Key: "hidden", Value: false}},
			Success: &yes},
		{Type: "error", Content: "bad \x00\x1f \"quoted\" \\ <tag> & \u2028\u2029 \xff é 日本", Success: &no},
		{Type: "read", Extras: ohactions.Object{
			{Key: "float", Value: 1.5}, {Key: "whole", Value: 10.0}, {Key: "big", Value: 1e21}, {Key: "tiny", Value: 1e-7},
			{Key: "list", Value: []any{"a", 1, nil, map[string]any{"k": "<v>"}}}, {Key: "int64", Value: int64(-42)},
			{Key: "nil", Value: nil}, {Key: "empty", Value: ohactions.Object{}}, {Key: "bytes", Value: []string{"x"}}}},
		{Type: "run"},
	}
	for i, o := range obs {
		r := &executeActionResult{Observation: o}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := r.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Errorf("observation %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
