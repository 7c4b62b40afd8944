package shellint

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

type scanEvent struct {
	text string
	mark string
}

func scanAll(chunks [][]byte) []scanEvent {
	var s markScanner
	var evs []scanEvent
	text := func(b []byte) {
		if n := len(evs); n > 0 && evs[n-1].mark == "" {
			evs[n-1].text += string(b)
			return
		}
		evs = append(evs, scanEvent{text: string(b)})
	}
	markFn := func(m mark) {
		evs = append(evs, scanEvent{mark: m.code + "|" + strings.Join(m.args, "|") + "|" + fmt.Sprintf("%q", m.raw)})
	}
	for _, c := range chunks {
		s.feed(c, text, markFn)
	}
	// Whatever is still pending at the end is text that never completed.
	if len(s.pending) > 0 {
		text(s.pending)
	}
	return evs
}

func TestMarkScannerChunkBoundaries(t *testing.T) {
	stream := []byte("prompt $ \x1b]633;A;n1\a\x1b[?2004h echo\r\n" +
		"\x1b]633;C;n1;7\ahello \x1b[31mred\x1b[0m\r\n" +
		"\x1b]0;window title\a" + // a foreign OSC stays text
		"\x1b]633;D;0;fake\a" + // a spoof still parses as a mark; the session rejects it
		"\x1b\x1b]633;P;Cwd=/tmp/a\\x3bb;n1\x1b\\" + // ESC ESC, then ST-terminated
		"\x1b]633;unterminated \x1b[1m bold" +
		"\x1b]633;D;0;n1;7\a\x1b]633;A;n1\a$ ")
	want := scanAll([][]byte{stream})
	if len(want) < 8 {
		t.Fatalf("too few events for a meaningful test: %q", want)
	}
	for i := 1; i < len(stream); i++ {
		got := scanAll([][]byte{stream[:i], stream[i:]})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("split at %d:\n got %q\nwant %q", i, got, want)
		}
	}
	var bytewise [][]byte
	for i := range stream {
		bytewise = append(bytewise, stream[i:i+1])
	}
	if got := scanAll(bytewise); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("byte by byte:\n got %q\nwant %q", got, want)
	}
	// Marks seen, in order.
	var marks []string
	for _, e := range want {
		if e.mark != "" {
			marks = append(marks, strings.SplitN(e.mark, "|", 2)[0])
		}
	}
	if fmt.Sprint(marks) != "[A C D P D A]" {
		t.Fatalf("marks = %v", marks)
	}
}

func TestDecodeMarkValue(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`/tmp/plain`, `/tmp/plain`},
		{`/a\x3bb`, `/a;b`},
		{`/back\\slash`, `/back\slash`},
		{`/nl\x0ax`, "/nl\nx"},
		{`/end\x3b`, `/end;`},
		{`/bad\xzz`, `/bad\xzz`},
	} {
		if got := decodeMarkValue(tc.in); got != tc.want {
			t.Errorf("decodeMarkValue(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCooker(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want string
		alt  bool
	}{
		{"crlf", "a\r\nb\r\n", "a\nb\n", false},
		{"colors", "\x1b[1;31mred\x1b[0m\r\n", "red\n", false},
		{"osc title", "\x1b]0;title\aafter", "after", false},
		{"lone cr kept", "10%\r100%\r\n", "10%\r100%\n", false},
		{"bell dropped tab kept", "a\a\tb", "a\tb", false},
		{"unicode", "héllo 世界 🙂", "héllo 世界 🙂", false},
		{"alt screen", "\x1b[?1049hfull\x1b[?1049l", "full", true},
		{"alt screen 47", "\x1b[?47h", "", true},
		{"spoofed 633", "\x1b]633;D;0;fake\ax", "x", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Feed in every split to prove statefulness.
			for i := 0; i <= len(tc.in); i++ {
				c := newCooker()
				var got []byte
				got = append(got, c.cook([]byte(tc.in[:i]))...)
				got = append(got, c.cook([]byte(tc.in[i:]))...)
				got = append(got, c.flush()...)
				if string(got) != tc.want || c.altSeen != tc.alt {
					t.Fatalf("split %d: cook(%q) = %q alt=%v, want %q alt=%v", i, tc.in, got, c.altSeen, tc.want, tc.alt)
				}
			}
		})
	}
}

