package engine_test

import (
	"strings"
	"testing"

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
