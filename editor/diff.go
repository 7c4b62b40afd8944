package editor

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/oh-bridge/oh-bridge/pytext"
)

// UnifiedDiff returns the diff OpenHands puts in FileEditObservation.diff
// (openhands_aci.utils.diff.get_diff): difflib.unified_diff over
// text.split("\n") with zero context lines, path in both headers, each line
// right-stripped, joined with "\n" and no trailing newline; "" when the
// texts are equal.
//
// Lines are matched with go-diff (Myers) instead of difflib's
// Ratcliff/Obershelp, so where several minimal diffs exist (a duplicated
// line inserted next to its twin) the hunk boundaries may differ from
// Python's; for the usual single contiguous edit they are identical.
func UnifiedDiff(path, oldText, newText string) string {
	if oldText == newText {
		return ""
	}
	a := strings.Split(oldText, "\n")
	b := strings.Split(newText, "\n")
	// Trimming the common ends first keeps an edit of a large file cheap;
	// go-diff would trim them too, after hashing every line.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	diffs := lineDiff(a[pre:len(a)-suf], b[pre:len(b)-suf])

	var out strings.Builder
	out.WriteString("--- " + path + "\n+++ " + path)
	i, j := pre, pre // next line in a and b
	i1, j1 := -1, -1 // start of the open hunk, -1 when none
	closeHunk := func() {
		if i1 < 0 {
			return
		}
		out.WriteString("\n@@ -" + unifiedRange(i1, i) + " +" + unifiedRange(j1, j) + " @@")
		for _, l := range a[i1:i] {
			out.WriteString("\n" + pytext.RStrip("-"+l))
		}
		for _, l := range b[j1:j] {
			out.WriteString("\n" + pytext.RStrip("+"+l))
		}
		i1, j1 = -1, -1
	}
	for _, d := range diffs {
		n := utf8.RuneCountInString(d.Text) // one rune per line
		if d.Type == diffmatchpatch.DiffEqual {
			closeHunk()
			i += n
			j += n
			continue
		}
		if i1 < 0 {
			i1, j1 = i, j
		}
		if d.Type == diffmatchpatch.DiffDelete {
			i += n
		} else {
			j += n
		}
	}
	closeHunk()
	return out.String()
}

// lineDiff diffs two line slices with go-diff, each distinct line mapped to
// one rune. Runes must be valid (go-diff compares texts as strings in its
// cleanup passes), which allows about 1.1 million distinct lines; past that
// everything becomes a single hunk.
func lineDiff(a, b []string) []diffmatchpatch.Diff {
	ids := make(map[string]rune, len(a))
	conv := func(lines []string) ([]rune, bool) {
		rs := make([]rune, len(lines))
		for k, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = rune(len(ids) + 1)
				if id >= 0xD800 {
					id += 0x800 // skip the surrogate block
				}
				if id > utf8.MaxRune {
					return nil, false
				}
				ids[l] = id
			}
			rs[k] = id
		}
		return rs, true
	}
	ra, okA := conv(a)
	rb, okB := conv(b)
	if okA && okB {
		return diffmatchpatch.New().DiffMainRunes(ra, rb, false)
	}
	// The caller trimmed the common ends, so all that is left differs.
	return []diffmatchpatch.Diff{
		{Type: diffmatchpatch.DiffDelete, Text: strings.Repeat("x", len(a))},
		{Type: diffmatchpatch.DiffInsert, Text: strings.Repeat("x", len(b))},
	}
}

// unifiedRange is difflib's _format_range_unified for lines [start, stop).
func unifiedRange(start, stop int) string {
	length := stop - start
	beginning := start + 1
	switch length {
	case 1:
		return strconv.Itoa(beginning)
	case 0:
		beginning--
	}
	return strconv.Itoa(beginning) + "," + strconv.Itoa(length)
}
