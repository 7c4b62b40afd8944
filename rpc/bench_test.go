package rpc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// benchRWC reads pre-encoded frames; replies go through a pipe to a frame
// reader that closes done after want replies.
type benchRWC struct {
	io.Reader
	*io.PipeWriter
}

func (benchRWC) Close() error { return nil }

func countReplies(r io.Reader, want int, done chan<- struct{}) {
	br := bufio.NewReader(r)
	for range want {
		if _, err := rpc.ReadFrame(br); err != nil {
			panic(err)
		}
	}
	close(done)
	io.Copy(io.Discard, br)
}

// BenchmarkDispatch measures the CPU cost of one request through framing,
// validation, dispatch and reply, without pipes or a client: the ceiling
// on pipelined throughput.
func BenchmarkDispatch(b *testing.B) {
	for _, class := range []rpc.Class{rpc.Inline, rpc.Concurrent} {
		b.Run(class.String(), func(b *testing.B) {
			var in bytes.Buffer
			init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`
			fmt.Fprintf(&in, "Content-Length: %d\r\n\r\n%s", len(init), init)
			for i := range b.N {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m","params":{"path":"a/b.go"}}`, i+1)
				fmt.Fprintf(&in, "Content-Length: %d\r\n\r\n%s", len(body), body)
			}
			pr, pw := io.Pipe()
			done := make(chan struct{})
			go countReplies(pr, b.N+1, done)
			srv := rpc.NewServer(rpc.Options{Methods: map[string]rpc.Method{
				"initialize": {Class: rpc.Inline, Handle: func(context.Context, json.RawMessage) (any, error) { return map[string]any{}, nil }},
				"m": {Class: class, Handle: func(_ context.Context, p json.RawMessage) (any, error) {
					var v struct{ Path string }
					if err := rpc.DecodeParams(p, &v); err != nil {
						return nil, err
					}
					return map[string]any{"version": "x", "roots": []string{v.Path}, "pid": 1}, nil
				}},
			}})
			b.ResetTimer()
			// After the frames the input blocks instead of ending, so no
			// reply is lost to an end-of-input shutdown.
			blocked, _ := io.Pipe()
			go srv.Serve(context.Background(), rpc.NewStream(benchRWC{io.MultiReader(&in, blocked), pw}, nil, nil))
			<-done
		})
	}
}
