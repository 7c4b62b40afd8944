package pytext

import (
	"strings"
	"testing"
)

func TestRepr(t *testing.T) {
	// Each want is what CPython 3.12 prints for repr(input).
	for _, c := range []struct{ in, want string }{
		{"", `''`},
		{"ls -la", `'ls -la'`},
		{"it's", `"it's"`},
		{`say "hi" it's`, `'say "hi" it\'s'`},
		{`{"a": 1}`, `'{"a": 1}'`},
		{"a\\b", `'a\\b'`},
		{"tab\there\nnew\rret", `'tab\there\nnew\rret'`},
		{"\x00\x1b\x7f", `'\x00\x1b\x7f'`},
		{"caf\u00e9 \u4e16", "'caf\u00e9 \u4e16'"},
		{"\u00a0\u200b\u2028", `'\xa0\u200b\u2028'`},
		{"\U0001F600", "'\U0001F600'"},
		{"\U000E0001", `'\U000e0001'`},
	} {
		if got := Repr(c.in); got != c.want {
			t.Errorf("Repr(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestFloat(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{{5, "5.0"}, {0.5, "0.5"}, {0, "0.0"}, {1e-5, "1e-05"}, {1.5e16, "1.5e+16"}, {12.25, "12.25"}} {
		if got := Float(c.in); got != c.want {
			t.Errorf("Float(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestMiddleTruncate(t *testing.T) {
	notice := "<N>"
	for _, c := range []struct {
		content string
		limit   int
		want    string
	}{
		{"abcdef", 10, "abcdef"},
		{"abcdef", 0, "abcdef"},
		{"abcdefghij", 8, "abc<N>ij"},  // available 5: head 3, tail 2
		{"abcdefghij", 9, "abc<N>hij"}, // available 6: head 3, tail 3
		{"abcdefghij", 3, "<N>"},
		{"abcdefghij", 2, "<N"},
		{"ééééééé", 6, "éé<N>é"}, // code points, not bytes
	} {
		if got := MiddleTruncate(c.content, c.limit, notice); got != c.want {
			t.Errorf("MiddleTruncate(%q, %d) = %q, want %q", c.content, c.limit, got, c.want)
		}
		if c.limit > 0 && Len(c.content) > c.limit && Len(MiddleTruncate(c.content, c.limit, notice)) != c.limit {
			t.Errorf("MiddleTruncate(%q, %d) is not %d code points long", c.content, c.limit, c.limit)
		}
	}
	long := strings.Repeat("x", 40000)
	if got := MiddleTruncate(long, 30000, notice); Len(got) != 30000 || !strings.Contains(got, notice) {
		t.Errorf("a 40000-character text truncated to 30000 is %d long", Len(got))
	}
}

func TestStrip(t *testing.T) {
	if got := Strip("\x1c \t hi \x1f\n"); got != "hi" {
		t.Errorf("Strip = %q", got)
	}
	if got := Tail("héllo", 3); got != "llo" {
		t.Errorf("Tail = %q", got)
	}
	if got := Head("héllo", 2); got != "hé" {
		t.Errorf("Head = %q", got)
	}
}
