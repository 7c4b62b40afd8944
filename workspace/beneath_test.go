//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenBeneath opens paths holding symlinks directly beneath the root,
// as if they had been swapped in after Resolve: symlinks that stay inside
// are followed (by the walk; openat2 refuses absolute ones, which Resolve
// never produces), and every way out is refused as outside the roots.
func TestOpenBeneath(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret": "s"})
	fs, root := newFS(t, map[string]string{"real/f": "inside", "real/sub/g": "deeper"})
	links := map[string]string{
		"in-rel":        "real",
		"in-abs":        filepath.Join(root, "real"),
		"real/sub/up":   "../f",
		"out-abs":       outside,
		"out-rel":       filepath.Join("..", "..", filepath.Base(filepath.Dir(outside)), filepath.Base(outside)),
		"real/out-up":   "../..",
		"loop":          "loop",
		"proc-root":     "/proc/self/root",
		"real/via-root": "/",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		path      string
		walk, at2 string // the content read, or the error
	}{
		{"real/f", "inside", "inside"},
		{"in-rel/f", "inside", "inside"},
		{"in-abs/f", "inside", "outside"},
		{"real/sub/up", "inside", "inside"},
		{"in-rel/sub/g", "deeper", "deeper"},
		{"out-abs/secret", "outside", "outside"},
		{"out-rel/secret", "outside", "outside"},
		{"real/out-up/x", "outside", "outside"},
		{"loop/x", "loop", "loop"},
		{"proc-root/etc/hostname", "outside", "outside"},
		{"real/via-root/etc/hostname", "outside", "outside"},
	}
	modes := []bool{false}
	if openat2Works.Load() {
		modes = append(modes, true)
	}
	for _, at2 := range modes {
		restore := openat2Works.Load()
		openat2Works.Store(at2)
		for _, tt := range tests {
			want := tt.walk
			if at2 {
				want = tt.at2
			}
			data, err := fs.roots.readFile(filepath.Join(root, tt.path), 1<<20)
			var out *OutsideRootsError
			got := string(data)
			switch {
			case errors.As(err, &out) && out.Swapped:
				got = "outside"
			case errors.Is(err, syscall.ELOOP):
				got = "loop"
			case err != nil:
				got = err.Error()
			}
			assertEqual(t, tt.path+map[bool]string{true: " (openat2)", false: " (walk)"}[at2], want, got)
		}
		openat2Works.Store(restore)
	}
}
