package pytext

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsSpace is str.isspace for one rune: Go's unicode.IsSpace plus the ASCII
// information separators \x1c-\x1f, which Python counts as whitespace.
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// Strip is str.strip().
func Strip(s string) string { return strings.TrimFunc(s, IsSpace) }

// LStrip is str.lstrip().
func LStrip(s string) string { return strings.TrimLeftFunc(s, IsSpace) }

// RStrip is str.rstrip().
func RStrip(s string) string { return strings.TrimRightFunc(s, IsSpace) }

// Len is len(s) of a Python str: code points, not bytes.
func Len(s string) int { return utf8.RuneCountInString(s) }

// Head returns the first n code points of s (s[:n] in Python).
func Head(s string, n int) string {
	if n <= 0 {
		return ""
	}
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// Tail returns the last n code points of s (s[-n:] in Python, for n > 0).
func Tail(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := len(s)
	for ; i > 0 && n > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// Float is repr() of a Python float: "2.0", "0.5", "1e-05", "1.5e+16".
func Float(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	abs := math.Abs(f)
	if f == 0 || (abs >= 1e-4 && abs < 1e16) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	sign := exp[0]
	digits := strings.TrimLeft(exp[1:], "0")
	if len(digits) < 2 {
		digits = strings.Repeat("0", 2-len(digits)) + digits
	}
	return mant + "e" + string(sign) + digits
}

// Repr is repr() of a Python str: single quotes unless the text holds a
// single quote and no double quote, backslash escapes for the quote, the
// backslash, \t, \n and \r, and \x, \u or \U escapes for characters that
// str.isprintable rejects. Invalid UTF-8 shows as U+FFFD, as Python's
// errors="replace" decoding would have made it.
func Repr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == ' ' || (r != utf8.RuneError && unicode.IsPrint(r)) || r == utf8.RuneError:
			b.WriteRune(r)
		case r < 0x100:
			b.WriteString(`\x`)
			writeHex(&b, uint32(r), 2)
		case r < 0x10000:
			b.WriteString(`\u`)
			writeHex(&b, uint32(r), 4)
		default:
			b.WriteString(`\U`)
			writeHex(&b, uint32(r), 8)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

func writeHex(b *strings.Builder, v uint32, width int) {
	const digits = "0123456789abcdef"
	for shift := (width - 1) * 4; shift >= 0; shift -= 4 {
		b.WriteByte(digits[(v>>uint(shift))&0xf])
	}
}

// MiddleTruncate is the SDK's maybe_truncate without a save directory:
// content longer than limit code points keeps its head and tail, with
// notice between them (the head gets the odd character), so the result is
// exactly limit code points long. A notice that alone fills the limit is
// cut to it. A limit of 0 or less means no limit.
func MiddleTruncate(content string, limit int, notice string) string {
	if limit <= 0 || len(content) <= limit || Len(content) <= limit {
		return content
	}
	noticeLen := Len(notice)
	if noticeLen >= limit {
		return Head(notice, limit)
	}
	available := limit - noticeLen
	head := available/2 + available%2
	return Head(content, head) + notice + Tail(content, available-head)
}
