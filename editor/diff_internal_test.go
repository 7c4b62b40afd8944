package editor

import (
	"math/rand/v2"
	"strings"
	"testing"
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

// unifiedDiffSplitAll is UnifiedDiff as it was before issue 13: it splits
// both texts whole to find the common ends (the hunks are written as
// UnifiedDiff writes them).
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
	return writeHunks(path, a[pre:len(a)-suf], b[pre:len(b)-suf], pre)
}
