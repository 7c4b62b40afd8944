package handlers

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
)

// The incremental sync of open documents: textDocument/didChange ranges
// (UTF-16 positions) applied to the text the editor last reported.

func rng(l1, c1, l2, c2 int) *textRange {
	return &textRange{Start: position{l1, c1}, End: position{l2, c2}}
}

func ranged(l1, c1, l2, c2 int, text string) contentChange {
	return contentChange{Range: rng(l1, c1, l2, c2), Text: text}
}

// TestIncrementalChanges: each row opens a document, then sends its
// events one after the other, as one didChange each.
func TestIncrementalChanges(t *testing.T) {
	cases := []struct {
		name   string
		open   string
		events [][]contentChange
		want   string
	}{
		{"type a word", "hello\n", [][]contentChange{
			{ranged(0, 5, 0, 5, " ")}, {ranged(0, 6, 0, 6, "w")}, {ranged(0, 7, 0, 7, "o")},
		}, "hello wo\n"},
		{"backspace", "hello\n", [][]contentChange{{ranged(0, 4, 0, 5, "")}, {ranged(0, 3, 0, 4, "")}}, "hel\n"},
		{"after an emoji, two UTF-16 units", "a🙂b\n", [][]contentChange{{ranged(0, 3, 0, 4, "B")}}, "a🙂B\n"},
		{"replace an emoji", "a🙂b\n", [][]contentChange{{ranged(0, 1, 0, 3, "😀")}}, "a😀b\n"},
		{"inside a surrogate pair stays before it", "a🙂b", [][]contentChange{{ranged(0, 2, 0, 2, "x")}}, "ax🙂b"},
		{"two-byte UTF-8, one UTF-16 unit", "naïve café\n", [][]contentChange{{ranged(0, 9, 0, 10, "e")}}, "naïve cafe\n"},
		{"CRLF lines", "one\r\ntwo\r\nthree\r\n", [][]contentChange{{ranged(1, 0, 1, 3, "2")}, {ranged(2, 5, 2, 5, "!")}}, "one\r\n2\r\nthree!\r\n"},
		{"character past a CRLF line's end", "one\r\ntwo\r\n", [][]contentChange{{ranged(0, 99, 0, 99, "+")}}, "one+\r\ntwo\r\n"},
		{"join CRLF lines", "one\r\ntwo\r\n", [][]contentChange{{ranged(0, 3, 1, 0, " ")}}, "one two\r\n"},
		{"split a line with CRLF", "onetwo\r\n", [][]contentChange{{ranged(0, 3, 0, 3, "\r\n")}, {ranged(1, 3, 1, 3, "!")}}, "one\r\ntwo!\r\n"},
		{"lone CR line ends", "a\rb\rc", [][]contentChange{{ranged(1, 0, 1, 1, "B")}, {ranged(2, 1, 2, 1, "!")}}, "a\rB\rc!"},
		{"a CR and an inserted LF become one line end", "a\rb", [][]contentChange{
			{ranged(1, 0, 1, 0, "\n")}, // "a\r\nb": line 1 is now "b"
			{ranged(1, 1, 1, 1, "!")},
		}, "a\r\nb!"},
		{"several changes in one event, last first (VS Code's multi-cursor order)", "x1\nx2\nx3\n", [][]contentChange{
			{ranged(2, 0, 2, 0, "> "), ranged(1, 0, 1, 0, "> "), ranged(0, 0, 0, 0, "> ")},
		}, "> x1\n> x2\n> x3\n"},
		{"several changes in one event, each on the text the one before left", "abc\n", [][]contentChange{
			{ranged(0, 0, 0, 0, "1\n"), ranged(1, 0, 1, 1, "A"), ranged(0, 1, 1, 0, "")},
		}, "1Abc\n"},
		{"at the end of the file, after its last newline", "a\nb\n", [][]contentChange{{ranged(2, 0, 2, 0, "c")}, {ranged(2, 1, 2, 1, "d")}}, "a\nb\ncd"},
		{"at the end of the file, without a last newline", "a\nb", [][]contentChange{{ranged(1, 1, 1, 1, "c")}, {ranged(1, 2, 1, 2, "\n")}}, "a\nbc\n"},
		{"a line past the last is the end", "a\nb", [][]contentChange{{ranged(9, 0, 9, 0, "!")}, {ranged(7, 3, 8, 0, "?")}}, "a\nb!?"},
		{"delete to the end", "keep\ndrop\ndrop", [][]contentChange{{ranged(0, 4, 99, 0, "")}}, "keep"},
		{"into an empty document", "", [][]contentChange{{ranged(0, 0, 0, 0, "new")}, {ranged(0, 3, 0, 3, "\n")}}, "new\n"},
		{"a whole text, then ranges on it", "old", [][]contentChange{
			{ranged(0, 0, 0, 3, "lost"), {Text: "new\ntext"}, ranged(1, 0, 1, 0, "the ")},
		}, "new\nthe text"},
		{"end before start is swapped", "abcdef", [][]contentChange{{ranged(0, 4, 0, 2, "-")}}, "ab-ef"},
		{"backwards far, then forwards", "l0\nl1\nl2\nl3\nl4\nl5\n", [][]contentChange{
			{ranged(5, 2, 5, 2, "!")}, {ranged(4, 0, 4, 0, "!")}, {ranged(1, 0, 1, 0, "!")}, {ranged(5, 0, 5, 0, "!")},
		}, "l0\n!l1\nl2\nl3\n!l4\n!l5!\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			docs := &openDocuments{byPath: map[string]docRef{}}
			docs.open("/p", docRef{uri: "file:///p", version: 1}, tc.open)
			var got string
			for i, ev := range tc.events {
				text, ok, err := docs.change("/p", docRef{uri: "file:///p", version: 2 + i}, ev)
				if !ok || err != nil {
					t.Fatalf("event %d: ok %v, error %v", i, ok, err)
				}
				got = text
			}
			if got != tc.want {
				t.Fatalf("opened %q, changes %v:\ngot  %q\nwant %q", tc.open, tc.events, got, tc.want)
			}
		})
	}
}

