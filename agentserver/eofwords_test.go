package agentserver

import (
	"fmt"
	"io"
	"testing"
)

// TestClosedConnectionWords: a socket the agent-server closed without a
// word (it was killed) is said in words, not as the websocket library's
// "failed to get reader: failed to read frame header: EOF".
func TestClosedConnectionWords(t *testing.T) {
	err := &UnreachableError{URL: "http://127.0.0.1:1", Err: fmt.Errorf("failed to get reader: %w", fmt.Errorf("failed to read frame header: %w", io.EOF))}
	want := "cannot reach the OpenHands agent-server at http://127.0.0.1:1: the connection closed without a word: the agent-server stopped, restarted or dropped it (the bridge reconnects once it answers again)"
	if got := err.Error(); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
