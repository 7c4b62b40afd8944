package shellint

import (
	"fmt"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// cooker turns a command's raw terminal bytes into the text an agent reads:
// escape sequences stripped (by charmbracelet/x/ansi's stateful parser, so a
// sequence split across reads is still recognised), "\r\n" folded to "\n",
// other C0 controls except tab dropped. It also notices the alternate screen
// that full-screen programs switch to, because their output is not text.
type cooker struct {
	p         *ansi.Parser
	out       []byte
	pendingCR bool
	altScreen bool // currently on the alternate screen
	altSeen   bool // entered it at least once
}

func newCooker() *cooker {
	c := &cooker{}
	// Not ansi.NewParser: it allocates a 64 KiB buffer for OSC/DCS
	// payloads, which we never look at, on every command.
	c.p = new(ansi.Parser)
	c.p.SetParamsSize(parser.MaxParamsSize)
	c.p.SetDataSize(256)
	c.p.SetHandler(ansi.Handler{
		Print:     c.print,
		Execute:   c.execute,
		HandleCsi: c.csi,
	})
	return c
}

// cook returns the text for p; the slice is reused by the next call.
func (c *cooker) cook(p []byte) []byte {
	c.out = c.out[:0]
	for len(p) > 0 {
		// Fast path: printable ASCII in the ground state needs no parser.
		if c.p.State() == parser.GroundState && !c.pendingCR {
			i := 0
			for i < len(p) && p[i] >= 0x20 && p[i] < 0x7f {
				i++
			}
			if i > 0 {
				c.out = append(c.out, p[:i]...)
				p = p[i:]
				continue
			}
		}
		c.p.Advance(p[0])
		p = p[1:]
	}
	return c.out
}

// flush returns text held back at the end of the command (a lone CR).
func (c *cooker) flush() []byte {
	c.out = c.out[:0]
	if c.pendingCR {
		c.out = append(c.out, '\r')
		c.pendingCR = false
	}
	return c.out
}

func (c *cooker) print(r rune) {
	if c.pendingCR {
		c.out = append(c.out, '\r')
		c.pendingCR = false
	}
	c.out = utf8.AppendRune(c.out, r)
}

func (c *cooker) execute(b byte) {
	switch b {
	case '\n':
		c.pendingCR = false
		c.out = append(c.out, '\n')
	case '\r':
		if c.pendingCR {
			c.out = append(c.out, '\r')
		}
		c.pendingCR = true
	case '\t':
		if c.pendingCR {
			c.out = append(c.out, '\r')
			c.pendingCR = false
		}
		c.out = append(c.out, '\t')
	}
}

func (c *cooker) csi(cmd ansi.Cmd, params ansi.Params) {
	if cmd.Prefix() != '?' || (cmd.Final() != 'h' && cmd.Final() != 'l') {
		return
	}
	params.ForEach(0, func(_, v int, _ bool) {
		if v == 1049 || v == 1047 || v == 47 {
			c.altScreen = cmd.Final() == 'h'
			c.altSeen = c.altSeen || c.altScreen
		}
	})
}

// outputBuffer keeps a command's cooked text within a fixed budget: the
// first headCap bytes and the last tailCap bytes, counting what falls in
// between. Readers take only what they have not seen yet, so a poller that
// keeps up loses nothing and one that does not gets head, a truncation
// marker, and tail.
type outputBuffer struct {
	headCap, tailCap int
	head             []byte
	headDone         bool
	ring             []byte // tail ring, allocated lazily
	ringStart        int    // index of the oldest byte in ring
	ringLen          int
	total            int64 // bytes ever written
	read             int64 // bytes handed to readers (or skipped)
}

func newOutputBuffer(headCap, tailCap int) *outputBuffer {
	return &outputBuffer{headCap: headCap, tailCap: tailCap}
}

func (b *outputBuffer) write(p []byte) {
	if !b.headDone {
		n := b.headCap - len(b.head)
		if n >= len(p) {
			b.head = append(b.head, p...)
			b.total += int64(len(p))
			return
		}
		// Cut the head on a rune boundary so it renders cleanly.
		for k := 0; k < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(p[n]); k++ {
			n--
		}
		b.head = append(b.head, p[:n]...)
		b.total += int64(n)
		b.headDone = true
		p = p[n:]
	}
	if b.tailCap <= 0 {
		b.total += int64(len(p))
		return
	}
	if b.ring == nil {
		b.ring = make([]byte, b.tailCap)
	}
	b.total += int64(len(p))
	if len(p) >= b.tailCap {
		copy(b.ring, p[len(p)-b.tailCap:])
		b.ringStart, b.ringLen = 0, b.tailCap
		return
	}
	end := (b.ringStart + b.ringLen) % b.tailCap
	k := copy(b.ring[end:], p)
	copy(b.ring, p[k:])
	b.ringLen += len(p)
	if b.ringLen > b.tailCap {
		b.ringStart = (b.ringStart + b.ringLen - b.tailCap) % b.tailCap
		b.ringLen = b.tailCap
	}
}

// ringFrom copies ring bytes for stream positions [from, b.total).
func (b *outputBuffer) ringFrom(from int64, dst []byte) []byte {
	ringBase := b.total - int64(b.ringLen)
	skip := int(from - ringBase)
	for i := skip; i < b.ringLen; i++ {
		dst = append(dst, b.ring[(b.ringStart+i)%b.tailCap])
	}
	return dst
}

// readNew returns the text not yet read and how many bytes of it were lost
// to the cap. Unless final, an incomplete trailing UTF-8 sequence is held
// back so a poll never splits a character.
func (b *outputBuffer) readNew(final bool) (string, int64) {
	to := b.total
	if !final {
		to -= int64(b.incompleteTail())
	}
	from := b.read
	if from >= to {
		return "", 0
	}
	var out []byte
	headEnd := int64(len(b.head))
	if from < headEnd {
		e := min(to, headEnd)
		out = append(out, b.head[from:e]...)
		from = e
	}
	var dropped int64
	if from < to {
		ringBase := b.total - int64(b.ringLen)
		if from < ringBase {
			dropped = ringBase - from
			from = ringBase
		}
		tail := b.ringFrom(from, nil)
		tail = tail[:len(tail)-int(b.total-to)]
		if dropped > 0 {
			// The ring may start inside a character.
			k := 0
			for k < len(tail) && k < utf8.UTFMax-1 && !utf8.RuneStart(tail[k]) {
				k++
			}
			dropped += int64(k)
			tail = tail[k:]
			out = append(out, truncationNotice(dropped)...)
		}
		out = append(out, tail...)
	}
	b.read = to
	return string(out), dropped
}

// incompleteTail is the length of a trailing partial UTF-8 sequence.
func (b *outputBuffer) incompleteTail() int {
	var last []byte
	n := min(int64(utf8.UTFMax-1), b.total-b.read)
	if n <= 0 {
		return 0
	}
	if int64(len(b.head)) == b.total {
		last = b.head[len(b.head)-int(n):]
	} else {
		last = b.ringFrom(b.total-min(n, int64(b.ringLen)), nil)
	}
	for i := len(last) - 1; i >= 0; i-- {
		if utf8.RuneStart(last[i]) {
			if !utf8.FullRune(last[i:]) {
				return len(last) - i
			}
			return 0
		}
	}
	return 0
}

func truncationNotice(n int64) string {
	return fmt.Sprintf("\n[... %d bytes truncated ...]\n", n)
}