func TestIncrementalChangeRefusals(t *testing.T) {
	docs := &openDocuments{byPath: map[string]docRef{}}
	if _, ok, err := docs.change("/p", docRef{version: 1}, []contentChange{ranged(0, 0, 0, 0, "x")}); ok || err != errNotOpen {
		t.Fatalf("a range into a document never opened: ok %v, error %v", ok, err)
	}
	// A whole text opens it, as the overlay treats it.
	if text, ok, err := docs.change("/p", docRef{version: 2}, []contentChange{{Text: "ab"}}); !ok || err != nil || text != "ab" {
		t.Fatalf("a whole text: %q %v %v", text, ok, err)
	}
	if _, ok, _ := docs.change("/p", docRef{version: 1}, []contentChange{ranged(0, 0, 0, 0, "old")}); ok {
		t.Fatal("an older version was applied")
	}
	if text, ok, _ := docs.change("/p", docRef{version: 3}, []contentChange{ranged(0, 2, 0, 2, "c")}); !ok || text != "abc" {
		t.Fatalf("after the stale change: %q", text)
	}
	docs.drop("/p")
	if _, ok, err := docs.change("/p", docRef{version: 4}, []contentChange{ranged(0, 0, 0, 0, "x")}); ok || err != errNotOpen {
		t.Fatalf("a range into a closed document: ok %v, error %v", ok, err)
	}
}

// refApply is the reference: the text split into lines at "\r\n", "\r"
// and "\n", positions counted in UTF-16 code units from each line's start,
// no marks, no shortcuts.
func refApply(text string, c contentChange) string {
	type line struct{ start, end int } // end: before the line end
	var lines []line
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			lines = append(lines, line{start, i})
			start = i + 1
		case '\r':
			lines = append(lines, line{start, i})
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	lines = append(lines, line{start, len(text)})
	offset := func(p position) int {
		if p.Line >= len(lines) {
			return len(text)
		}
		l := lines[p.Line]
		units := 0
		for i, r := range text[l.start:l.end] {
			n := len(utf16.Encode([]rune{r}))
			if units+n > p.Character {
				return l.start + i
			}
			units += n
		}
		return l.end
	}
	s, e := offset(c.Range.Start), offset(c.Range.End)
	if e < s {
		s, e = e, s
	}
	return text[:s] + c.Text + text[e:]
}

// TestIncrementalChangesMatchReference: random events of random changes
// on texts of mixed line ends, multi-byte characters and emoji, through
// the marks, against the reference.
func TestIncrementalChangesMatchReference(t *testing.T) {
	pieces := []string{"a", "bc", "é", "🙂", " ", "\n", "\r\n", "\r", "xyz", "ü🙂"}
	randText := func(r *rand.Rand, n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		return sb.String()
	}
	randPos := func(r *rand.Rand, text string) position {
		lines := strings.Count(text, "\n") + strings.Count(text, "\r") + 1
		return position{Line: r.IntN(lines + 1), Character: r.IntN(8)}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for doc := range 300 {
		text := randText(r, r.IntN(40))
		docs := &openDocuments{byPath: map[string]docRef{}}
		docs.open("/p", docRef{version: 0}, text)
		for ev := range 20 {
			var changes []contentChange
			want := text
			for range 1 + r.IntN(4) {
				c := contentChange{Text: randText(r, r.IntN(3))}
				start := randPos(r, want)
				end := start
				if r.IntN(3) == 0 {
					end = randPos(r, want)
				} else if r.IntN(2) == 0 {
					end.Character += r.IntN(3)
				}
				c.Range = &textRange{Start: start, End: end}
				changes = append(changes, c)
				want = refApply(want, c)
			}
			got, ok, err := docs.change("/p", docRef{version: ev + 1}, changes)
			if !ok || err != nil {
				t.Fatalf("doc %d event %d: ok %v error %v", doc, ev, ok, err)
			}
			if got != want {
				t.Fatalf("doc %d event %d: text %q, changes %s:\ngot  %q\nwant %q", doc, ev, text, describe(changes), got, want)
			}
			text = got
		}
	}
}

func describe(changes []contentChange) string {
	var sb strings.Builder
	for _, c := range changes {
		fmt.Fprintf(&sb, "[%d:%d-%d:%d %q]", c.Range.Start.Line, c.Range.Start.Character, c.Range.End.Line, c.Range.End.Character, c.Text)
	}
	return sb.String()
}

// BenchmarkKeystroke5MB: one character typed in the middle of a 5 MB
// document, per op: the cost is the new text's copy, not a search of it.
func BenchmarkKeystroke5MB(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 5<<20; i++ {
		fmt.Fprintf(&sb, "    line_%06d = compute(%d)  # some ordinary text\n", i, i)
	}
	lines := strings.Count(sb.String(), "\n")
	docs := &openDocuments{byPath: map[string]docRef{}}
	docs.open("/p", docRef{version: 0}, sb.String())
	b.SetBytes(int64(sb.Len()))
	for i := 0; b.Loop(); i++ {
		pos := position{Line: lines / 2, Character: 4 + i}
		if _, ok, _ := docs.change("/p", docRef{version: i + 1}, []contentChange{{Range: &textRange{pos, pos}, Text: "x"}}); !ok {
			b.Fatal("not applied")
		}
	}
}
