package handlers

import (
	"testing"

	"github.com/oh-bridge/oh-bridge/session"
)

// TestOutputStreamUTF8 checks the did_output encoding: characters cut by a
// read travel whole in the next chunk, offsets stay raw-stream offsets,
// invalid bytes become U+FFFD, and lost output takes a carried partial
// character with it.
func TestOutputStreamUTF8(t *testing.T) {
	type chunk struct {
		off  int64
		data string
		lost int64
	}
	cases := []struct {
		name  string
		in    []session.TerminalOutput
		want  []chunk
		flush string
	}{
		{"ascii passes through",
			[]session.TerminalOutput{{Offset: 0, Data: []byte("ab")}, {Offset: 2, Data: []byte("c")}},
			[]chunk{{0, "ab", 0}, {2, "c", 0}}, ""},
		{"a 2-byte character cut in two",
			[]session.TerminalOutput{{Offset: 10, Data: []byte("x\xc3")}, {Offset: 12, Data: []byte("\xa9y")}},
			[]chunk{{10, "x", 0}, {11, "éy", 0}}, ""},
		{"a 4-byte character in three reads",
			[]session.TerminalOutput{{Offset: 0, Data: []byte("\xf0\x9f")}, {Offset: 2, Data: []byte("\x98")}, {Offset: 3, Data: []byte("\x80!")}},
			[]chunk{{0, "", 0}, {0, "", 0}, {0, "😀!", 0}}, ""},
		{"invalid bytes become U+FFFD",
			[]session.TerminalOutput{{Offset: 0, Data: []byte("a\xffb\xc3(")}},
			[]chunk{{0, "a\uFFFDb\uFFFD(", 0}}, ""},
		{"lost output takes the carried bytes along",
			[]session.TerminalOutput{{Offset: 0, Data: []byte("a\xe2\x82")}, {Offset: 100, Data: []byte("z"), Lost: 50}},
			[]chunk{{0, "a", 0}, {100, "z", 52}}, ""},
		{"a partial character at the end is flushed",
			[]session.TerminalOutput{{Offset: 0, Data: []byte("a\xe2\x82")}},
			[]chunk{{0, "a", 0}}, "\uFFFD"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var st outputStream
			for i, ev := range c.in {
				off, data, lost := st.next(&ev)
				if data == "" && lost == 0 {
					continue // not sent
				}
				if got := (chunk{off, data, lost}); got != c.want[i] {
					t.Fatalf("event %d: got %+v, want %+v", i, got, c.want[i])
				}
			}
			_, data, ok := st.flush()
			if data != c.flush || ok != (c.flush != "") {
				t.Fatalf("flush %q %v, want %q", data, ok, c.flush)
			}
		})
	}
}
