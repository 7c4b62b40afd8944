package agentserver

import (
	"strings"
	"testing"
)

// TestFallbackTitle: a conversation is named as the agent-server names
// one without an LLM: its first message trimmed, and past 50 characters
// cut to 47 and "...".
func TestFallbackTitle(t *testing.T) {
	long := strings.Repeat("é", 60)
	for _, c := range []struct{ in, want string }{
		{"  Fix the notes, then say done.\n", "Fix the notes, then say done."},
		{strings.Repeat("a", 50), strings.Repeat("a", 50)},
		{strings.Repeat("a", 51), strings.Repeat("a", 47) + "..."},
		{long, strings.Repeat("é", 47) + "..."},
		{" \n ", ""},
	} {
		if got := fallbackTitle(c.in); got != c.want {
			t.Errorf("fallbackTitle(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
