package rpc_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// encodingJSON is what AppendString must reproduce: encoding/json with
// SetEscapeHTML(false), as encodeResponse encodes results.
func encodingJSON(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	var all strings.Builder
	for b := range 256 {
		all.WriteByte(byte(b))
	}
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"plain", "hello, world"},
		{"every byte", all.String()},
		{"html", "<a href=\"x\">&amp;</a>"},
		{"controls", "\x00\x01\b\f\n\r\t\x1b\x1f\x7f"},
		{"quotes and backslashes", `"\"\\` + strings.Repeat(`a"b\c`, 9)},
		{"separators", "a\u2028b\u2029c\u2027d\u202a"},
		{"invalid utf-8", "ok\xff\xfe\xc3(\xe2\x82end\xf0\x9f\x98"},
		{"multibyte", "héllo wörld ✓ 😀 日本語 " + strings.Repeat("ü", 17)},
		{"lines", strings.Repeat("    line = compute(1)  # text\n", 40)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Every offset, so each special byte lands at each place in an
			// eight-byte word.
			for off := range min(len(tt.in), 9) + 1 {
				in := tt.in[off:]
				want := encodingJSON(in)
				if got := string(rpc.AppendString([]byte("x"), in)); got != "x"+want {
					t.Fatalf("AppendString(%q)\n got %s\nwant x%s", in, got, want)
				}
			}
		})
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("plain text\n")
	f.Add("\x00\"\\\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(rpc.AppendString(nil, s)), encodingJSON(s); got != want {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}

func BenchmarkAppendString1MiB(b *testing.B) {
	s := strings.Repeat("    line_000123 = compute(123)  # some ordinary text\n", (1<<20)/52)
	b.SetBytes(int64(len(s)))
	b.Run("AppendString", func(b *testing.B) {
		for b.Loop() {
			rpc.AppendString(nil, s)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			encodingJSON(s)
		}
	})
}
