package updates

import (
	"fmt"
	"strings"
	"testing"
)

// TestOutputBufKeepsHeadAndTail: a running command's card keeps its
// first and its last lines within the limit, and says how much it left
// out between them.
func TestOutputBufKeepsHeadAndTail(t *testing.T) {
	const limit = 1000
	var o outputBuf
	var all strings.Builder
	for i := range 500 {
		line := fmt.Sprintf("line %03d\n", i)
		all.WriteString(line)
		o.write(line, limit)
	}
	got := o.String()
	if !strings.HasPrefix(got, "line 000\nline 001\n") || !strings.HasSuffix(got, "line 498\nline 499\n") {
		t.Fatalf("the card lost an end:\n%s", got)
	}
	if len(got) > limit+100 || !strings.Contains(got, " bytes not shown]\n") {
		t.Fatalf("%d bytes kept of %d with a limit of %d, or no notice:\n%s", len(got), all.Len(), limit, got)
	}
	if o.Len() != all.Len() {
		t.Errorf("Len() = %d, want all %d bytes counted", o.Len(), all.Len())
	}
	// The parts are whole lines, and the notice counts what it replaced.
	head, rest, _ := strings.Cut(got, "[… ")
	var dropped int
	fmt.Sscanf(rest, "%d", &dropped)
	_, tail, _ := strings.Cut(rest, "]\n")
	if head+all.String()[len(head):len(head)+dropped]+tail != all.String() {
		t.Errorf("head, the %d bytes not shown, and tail do not make the output", dropped)
	}
}

func TestOutputBufRewritesALine(t *testing.T) {
	var o outputBuf
	for _, s := range []string{"start\n", "10%", "\r20%", "\r30%\r\n", "done\n"} {
		o.write(s, 1000)
	}
	if got := o.String(); got != "start\n30%\ndone\n" {
		t.Fatalf("got %q", got)
	}
}
