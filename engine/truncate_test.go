package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/engine"
)

func TestTruncationCut(t *testing.T) {
	sdk := engine.Truncation{Limit: 10, Notice: "<n>"}
	v0 := engine.Truncation{Limit: 10, Notice: "<n>", NoticeOutside: true}
	cases := []struct {
		name string
		t    engine.Truncation
		in   string
		want string
		cut  bool
	}{
		{"short stays", sdk, "abcdefghij", "abcdefghij", false},
		{"no limit keeps all", engine.Truncation{}, strings.Repeat("x", 100), strings.Repeat("x", 100), false},
		// 10 - 3 = 7 kept: the head gets the odd one.
		{"sdk: exactly the limit", sdk, "abcdefghijkl", "abcd<n>jkl", true},
		{"v0: half of the limit at each end, and the notice", v0, "abcdefghijkl", "abcde<n>hijkl", true},
		// Code points, not bytes: 12 of them, 24 bytes.
		{"code points", sdk, strings.Repeat("é", 12), strings.Repeat("é", 4) + "<n>" + strings.Repeat("é", 3), true},
		{"multibyte under the limit in code points", sdk, strings.Repeat("é", 10), strings.Repeat("é", 10), false},
		{"a notice as long as the limit", engine.Truncation{Limit: 2, Notice: "<n>"}, "abcdef", "<n", true},
	}
	for _, c := range cases {
		got, cut := c.t.Cut(c.in)
		if got != c.want || cut != c.cut {
			t.Errorf("%s: Cut(%q) = %q, %v; want %q, %v", c.name, c.in, got, cut, c.want, c.cut)
		}
	}
}

// TestRecord: the record a request returns carries what every face
// renders: the terminal, the exit code only for a completed command, and
// the output cut once by the request's policy.
func TestRecord(t *testing.T) {
	h := newHarness(t)
	policy := engine.Truncation{Limit: 100, Notice: "[cut]"}
	res := h.run(t, engine.Request{Command: "head -c 1000 /dev/zero | tr '\\0' x; echo", Truncation: policy})
	want, _ := policy.Cut(strings.Repeat("x", 1000))
	wantDone(t, res, 0, want)
	if !res.Truncated || res.Running() || res.TerminalID == "" || res.TerminalID != h.sh.Terminal().ID() {
		t.Fatalf("record %+v: want truncated, not running, terminal %q", res, h.sh.Terminal().ID())
	}
	res = h.run(t, engine.Request{Command: "echo started; sleep 30", NoOutputTimeout: 200 * time.Millisecond})
	if res.Outcome != engine.NoChange || res.ExitCode != -1 || !res.Running() || res.Truncated || res.Output != "started" {
		t.Fatalf("a command still running: %+v; want no change, exit -1, running, output \"started\"", res)
	}
	res = h.run(t, engine.Request{Command: "echo other"})
	if res.Outcome != engine.NotExecuted || res.ExitCode != -1 || !res.Running() || res.TerminalID == "" {
		t.Fatalf("a command refused: %+v", res)
	}
	res = h.run(t, engine.Request{Command: "C-c", IsInput: true, Keys: []byte{3}})
	if res.Outcome != engine.Completed || res.Running() || res.ExitCode != 130 {
		t.Fatalf("the command interrupted: %+v", res)
	}
}
