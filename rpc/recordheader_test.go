package rpc_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/oh-bridge/oh-bridge/rpc"
)

func TestReadRecording(t *testing.T) {
	header := rpc.Header{Framing: rpc.FramingLines, Command: "oh-bridge acp", Meta: json.RawMessage(`{"config":""}`)}
	in := `{"t":0,"dir":"in","msg":{"jsonrpc":"2.0","id":1,"method":"initialize"}}` + "\n"
	for _, c := range []struct {
		name, file  string
		wantHeader  *rpc.Header
		wantRecords int
		wantErr     string
	}{
		{"no header: an editor face recording", in + in, nil, 2, ""},
		{"a header", string(header.Line()) + in, &header, 1, ""},
		{"a header and nothing recorded", string(header.Line()), &header, 0, ""},
		{"line numbers count the header", string(header.Line()) + in + `{"dir":"sideways"}` + "\n", nil, 0, "recording line 3"},
		{"an unknown framing", `{"recording":{"framing":"smoke-signals"}}` + "\n" + in, nil, 0, `framing "smoke-signals"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, records, err := rpc.ReadRecording(strings.NewReader(c.file))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gotH, _ := json.Marshal(h)
			wantH, _ := json.Marshal(c.wantHeader)
			if string(gotH) != string(wantH) || len(records) != c.wantRecords {
				t.Fatalf("header %s and %d records, want %s and %d\n%s", gotH, len(records), wantH, c.wantRecords, c.file)
			}
		})
	}
}

// TestReplayLines replays a line-framed recording against a server on a
// line stream, and Observe sees the server's messages.
func TestReplayLines(t *testing.T) {
	srv := rpc.NewServer(rpc.Options{Methods: map[string]rpc.Method{
		"initialize": {Class: rpc.Inline, Handle: func(context.Context, json.RawMessage) (any, error) { return map[string]any{"name": "lines"}, nil }},
	}})
	a, b := net.Pipe()
	go srv.Serve(context.Background(), rpc.NewLineStream(a, nil, nil))
	records := []rpc.Record{
		{Dir: "in", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)},
		{Dir: "out", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{"name":"lines"}}`)},
		{Dir: "in", Raw: ptr("{broken")},
		{Dir: "out", Msg: json.RawMessage(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid JSON at byte 2: invalid character 'b' looking for beginning of object key string"}}`)},
	}
	var mu sync.Mutex
	var seen []string
	res, err := rpc.Replay(records, b, rpc.ReplayOptions{
		Framing: rpc.FramingLines,
		Observe: func(m json.RawMessage) { mu.Lock(); seen = append(seen, string(m)); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mismatches) > 0 || res.Compared != 2 {
		var sb strings.Builder
		res.Report(&sb)
		t.Fatalf("%d compared:\n%s", res.Compared, sb.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || !strings.Contains(seen[0], `"lines"`) {
		t.Fatalf("Observe saw %q, want the two answers", seen)
	}
}

func ptr[T any](v T) *T { return &v }
