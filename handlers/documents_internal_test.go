package handlers

import "testing"

// TestMinimalEditRoundTrip: the edit sent to the editor, applied at the
// UTF-16 positions it names, turns the old text into the new one, and
// replaces no more than it must.
func TestMinimalEditRoundTrip(t *testing.T) {
	cases := []struct {
		name, old, new string
		wantNewText    string
	}{
		{"one word", "hello world\n", "hello there\n", "there"},
		{"append", "a\nb", "a\nb\nc", "\nc"},
		{"delete a line", "a\nb\nc\n", "a\nc\n", ""},
		{"emoji to emoji (shared leading bytes)", "x🙂y", "x😀y", "😀"},
		{"after a surrogate pair", "🙂🙂ab", "🙂🙂aX", "X"},
		{"CRLF kept whole at the start", "a\r\nb", "a\nb", ""},
		{"CRLF kept whole at the end", "a\r\nb\r\n", "a\r\nc\r\n", "c"},
		{"lone CR line ends", "a\rb\rc", "a\rB\rc", "B"},
		{"from empty", "", "new text", "new text"},
		{"to empty", "old text", "", ""},
		{"equal", "same", "same", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := minimalEdit(tc.old, tc.new)
			start, end := offsetOf(tc.old, e.Range.Start), offsetOf(tc.old, e.Range.End)
			got := tc.old[:start] + e.NewText + tc.old[end:]
			if got != tc.new {
				t.Fatalf("old %q new %q: edit %+v gives %q", tc.old, tc.new, e, got)
			}
			if tc.wantNewText != "" && e.NewText != tc.wantNewText {
				t.Errorf("old %q new %q: newText %q, want %q", tc.old, tc.new, e.NewText, tc.wantNewText)
			}
		})
	}
}

func TestPositions(t *testing.T) {
	text := "a🙂b\r\nsecond\rthird\nlast"
	cases := []struct {
		offset int
		want   position
	}{
		{0, position{0, 0}},
		{1, position{0, 1}},
		{5, position{0, 3}}, // after the emoji: 2 UTF-16 units
		{6, position{0, 4}},
		{8, position{1, 0}}, // after "\r\n"
		{15, position{2, 0}},
		{21, position{3, 0}},
		{len(text), position{3, 4}},
	}
	for _, tc := range cases {
		if got := positionOf(text, tc.offset); got != tc.want {
			t.Errorf("positionOf(%d) = %+v, want %+v", tc.offset, got, tc.want)
		}
		if got := offsetOf(text, tc.want); got != tc.offset {
			t.Errorf("offsetOf(%+v) = %d, want %d", tc.want, got, tc.offset)
		}
	}
	// Past the end of a line is the line's end; past the last line, the end.
	if got := offsetOf(text, position{1, 99}); got != 14 {
		t.Errorf("character past the line end: %d, want 14", got)
	}
	if got := offsetOf(text, position{9, 0}); got != len(text) {
		t.Errorf("line past the end: %d, want %d", got, len(text))
	}
	// Inside a surrogate pair: before the character.
	if got := offsetOf(text, position{0, 2}); got != 1 {
		t.Errorf("inside a surrogate pair: %d, want 1", got)
	}
}
