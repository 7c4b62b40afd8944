package handlers_test

import (
	"regexp"
	"strings"
	"testing"
)

// osc633 finds every OSC 633 sequence in a mirrored stream.
var osc633 = regexp.MustCompile("\x1b\\]633;([^\x07\x1b]*)(?:\x07|\x1b\\\\)")

// mirrorShapes are the 633 sequences a client may receive, in VS Code's own
// form: nothing of the bridge's nonce or sequence numbers.
var mirrorShapes = regexp.MustCompile(`^(A|B|C|D;-?\d+|P;Cwd=[^;]*|E;[^;]*)$`)

// TestTerminalMirrorShowsTheCommand checks what a streaming client (the
// editor's mirrored terminal) receives for one command, in bash and zsh:
// the prompt, OSC 633;E with the command line escaped as VS Code reads it,
// the command text as if typed, its output, and markers without the nonce.
// The submission machinery never reaches it.
func TestTerminalMirrorShowsTheCommand(t *testing.T) {
	t.Parallel()
	for _, shell := range shells(t) {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			s := startTerms(t, true)
			id := s.open(map[string]any{"shell": shell})
			awaitState(t, s.c, func(st didState) bool { return st.TerminalID == id && st.State == "idle" })
			cmd := `echo "x;y\z" && echo e2e-output-$((6*7))`
			r := s.run(map[string]any{"terminalId": id, "command": cmd})
			exited(t, r, 0)
			awaitState(t, s.c, func(st didState) bool { return st.TerminalID == id && st.State == "idle" && st.Seq == r.Seq })
			var all strings.Builder
			for _, ch := range drainOutput(t, s.c, id) {
				all.WriteString(ch.Data)
			}
			got := all.String()
			wantE := "\x1b]633;E;" + `echo "x\x3by\\z" && echo e2e-output-$((6*7))` + "\x07"
			typed := wantE + cmd + "\r\n\x1b]633;C\x07x;y\\z\r\ne2e-output-42\r\n"
			if !strings.Contains(got, typed) {
				t.Errorf("the mirror lacks E, the command text, C and the output in order:\nwant %q\nin   %q", typed, got)
			}
			for _, want := range []string{"\x1b]633;D;0\x07", "\x1b]633;P;Cwd=" + s.root + "\x07", "\x1b]633;A\x07"} {
				if !strings.Contains(got, want) {
					t.Errorf("the mirror lacks %q: %q", want, got)
				}
			}
			for _, m := range osc633.FindAllStringSubmatch(got, -1) {
				if !mirrorShapes.MatchString(m[1]) {
					t.Errorf("a 633 sequence the client should not see: %q", m[0])
				}
			}
			if strings.Contains(got, "__br_") {
				t.Errorf("the submission machinery reached the client: %q", got)
			}
		})
	}
}
