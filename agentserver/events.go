package agentserver

import (
	"context"
	"net/url"
	"time"

	"github.com/coder/websocket"
)

// dialEvents opens the conversation's events socket. With after empty the
// server resends every event; otherwise those from that timestamp on.
func (c *Client) dialEvents(ctx context.Context, id, after string) (*websocket.Conn, error) {
	path := "/sockets/events/" + url.PathEscape(id)
	q := url.Values{"resend_mode": {"all"}}
	if after != "" {
		q = url.Values{"resend_mode": {"since"}, "after_timestamp": {after}}
	}
	conn, err := c.dialSocket(ctx, path, q)
	if err != nil {
		return nil, c.refusedSocket(path, err)
	}
	return conn, nil
}

// resumeMargin is how far before the last event seen a resumed events
// socket starts: events are stamped when made, not when stored, so one
// stamped just before the last may be stored after it. The overlap is
// dropped by event id.
const resumeMargin = 5 * time.Second

// resumeFrom returns the after_timestamp to resume from, in the server's
// own format (naive local time, or with its offset).
func resumeFrom(last string) string {
	if last == "" {
		return ""
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", time.RFC3339Nano} {
		if t, err := time.Parse(layout, last); err == nil {
			t = t.Add(-resumeMargin)
			if layout == time.RFC3339Nano {
				return t.Format(time.RFC3339Nano)
			}
			return t.Format("2006-01-02T15:04:05.000000")
		}
	}
	return last
}
