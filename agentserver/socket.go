package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/coder/websocket"
)

// An agent-server streams a conversation's events on two sockets:
//
//   - /sockets/session/{id} (1.45 on): every frame an envelope. "sync"
//     first, then "durable" {seq, event} for each event of the log after
//     the query's after_seq, in order, then live ones, with no overlap;
//     "transient" {event} for what the log does not keep (the full_state
//     snapshots), "error" for a frame of the client's it could not take,
//     and a streamed message's progress. seq is the event's index in the
//     log, so resuming after the last one delivered loses and repeats
//     nothing.
//   - /sockets/events/{id}: the bare events, history resent with
//     resend_mode=all, or since an after_timestamp, on a subscription
//     opened before the resend, so live events can come between resent
//     ones, and again in it. The bridge uses it where the session socket
//     is refused (the stand-in), deduplicating by event id.
//
// Both authenticate with a first frame {"type": "auth", ...}, close with
// 4001 for a wrong key and 4004 for an unknown conversation, and with
// 1013 when they will not serve this client now.

// socket is an open event stream.
type socket struct {
	conn *websocket.Conn
	// session is set for the session socket, whose frames are envelopes.
	session bool
}

// handshakeError: the server answered the socket's upgrade request with
// an HTTP status instead of switching protocols.
type handshakeError struct {
	status int
	text   string // "403 Forbidden"
}

func (e *handshakeError) Error() string { return "the socket was refused with HTTP " + e.text }

// dialSocket opens a socket at path and sends the session key in the
// first frame, as V1 prefers to the query parameter.
func (c *Client) dialSocket(ctx context.Context, path string, q url.Values) (*websocket.Conn, error) {
	u := *c.base
	if u.Scheme == "https" {
		u.Scheme = "wss"
	} else {
		u.Scheme = "ws"
	}
	u.Path += path
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
			return nil, &handshakeError{status: resp.StatusCode, text: resp.Status}
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

// refusedSocket words a socket's refused handshake.
func (c *Client) refusedSocket(path string, err error) error {
	var he *handshakeError
	if !errors.As(err, &he) {
		return err
	}
	switch he.status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return &APIKeyError{URL: c.base.String(), How: "the event socket answered HTTP " + he.text}
	case http.StatusNotFound:
		return &NotAgentServerError{URL: c.base.String(), Detail: "it has no event socket at /sockets/events"}
	}
	return &ServerError{URL: "GET " + path, Status: he.status, Detail: "the event socket was refused"}
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
		detail := "too many connections to this conversation"
		var ce websocket.CloseError
		if errors.As(err, &ce) && ce.Reason != "" {
			detail = ce.Reason
		}
		return &ServerError{URL: "/sockets/…/" + id, Status: 1013, Detail: detail}, false
	}
	return &UnreachableError{URL: c.base.String(), Err: err}, false
}

// tooLarge reports whether the session socket dropped the connection
// because an event is larger than its frames may be (4 MiB in 1.49 to
// 1.58): resuming there would meet the same event again.
func tooLarge(err error) bool {
	var ce websocket.CloseError
	return errors.As(err, &ce) && ce.Code == websocket.StatusTryAgainLater && ce.Reason == "frame_too_large"
}
