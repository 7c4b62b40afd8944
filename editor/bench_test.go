package editor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/editor"
)

// BenchmarkStrReplace1MiB edits the middle of a 1 MiB file: read, match,
// atomic write with version check, snippet and diff.
func BenchmarkStrReplace1MiB(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, "line %06d: the quick brown fox jumps over the lazy dog\n", i)
	}
	content := sb.String()
	mid := len(content) / 2
	content = content[:mid] + "NEEDLE-A\n" + content[mid:]
	ed, _, root := newEditor(b, editor.Options{}, map[string]string{"big.txt": content})
	p := root + "/big.txt"
	ctx := context.Background()
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		from, to := "NEEDLE-A", "NEEDLE-B"
		if i%2 == 1 {
			from, to = to, from
		}
		if _, err := ed.StrReplace(ctx, p, from, to, ""); err != nil {
			b.Fatal(err)
		}
	}
}
