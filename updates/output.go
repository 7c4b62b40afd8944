package updates

import (
	"strconv"
	"strings"
)

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
