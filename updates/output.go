package updates

import (
	"bytes"
	"strconv"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/session"
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

// A running command's output, from its terminal into its card or the
// client's display terminal.

// terminal takes a terminal's events: a running command's text goes to
// its card, and the command's end (the terminal idle, or dead) completes
// a card that awaits it. The terminal parsed the stream and checked its
// marks: a program cannot end a card by printing a look-alike.
func (t *Tracker) terminal(ev session.TerminalEvent) {
	var out string
	ended := false
	switch {
	case ev.Text != nil:
		out = ev.Text.Text
		if ev.Text.Lost > 0 {
			out = "\n[… " + strconv.FormatInt(ev.Text.Lost, 10) + " bytes not shown: the view fell behind]\n" + out
		}
	case ev.State != nil:
		ended = ev.State.State == session.TerminalIdle || ev.State.State == session.TerminalDead
	}
	if out == "" && !ended {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.running[ev.TerminalID]
	if c == nil || c.over {
		if e := t.unbound[ev.TerminalID]; e != nil && out != "" {
			e.out.write(out, t.opts.MaxOutput)
		}
		return
	}
	if out != "" {
		c.out.write(out, t.opts.MaxOutput)
		if c.display {
			c.unsent = bounded(append(c.unsent, out...), t.opts.MaxOutput)
		}
		if c.flush == nil {
			c.flush = time.AfterFunc(t.opts.Throttle, func() { t.flushOutput(c) })
		}
	}
	if ended && c.awaitEnd {
		delete(t.running, ev.TerminalID)
		t.flushNow(c)
	}
}

func (t *Tracker) flushOutput(c *call) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.flush == nil || c.over {
		return
	}
	c.flush = nil
	t.emitOutput(c)
}

// flushNow sends the output a throttled update holds back, at once.
func (t *Tracker) flushNow(c *call) {
	if c.over || (c.flush == nil && !c.pending()) {
		return
	}
	if c.flush != nil {
		c.flush.Stop()
		c.flush = nil
	}
	t.emitOutput(c)
}

// pending says the card has output it has not shown.
func (c *call) pending() bool {
	if c.display {
		return len(c.unsent) > 0
	}
	return c.sent != c.out.String()
}

func (t *Tracker) emitOutput(c *call) {
	if c.display {
		data := string(c.unsent)
		c.unsent = c.unsent[:0]
		t.appendOutput(c, data)
		return
	}
	text := c.out.String()
	c.sent = text
	t.emit(&ToolCall{SessionUpdate: "tool_call_update", ToolCallID: c.id, Content: textContent(text)})
}

// appendOutput appends data to the call's display terminal.
func (t *Tracker) appendOutput(c *call, data string) {
	if data == "" {
		return
	}
	if c.shownAll && len(c.shown)+len(data) <= showLimit {
		c.shown = append(c.shown, data...)
	} else {
		c.shown, c.shownAll = nil, false
	}
	t.emit(&ToolCall{SessionUpdate: "tool_call_update", ToolCallID: c.id,
		Meta: &Meta{TerminalOutput: &TerminalOutputMeta{TerminalID: c.id, Data: data}}})
}

// bounded keeps the end of a display terminal's unsent output when a
// command prints faster than the client is sent it: its last lines, after
// a line saying how much was left out.
func bounded(b []byte, limit int) []byte {
	if len(b) <= limit {
		return b
	}
	cut := cutAt(b, len(b)-limit/2)
	out := []byte("\n[… " + strconv.Itoa(cut) + " bytes not shown: the view fell behind]\n")
	return append(out, b[cut:]...)
}

// endDisplay makes u, a command's last update, end its display terminal:
// the card keeps the terminal (followed by u's text, why it failed) and
// the terminal exits with the command's code (nil when unknown). As
// claude-agent-acp does, the output it still lacked went in an update of
// its own before.
func endDisplay(c *call, u *ToolCall, code *int) {
	u.Content = append([]ToolCallContent{terminalContent(c.id)}, u.Content...)
	u.Meta = &Meta{TerminalExit: &TerminalExitMeta{TerminalID: c.id, ExitCode: code}}
}

// rest is what a display terminal still lacks of the output the agent
// received: the record's output past what the terminal was sent, when the
// one continues the other (the terminal's text can trail the call's end,
// and the completion closes the card). When they differ otherwise (the
// record is cut, or drawn as a terminal pane shows it) the terminal keeps
// what it has.
func rest(c *call, record string) string {
	if !c.shownAll {
		return ""
	}
	shown := string(c.shown)
	if strings.HasPrefix(record, shown) {
		return record[len(shown):]
	}
	return ""
}
