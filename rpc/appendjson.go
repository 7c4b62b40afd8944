package rpc

import (
	"math/bits"
	"slices"
	"unicode/utf8"
)

// JSONAppender is a result that encodes itself. encodeResponse appends it
// straight into the response, skipping encoding/json's reflection and the
// re-validation encoding/json applies to a MarshalJSON method's output;
// large results (a 1 MiB file, a 10,000-entry listing) use it. AppendJSON
// must append exactly one valid JSON value, encoded as encoding/json would
// (AppendString for strings), so the bytes on the wire do not change.
type JSONAppender interface {
	AppendJSON(b []byte) []byte
}

const hexDigits = "0123456789abcdef"

// Bit masks for testing eight bytes of a string at once.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// AppendString appends s as a JSON string, byte for byte what
// encoding/json writes with SetEscapeHTML(false): `"` and `\` escaped,
// \b \f \n \r \t by name and other control bytes as \u00XX, invalid UTF-8
// as \ufffd, U+2028 and U+2029 as \u2028 and \u2029. It skips eight plain
// ASCII bytes at a time, which keeps a 1 MiB text to a fraction of a
// millisecond.
func AppendString(dst []byte, s string) []byte {
	// Room for the plain text and a few escapes, grown as append grows.
	dst = slices.Grow(dst, len(s)+len(s)/16+2)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			quote := w ^ (lsb * '"')
			slash := w ^ (lsb * '\\')
			special := (w - lsb*0x20) | // a byte below 0x20 borrows
				((quote - lsb) &^ quote) | // a zero byte: '"'
				((slash - lsb) &^ slash) | // a zero byte: '\'
				w // a byte ≥ 0x80
			if special&msb == 0 {
				i += 8
				continue
			}
			// The lowest flagged byte is a real one: borrows only run
			// upwards from it.
			i += bits.TrailingZeros64(special&msb) / 8
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
