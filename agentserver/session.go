package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/coder/websocket"
)

// errNoSessionSocket: the server refused the session socket's upgrade as
// a route it does not have (Starlette answers 403 to a WebSocket on an
// unknown path, other servers 404).
var errNoSessionSocket = errors.New("the agent-server has no /sockets/session")

// dialSession opens the conversation's session socket, replaying the log
// after the event of index after (-1: all of it).
func (c *Client) dialSession(ctx context.Context, id string, after int) (*websocket.Conn, error) {
	path := "/sockets/session/" + url.PathEscape(id)
	conn, err := c.dialSocket(ctx, path, url.Values{"after_seq": {strconv.Itoa(after)}})
	var he *handshakeError
	if errors.As(err, &he) && (he.status == http.StatusForbidden || he.status == http.StatusNotFound) {
		// The key travels in the first frame, after the upgrade: a 403
		// here is the route missing, not the key refused. (Were it the
		// key, in a header of the person's, the events socket says so.)
		return nil, errNoSessionSocket
	}
	if err != nil {
		return nil, c.refusedSocket(path, err)
	}
	return conn, nil
}

// frame is a session socket frame (session_protocol.py), as much of it
// as the bridge reads.
type frame struct {
	Type  string          `json:"type"`
	Seq   *int            `json:"seq"`
	Event json.RawMessage `json:"event"`
	// FromSeq and ThroughSeq (sync): the replay covers the log after
	// from_seq up to through_seq; later events are live.
	FromSeq    *int `json:"from_seq"`
	ThroughSeq *int `json:"through_seq"`
	// Code and Detail (error): why a frame of the client's was refused.
	Code   string `json:"code"`
	Detail string `json:"detail"`
}
