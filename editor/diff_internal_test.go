package editor

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/oh-bridge/oh-bridge/pytext"
)

// UnifiedDiff counts the common leading and trailing lines on the bytes;
// it must give what splitting both texts whole and comparing lines gave
// (unifiedDiffSplitAll, the earlier implementation), duplicates, missing
// final newlines and empty texts included.
func TestUnifiedDiffMatchesSplittingWholeTexts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 13))
	pieces := []string{"a", "b", "a\n", "\n", "\n\n", "x y", "b\n", "", "c\n"}
	text := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return sb.String()
	}
	for i := range 20000 {
		old := text(rng.IntN(12))
		var nu string
		switch i % 3 {
		case 0:
			nu = text(rng.IntN(12))
		case 1: // one edit in the middle
			at := rng.IntN(len(old) + 1)
			cut := min(len(old), at+rng.IntN(4))
			nu = old[:at] + text(rng.IntN(3)) + old[cut:]
		default: // lines inserted or removed at the ends
			nu = text(rng.IntN(3)) + old + text(rng.IntN(3))
		}
		if i%50 == 0 { // past the 4 KiB blocks commonPrefix compares
			pad := strings.Repeat("line of padding\n", 300+rng.IntN(300))
			old, nu = pad+old+pad, pad+nu+pad[rng.IntN(40):]
		}
		if got, want := UnifiedDiff("f", old, nu), unifiedDiffSplitAll("f", old, nu); got != want {
			t.Fatalf("UnifiedDiff(%q, %q)\n got %q\nwant %q", old, nu, got, want)
		}
	}
}

// unifiedDiffSplitAll is UnifiedDiff as it was before issue 13.
func unifiedDiffSplitAll(path, oldText, newText string) string {
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
