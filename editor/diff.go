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
	// The lines are text.split("\n"), but only the differing middle is
	// split: the common leading and trailing lines are counted on the
	// bytes, so an edit of a 1 MiB file does not cut it into 20,000
	// strings. pre and suf are what comparing the split lines from each
	// end gives (leading lines first, trailing ones after them).
	na := strings.Count(oldText, "\n") + 1
	nb := strings.Count(newText, "\n") + 1
	common := commonPrefix(oldText, newText)
	start := strings.LastIndexByte(oldText[:common], '\n') + 1 // line pre's offset, in both
	pre := strings.Count(oldText[:start], "\n")
	for pre < na && pre < nb {
		la, lb := lineFrom(oldText, start), lineFrom(newText, start)
		if la != lb {
			break
		}
		pre++
		start += len(la) + 1
	}
	suf := 0
	endA, endB := len(oldText), len(newText) // where the last unmatched line ends
	if pre < na && pre < nb {
		// Jump over the lines wholly inside the common tail of the bytes
		// after line pre's start: each "\n" in it begins one.
		tail := commonSuffix(oldText[start:], newText[start:])
		region := oldText[len(oldText)-tail:]
		if q := strings.IndexByte(region, '\n'); q >= 0 {
			suf = strings.Count(region[q:], "\n")
			endA, endB = len(oldText)-tail+q, len(newText)-tail+q
		}
	}
	for suf < na-pre && suf < nb-pre {
		sa := strings.LastIndexByte(oldText[:endA], '\n') + 1
		sb := strings.LastIndexByte(newText[:endB], '\n') + 1
		if oldText[sa:endA] != newText[sb:endB] {
			break
		}
		suf++
		endA, endB = sa-1, sb-1
	}
	a := middleLines(oldText, start, endA, na-pre-suf)
	b := middleLines(newText, start, endB, nb-pre-suf)
	return writeHunks(path, a, b, pre)
}

// writeHunks diffs a and b, the differing middle lines of the two texts,
// which start at line pre of each, and writes the unified diff with zero
// context lines.
func writeHunks(path string, a, b []string, pre int) string {
	diffs := lineDiff(a, b)
	var out strings.Builder
	out.WriteString("--- " + path + "\n+++ " + path)
	i, j := pre, pre // next line in a and b
	i1, j1 := -1, -1 // start of the open hunk, -1 when none
	closeHunk := func() {
		if i1 < 0 {
			return
		}
		out.WriteString("\n@@ -" + unifiedRange(i1, i) + " +" + unifiedRange(j1, j) + " @@")
		for _, l := range a[i1-pre : i-pre] {
			out.WriteString("\n" + pytext.RStrip("-"+l))
		}
		for _, l := range b[j1-pre : j-pre] {
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

// commonPrefix returns the length of the longest common prefix of a and b,
// comparing 4 KiB blocks at a time (memequal is vectorized) before bytes.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && a[i:i+4096] == b[i:i+4096] {
		i += 4096
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is commonPrefix from the ends.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && a[len(a)-i-4096:len(a)-i] == b[len(b)-i-4096:len(b)-i] {
		i += 4096
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// lineFrom returns the line of s that starts at offset i, without its "\n".
func lineFrom(s string, i int) string {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return s[i : i+j]
	}
	return s[i:]
}

// middleLines returns the n lines of s[from:to], split at "\n"; none when
// n is 0.
func middleLines(s string, from, to, n int) []string {
	if n == 0 {
		return nil
	}
	return strings.Split(s[from:to], "\n")
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
