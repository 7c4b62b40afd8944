//go:build unix

package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/engine"
)

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
