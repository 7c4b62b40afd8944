package editor

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reproduces the few Python behaviours that shape OHEditor's
// output, so the texts match byte for byte.

// pyPath formats p the way str(pathlib.PurePosixPath(p)) does: "." and empty
// components dropped, ".." kept, a trailing slash removed, and a leading "//"
// (exactly two) preserved as POSIX allows.
func pyPath(p string) string {
	root := ""
	switch {
	case strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "///"):
		root = "//"
	case strings.HasPrefix(p, "/"):
		root = "/"
	}
	var parts []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			parts = append(parts, s)
		}
	}
	out := root + strings.Join(parts, "/")
	if out == "" {
		return "."
	}
	return out
}

// pySuffix is pathlib's PurePath.suffix: the last ".ext" of the final name,
// where a leading dot (".bashrc") or a trailing one ("a.") is no suffix.
func pySuffix(p string) string {
	name := p[strings.LastIndexByte(p, '/')+1:]
	i := strings.LastIndexByte(name, '.')
	if 0 < i && i < len(name)-1 {
		return name[i:]
	}
	return ""
}

// universalNewlines is what Python's text mode does on read: "\r\n" and a
// lone "\r" become "\n".
func universalNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// pyLines splits s like iterating a Python text file: after each "\n", the
// separator kept; a final line without one is a line too.
func pyLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// pyLineCount is sum(1 for _ in f).
func pyLineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// pyReadRange is OHEditor's read_file(start_line, end_line): lines
// start..end (1-based, inclusive), separators kept. Only the lines up to
// end are looked at, so a snippet of a large file costs little.
func pyReadRange(s string, start, end int) string {
	start = max(start, 1)
	if end < start {
		return ""
	}
	from := 0
	for range start - 1 {
		i := strings.IndexByte(s[from:], '\n')
		if i < 0 {
			return ""
		}
		from += i + 1
	}
	to := from
	for range end - start + 1 {
		i := strings.IndexByte(s[to:], '\n')
		if i < 0 {
			return s[from:]
		}
		to += i + 1
	}
	return s[from:to]
}

// pySplitlines is str.splitlines(): it also breaks at \v, \f, \x1c-\x1e,
// \x85, U+2028 and U+2029, which is why view_range output can number lines
// differently from a full view. Separators are dropped.
func pySplitlines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			lines = append(lines, s[start:i])
			start = i + n
		case '\r':
			lines = append(lines, s[start:i])
			if i+1 < len(s) && s[i+1] == '\n' {
				n = 2
			}
			start = i + n
		}
		i += n
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// pyIntList formats ints like a Python list: [1, 2].
func pyIntList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// truncateRunes cuts s after max code points (Python counts code points, not
// bytes) and appends notice; a shorter s is returned unchanged.
func truncateRunes(s string, max int, notice string) string {
	if len(s) <= max {
		return s // fewer bytes than max means fewer code points too
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + notice
		}
		n++
	}
	return s
}

// pyMB formats a size like f'{size / 1024 / 1024:.1f}'.
func pyMB(size int64) string {
	return fmt.Sprintf("%.1f", float64(size)/1024/1024)
}
