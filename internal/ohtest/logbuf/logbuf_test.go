package logbuf

import (
	"testing"
	"time"
)

// TestContainsWaitsForTheWrite: a line written after the wait began is
// found, and a line never written is not.
func TestContainsWaitsForTheWrite(t *testing.T) {
	var l Buffer
	l.Write([]byte("first line\n"))
	found := make(chan bool)
	go func() { found <- l.Contains("later line", time.Minute) }()
	// Writes that do not carry it wake the wait and leave it waiting.
	for i := 0; i < 100; i++ {
		l.Write([]byte("noise\n"))
	}
	select {
	case <-found:
		t.Fatal("Contains answered before the line was written")
	default:
	}
	l.Write([]byte("a later line\n"))
	if !<-found {
		t.Fatal("Contains did not find the line written while it waited")
	}
	if l.Contains("never written", 10*time.Millisecond) {
		t.Fatal("Contains found a line never written")
	}
}
