package ohtest

import (
	"encoding/json"
	"io"
	"testing"
	"time"
)

// JSONMessages reads the JSON values r carries, one after another (an MCP
// server's stdout), and returns next: the next one, within the time
// given. The test fails when what (the server, in words) closes r first
// or says nothing in time.
func JSONMessages(t testing.TB, r io.Reader, what string, within time.Duration) (next func() map[string]any) {
	msgs := make(chan map[string]any, 100)
	go func() {
		dec := json.NewDecoder(r)
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				close(msgs)
				return
			}
			msgs <- m
		}
	}()
	return func() map[string]any {
		t.Helper()
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatalf("%s closed its output", what)
			}
			return m
		case <-time.After(within):
			t.Fatalf("no message from %s in %s", what, within)
		}
		return nil
	}
}
