package updates

import (
	"bytes"
	"strconv"
	"strings"
)

// outputBuf is a command's output as a card shows it while it runs:
// lines, with a carriage return rewriting its line as a terminal would
// (progress bars). Past the limit it keeps the head and the tail, as the
// engine's truncation does for the agent, so the card always shows the
// command's first bytes; the final card shows the engine's record.
type outputBuf struct {
	head, tail []byte
	// split: the head is closed and later text goes to the tail.
	split   bool
	dropped int
}

func (o *outputBuf) write(s string, limit int) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	for {
		i := strings.IndexByte(s, '\r')
		if i < 0 {
			break
		}
		*o.cur() = append(*o.cur(), s[:i]...)
		o.rewriteLine()
		s = s[i+1:]
	}
	*o.cur() = append(*o.cur(), s...)
	if !o.split && len(o.head) > limit {
		cut := cutAt(o.head, limit/2)
		o.tail = append(o.tail, o.head[cut:]...)
		o.head = o.head[:cut:cut]
		o.split = true
	}
	if o.split && len(o.tail) > limit/2 {
		cut := cutAt(o.tail, len(o.tail)-limit/4)
		o.dropped += cut
		o.tail = append(o.tail[:0:0], o.tail[cut:]...)
	}
}

// cur is the part text goes to.
func (o *outputBuf) cur() *[]byte {
	if o.split {
		return &o.tail
	}
	return &o.head
}

// rewriteLine drops the current line, which a carriage return rewrites.
func (o *outputBuf) rewriteLine() {
	b := o.cur()
	*b = (*b)[:bytes.LastIndexByte(*b, '\n')+1]
}

// cutAt is the first line boundary at or after i (or i, when no line ends
// there), so a card's parts are whole lines.
func cutAt(s []byte, i int) int {
	if nl := bytes.IndexByte(s[i:], '\n'); nl >= 0 {
		return i + nl + 1
	}
	for i < len(s) && s[i]&0xc0 == 0x80 { // not inside a character
		i++
	}
	return i
}

func (o *outputBuf) String() string {
	if o.dropped == 0 {
		return string(o.head) + string(o.tail)
	}
	return string(o.head) + "[… " + strconv.Itoa(o.dropped) + " bytes not shown]\n" + string(o.tail)
}

// Len is how much the buffer holds.
func (o *outputBuf) Len() int { return len(o.head) + len(o.tail) + o.dropped }
