package handlers_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/handlers"
)

// BenchmarkFilesInProcess runs the three FileRatios operations (bench/)
// through handlers and rpc over an in-memory pipe, so a CPU profile shows
// the bridge's side and the test client's decoding in one process.
func BenchmarkFilesInProcess(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		if i == 8000 {
			sb.WriteString("    value = MARK_000000\n")
		}
		fmt.Fprintf(&sb, "    line_%06d = compute(%d)  # some ordinary text\n", i, i)
	}
	big := filepath.Join(root, "big.py")
	os.WriteFile(big, []byte(sb.String()), 0o644)
	dir := filepath.Join(root, "many")
	os.Mkdir(dir, 0o755)
	for i := range 10_000 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-%05d.txt", i)), []byte("x"), 0o644)
	}
	_, c := serveLogged(b, handlers.Config{Version: "1.0.0", Roots: []string{root}}, nil)
	ctx := context.Background()
	if _, err := c.Initialize(ctx, map[string]any{"capabilities": map[string]any{}}); err != nil {
		b.Fatal(err)
	}
	b.Run("read_text_file", func(b *testing.B) {
		for b.Loop() {
			var res struct{ Content string }
			if err := c.Call(ctx, "fs/read_text_file", map[string]any{"path": big}, &res); err != nil || len(res.Content) < 1<<20 {
				b.Fatal(err, len(res.Content))
			}
		}
	})
	b.Run("str_replace", func(b *testing.B) {
		seq := 0
		for b.Loop() {
			if err := c.Call(ctx, "edit/str_replace", map[string]any{"path": big,
				"oldStr": fmt.Sprintf("MARK_%06d", seq), "newStr": fmt.Sprintf("MARK_%06d", seq+1)}, nil); err != nil {
				b.Fatal(err)
			}
			seq++
		}
	})
	b.Run("list_directory", func(b *testing.B) {
		for b.Loop() {
			var lr struct{ Entries []struct{ Path string } }
			if err := c.Call(ctx, "fs/list_directory", map[string]any{"path": dir}, &lr); err != nil || len(lr.Entries) != 10_000 {
				b.Fatal(err, len(lr.Entries))
			}
		}
	})
}
