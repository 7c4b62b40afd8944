package agentserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"

	"github.com/coder/websocket"
)

// dialEvents opens the conversation's event socket. With after empty the
// server resends every event; otherwise those from that timestamp on.
// The session key goes in the first frame, as V1 prefers.
func (c *Client) dialEvents(ctx context.Context, id, after string) (*websocket.Conn, error) {
	u := *c.base
	if u.Scheme == "https" {
		u.Scheme = "wss"
	} else {
		u.Scheme = "ws"
	}
	u.Path += "/sockets/events/" + url.PathEscape(id)
	q := url.Values{"resend_mode": {"all"}}
	if after != "" {
		q = url.Values{"resend_mode": {"since"}, "after_timestamp": {after}}
	}
	u.RawQuery = q.Encode()
	conn, resp, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{HTTPClient: c.hc, HTTPHeader: c.header})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if refused := refusedByDial(err); refused != nil {
			return nil, refused
		}
		if resp != nil {
			switch resp.StatusCode {
			case http.StatusUnauthorized, http.StatusForbidden:
				return nil, &APIKeyError{URL: c.base.String(), How: "the event socket answered HTTP " + resp.Status}
			case http.StatusNotFound:
				return nil, &NotAgentServerError{URL: c.base.String(), Detail: "it has no event socket at /sockets/events"}
			}
			return nil, &ServerError{URL: "GET " + u.Path, Status: resp.StatusCode, Detail: "the event socket was refused"}
		}
		return nil, &UnreachableError{URL: c.base.String(), Err: err}
	}
	conn.SetReadLimit(64 << 20)
	if c.key != "" {
		auth, _ := json.Marshal(map[string]string{"type": "auth", "session_api_key": c.key})
		if err := conn.Write(ctx, websocket.MessageText, auth); err != nil {
			conn.CloseNow()
			return nil, &UnreachableError{URL: c.base.String(), Err: err}
		}
	}
	return conn, nil
}

// socketError turns the way an event socket ended into a plain-words
// error; permanent is set when reconnecting cannot help.
func (c *Client) socketError(id string, err error) (_ error, permanent bool) {
	switch websocket.CloseStatus(err) {
	case 4001:
		return &APIKeyError{URL: c.base.String(), How: "the event socket closed with 4001"}, true
	case 4004:
		return &NotFoundError{ConversationID: id}, true
	case websocket.StatusTryAgainLater:
		return &ServerError{URL: "/sockets/events/" + id, Status: 1013, Detail: "too many connections to this conversation"}, false
	}
	return &UnreachableError{URL: c.base.String(), Err: err}, false
}

// header is the part of an event the session reads.
type header struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	Timestamp string          `json:"timestamp"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	ActionID  string          `json:"action_id"`
	// ToolCallID ties an AgentErrorEvent, which has no action_id, to its
	// action.
	ToolCallID string `json:"tool_call_id"`
}

// resumeMargin is how far before the last event seen a resumed stream
// starts: events are stamped when made, not when stored, so one stamped
// just before the last may be stored after it. The overlap is dropped by
// event id.
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