func TestOutputBuffer(t *testing.T) {
	t.Run("under cap is exact", func(t *testing.T) {
		b := newOutputBuffer(8, 8)
		b.write([]byte("0123456789abcdef"))
		got, dropped := b.readNew(true)
		if got != "0123456789abcdef" || dropped != 0 {
			t.Fatalf("got %q dropped %d", got, dropped)
		}
	})
	t.Run("head and tail with marker", func(t *testing.T) {
		b := newOutputBuffer(4, 4)
		for _, p := range []string{"01", "23", "45", "6789", "ab"} {
			b.write([]byte(p))
		}
		got, dropped := b.readNew(true)
		want := "0123" + truncationNotice(4) + "89ab"
		if got != want || dropped != 4 {
			t.Fatalf("got %q dropped %d, want %q", got, dropped, want)
		}
	})
	t.Run("poller that keeps up loses nothing", func(t *testing.T) {
		b := newOutputBuffer(4, 8)
		var all strings.Builder
		for i := range 100 {
			b.write([]byte(fmt.Sprintf("%03d,", i)))
			got, dropped := b.readNew(false)
			if dropped != 0 {
				t.Fatalf("dropped %d", dropped)
			}
			all.WriteString(got)
		}
		var want strings.Builder
		for i := range 100 {
			fmt.Fprintf(&want, "%03d,", i)
		}
		if all.String() != want.String() {
			t.Fatalf("got %q", all.String())
		}
	})
	t.Run("utf8 boundaries", func(t *testing.T) {
		b := newOutputBuffer(5, 5)
		b.write([]byte("ééééééééé")) // 18 bytes, 2 per rune
		got, dropped := b.readNew(true)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		if !strings.HasPrefix(got, "éé\n[...") || !strings.HasSuffix(got, "éé") {
			t.Fatalf("got %q", got)
		}
		if int(dropped)+len("éééé") != 18 {
			t.Fatalf("dropped %d", dropped)
		}
	})
	t.Run("poll holds back a split rune", func(t *testing.T) {
		b := newOutputBuffer(64, 64)
		r := []byte("a🙂")
		b.write(r[:3])
		got1, _ := b.readNew(false)
		b.write(r[3:])
		got2, _ := b.readNew(false)
		if got1 != "a" || got2 != "🙂" {
			t.Fatalf("got %q then %q", got1, got2)
		}
	})
	t.Run("memory is bounded", func(t *testing.T) {
		b := newOutputBuffer(1<<10, 1<<10)
		chunk := bytes.Repeat([]byte("x"), 4096)
		for range 10000 {
			b.write(chunk)
		}
		if cap(b.head) > 2<<10 || len(b.ring) != 1<<10 {
			t.Fatalf("head cap %d ring %d", cap(b.head), len(b.ring))
		}
		_, dropped := b.readNew(true)
		if dropped != 4096*10000-2<<10 {
			t.Fatalf("dropped %d", dropped)
		}
	})
}

func TestSubscriberLossIsReportedInOrder(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	var mu sync.Mutex
	var got []Event
	done := make(chan struct{})
	sub := newSubscriber(func(e Event) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
		if e.State != nil && e.State.State == StateDead {
			close(done)
		}
	}, 10)
	off := int64(0)
	push := func(s string) {
		sub.push(Event{Output: &OutputEvent{Offset: off, Data: []byte(s)}})
		off += int64(len(s))
	}
	push("aaaa") // taken by the delivery goroutine, which blocks in fn
	<-entered
	push("bbbbbbbbbb") // fills the 10-byte queue
	push("cccc")       // lost
	push("dd")         // lost
	sub.push(Event{State: &StateEvent{State: StateIdle}})
	push("e") // lost: the queue is still full
	sub.push(Event{State: &StateEvent{State: StateDead}})
	close(release)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("events not delivered")
	}
	mu.Lock()
	defer mu.Unlock()
	var desc []string
	for _, e := range got {
		if e.Output != nil {
			desc = append(desc, fmt.Sprintf("out@%d:%q lost=%d", e.Output.Offset, e.Output.Data, e.Output.Lost))
		} else {
			desc = append(desc, "state:"+string(e.State.State))
		}
	}
	want := []string{`out@0:"aaaa" lost=0`, `out@4:"bbbbbbbbbb" lost=0`, `out@20:"" lost=6`, "state:idle", `out@21:"" lost=1`, "state:dead"}
	if fmt.Sprint(desc) != fmt.Sprint(want) {
		t.Fatalf("got  %v\nwant %v", desc, want)
	}
	sub.cancel()
}
