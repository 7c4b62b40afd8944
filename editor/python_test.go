package editor

import (
	"reflect"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/pytext"
)

// Expected values below were produced by CPython 3 (pathlib, str methods,
// and openhands_aci.utils.diff.get_diff, i.e. difflib).

func TestPythonCompat(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/a//b/./c/", "/a/b/c"},
		{"//a/b", "//a/b"},
		{"///a", "/a"},
		{"a/../b", "a/../b"},
		{"", "."},
		{"./x", "x"},
		{"/", "/"},
	} {
		check(t, "pyPath("+tt.in+")", tt.want, pyPath(tt.in))
	}
	for _, tt := range []struct{ in, want string }{
		{"/a/b.PY", ".PY"},
		{"/a/.bashrc", ""},
		{"/a/b.", ""},
		{"/a/x.tar.gz", ".gz"},
		{"/a.b/c", ""},
	} {
		check(t, "pySuffix("+tt.in+")", tt.want, pySuffix(tt.in))
	}
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"a\nb", []string{"a", "b"}},
		{"a\r\nb\rc\x0bd\fe\x1cf\u2028g\n", []string{"a", "b", "c", "d", "e", "f", "g"}},
		{"x\n\n", []string{"x", ""}},
		{"", nil},
	} {
		if got := pySplitlines(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("input: pySplitlines(%q)\nwant: %q\ngot:  %q", tt.in, tt.want, got)
		}
	}
	check(t, "pyStrip", "x", pytext.Strip(" \x1c\u3000x\x1f\t"))
	check(t, "pyMB", "11.0", pyMB(11*1024*1024+1000))
	check(t, "truncateRunes", "éé<cut>", truncateRunes("ééé", 2, "<cut>"))
}

func TestUnifiedDiff(t *testing.T) {
	for _, tt := range []struct{ name, old, new, want string }{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"two hunks", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\nE\n", "--- /p\n+++ /p\n@@ -1 +1 @@\n-a\n+A\n@@ -5 +5 @@\n-e\n+E"},
		{"append no newline", "a", "a\nb", "--- /p\n+++ /p\n@@ -1,0 +2 @@\n+b"},
		{"trailing spaces stripped", "a  \nb\n", "a\nb\n", "--- /p\n+++ /p\n@@ -1 +1 @@\n-a\n+a"},
		{"delete all", "a\nb\n", "", "--- /p\n+++ /p\n@@ -1,2 +0,0 @@\n-a\n-b"},
		{"replace block", "1\n2\n3\n4\n", "1\nx\ny\nz\n4\n", "--- /p\n+++ /p\n@@ -2,2 +2,3 @@\n-2\n-3\n+x\n+y\n+z"},
		{"create", "", "x = 1\n", "--- /p\n+++ /p\n@@ -0,0 +1 @@\n+x = 1"},
	} {
		check(t, tt.name+": "+tt.old+" -> "+tt.new, tt.want, UnifiedDiff("/p", tt.old, tt.new))
	}
}

func check(t *testing.T, input, want, got string) {
	t.Helper()
	if want != got {
		t.Errorf("input: %s\nwant: %q\ngot:  %q", input, want, got)
	}
}

func TestPyReadRangeMatchesLines(t *testing.T) {
	for _, s := range []string{"", "a", "a\n", "a\nb", "a\nb\n", "\n\n", "a\n\nb\n\n"} {
		for start := -1; start <= 6; start++ {
			for end := -1; end <= 6; end++ {
				var want strings.Builder
				for i, line := range pyLines(s) {
					if n := i + 1; n >= start && n <= end {
						want.WriteString(line)
					}
				}
				if got := pyReadRange(s, start, end); got != want.String() {
					t.Errorf("pyReadRange(%q, %d, %d) = %q, want %q", s, start, end, got, want.String())
				}
			}
		}
	}
}
