package engine

import (
	"github.com/oh-bridge/oh-bridge/pytext"
)

// Truncation is the one policy for a command's output too long for the
// agent: its head and its tail are kept, with a notice between them, all
// counted in code points as Python counts a str. The engine cuts a
// record's Output with it once; the dialects choose its numbers and words
// (OpenHands' MAX_CMD_OUTPUT_SIZE and notices), and V1's terminal tool
// applies the same policy to the whole observation text, as OpenHands
// does. The terminal's own head-and-tail buffer (shellint) only bounds
// memory, far above these limits.
type Truncation struct {
	// Limit is the most code points kept; 0 keeps everything.
	Limit int
	// Notice replaces the middle.
	Notice string
	// NoticeOutside keeps Limit/2 code points at each end and adds the
	// notice (V0's truncate_content); otherwise the notice counts toward
	// the limit and the result is exactly Limit long, the head getting the
	// odd code point (the SDK's maybe_truncate).
	NoticeOutside bool
}

// Cut returns s, cut to the policy, and whether it was cut.
func (t Truncation) Cut(s string) (string, bool) {
	if t.Limit <= 0 || len(s) <= t.Limit || pytext.Len(s) <= t.Limit {
		return s, false
	}
	if !t.NoticeOutside {
		return pytext.MiddleTruncate(s, t.Limit, t.Notice), true
	}
	half := t.Limit / 2
	return pytext.Head(s, half) + t.Notice + pytext.Tail(s, half), true
}
