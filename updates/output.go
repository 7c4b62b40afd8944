package updates

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// outFilter reads a terminal's raw stream and keeps what a command
// printed: the bytes between its OSC 633 C (output starts) and D
// (finished) marks, without escape sequences. What the shell prints
// around a command (the prompt, the integration) is dropped.
type outFilter struct {
	inCommand bool
	pending   []byte // an escape sequence cut by the chunk's end
}

// maxPendingEscape bounds an unterminated escape sequence kept for the
// next chunk; longer ones are not markers and are dropped.
const maxPendingEscape = 4 << 10

// write returns the command output in data, and whether data ended a
// command (its D mark, or a new prompt's A).
func (f *outFilter) write(data []byte) (text string, ended bool) {
	if len(f.pending) > 0 {
		data = append(f.pending, data...)
		f.pending = nil
	}
	var out bytes.Buffer
	for len(data) > 0 {
		i := bytes.Index(data, []byte("\x1b]"))
		if i < 0 {
			// A lone ESC at the end may begin the next marker.
			if n := len(data); data[n-1] == 0x1b {
				f.keep(data[:n-1], &out)
				f.pending = []byte{0x1b}
				break
			}
			f.keep(data, &out)
			break
		}
		f.keep(data[:i], &out)
		rest := data[i+2:]
		end, size := oscEnd(rest)
		if end < 0 {
			if len(rest) < maxPendingEscape {
				f.pending = append([]byte(nil), data[i:]...)
			}
			break
		}
		if f.osc(rest[:end]) {
			ended = true
		}
		data = rest[end+size:]
	}
	if out.Len() == 0 {
		return "", ended
	}
	return ansi.Strip(out.String()), ended
}

func (f *outFilter) keep(b []byte, out *bytes.Buffer) {
	if f.inCommand {
		out.Write(b)
	}
}

// oscEnd finds an OSC's terminator, BEL or ST.
func oscEnd(b []byte) (at, size int) {
	for i, c := range b {
		switch {
		case c == 0x07:
			return i, 1
		case c == 0x1b && i+1 < len(b) && b[i+1] == '\\':
			return i, 2
		}
	}
	return -1, 0
}

// osc follows the command marks, and says whether one ended a command;
// other OSCs (titles, hyperlinks) vanish.
func (f *outFilter) osc(body []byte) (ended bool) {
	s := string(body)
	if !strings.HasPrefix(s, "633;") {
		return false
	}
	switch mark, _, _ := strings.Cut(s[4:], ";"); mark {
	case "C":
		f.inCommand = true
	case "D", "A":
		f.inCommand = false
		return true
	}
	return false
}

// outputBuf is a command's output as a card shows it: lines, with a
// carriage return rewriting its line as a terminal would (progress bars),
// and only the tail kept once it grows past the limit.
type outputBuf struct {
	b       strings.Builder
	dropped int
}

func (o *outputBuf) write(s string, limit int) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	for {
		i := strings.IndexByte(s, '\r')
		if i < 0 {
			break
		}
		o.b.WriteString(s[:i])
		cur := o.b.String()
		o.b.Reset()
		o.b.WriteString(cur[:strings.LastIndexByte(cur, '\n')+1])
		s = s[i+1:]
	}
	o.b.WriteString(s)
	if o.b.Len() > limit {
		cur := o.b.String()
		cut := len(cur) - limit*3/4
		if nl := strings.IndexByte(cur[cut:], '\n'); nl >= 0 {
			cut += nl + 1
		}
		o.dropped += cut
		o.b.Reset()
		o.b.WriteString(cur[cut:])
	}
}

func (o *outputBuf) String() string {
	if o.dropped == 0 {
		return o.b.String()
	}
	return "[… " + strconv.Itoa(o.dropped) + " earlier bytes not shown]\n" + o.b.String()
}

// Len is how much the buffer holds.
func (o *outputBuf) Len() int { return o.b.Len() + o.dropped }
