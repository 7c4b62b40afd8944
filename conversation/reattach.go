package conversation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/ownfile"
	"github.com/oh-bridge/oh-bridge/internal/sockowner"
)

// Reattaching: a conversation's agent keeps the mcp_config it was created
// with, so it reaches its tools at the endpoint of the bridge that created
// the conversation, which may have ended (the editor restarted). A link
// attached to such a conversation serves the session's tools at that same
// address, with that same token, before it follows the conversation;
// docs/openhands-v1.md ("Reattaching: the tools' endpoint") says why.

// Listen says where an endpoint must listen: a port on 127.0.0.1 and the
// token it takes. The zero Listen is any free port and a fresh token.
type Listen struct {
	Port  int
	Token string
}

// Port is the endpoint's port on 127.0.0.1 (0 when its URL names none).
func (e Endpoint) Port() int {
	u, err := url.Parse(e.URL)
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

// EndpointTakenError: the port on which an attached conversation's agent
// reaches its tools is taken by another program.
type EndpointTakenError struct {
	ConversationID string
	URL            string
	Port           int
	Err            error
}

func (e *EndpointTakenError) Error() string {
	return fmt.Sprintf("the agent of conversation %s reaches its tools at %s, where the bridge that created the conversation served them; "+
		"port %d on 127.0.0.1 is now taken by another program (%v), so its tool calls cannot reach this bridge. "+
		"End the program that listens there (`ss -ltnp 'sport = :%d'` or `lsof -nP -iTCP:%d -sTCP:LISTEN` names it) and attach again, or start a new conversation",
		e.ConversationID, e.URL, e.Port, e.Err, e.Port, e.Port)
}

func (e *EndpointTakenError) Unwrap() error { return e.Err }

// Kind is "mcp_port_taken".
func (e *EndpointTakenError) Kind() string { return "mcp_port_taken" }

// Data names the port.
func (e *EndpointTakenError) Data() map[string]any {
	return map[string]any{"port": e.Port, "url": e.URL, "conversationId": e.ConversationID}
}

// EndpointUnknownError: an attached conversation's agent reaches its tools
// at an endpoint this bridge cannot serve.
type EndpointUnknownError struct {
	ConversationID string
	URL            string
	Why            string
}

func (e *EndpointUnknownError) Error() string {
	return fmt.Sprintf("the agent of conversation %s reaches its tools at %s, and %s, so its tool calls cannot reach this bridge; start a new conversation",
		e.ConversationID, e.URL, e.Why)
}

// Kind is "mcp_unavailable".
func (e *EndpointUnknownError) Kind() string { return "mcp_unavailable" }

// named is the endpoint an attached conversation's agent names, with the
// token this machine's bridge recorded when it created the conversation.
// ok is false when the agent names no endpoint of a bridge. Only an
// endpoint this bridge made is served again: its record must be there,
// the bridge's own file and shape, for this conversation and this URL;
// and a token the agent-server shows must be the recorded one. A token
// the bridge did not mint (a conversation made by hand, or by another
// user's program, whose mcp_config names `Bearer x`) would otherwise
// guard the person's shell.
func named(conv *agentserver.ConversationInfo, records string) (ep Endpoint, ok bool, err error) {
	named, ok := conv.BridgeMCP()
	if !ok {
		return Endpoint{}, false, nil
	}
	ep = Endpoint{URL: named.URL, Token: named.Token}
	u, perr := url.Parse(named.URL)
	if perr != nil || u.Scheme != "http" || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost") || ep.Port() == 0 {
		return ep, true, &EndpointUnknownError{ConversationID: conv.ID, URL: named.URL, Why: "that is not a bridge's endpoint on this machine (http://127.0.0.1:PORT/mcp)"}
	}
	rec, rerr := readRecord(records, conv.ID)
	switch {
	case errors.Is(rerr, fs.ErrNotExist):
		return ep, true, &EndpointUnknownError{ConversationID: conv.ID, URL: named.URL,
			Why: "this machine has no record of making it (the conversation was created by a bridge of another user or machine, or by another program)"}
	case rerr != nil:
		return ep, true, &EndpointUnknownError{ConversationID: conv.ID, URL: named.URL, Why: "its record cannot be used: " + rerr.Error()}
	case rec.URL != ep.URL:
		return ep, true, &EndpointUnknownError{ConversationID: conv.ID, URL: named.URL, Why: "this bridge recorded another endpoint for it (" + rec.URL + ")"}
	case ep.Token != "" && ep.Token != rec.Token:
		return ep, true, &EndpointUnknownError{ConversationID: conv.ID, URL: named.URL,
			Why: "the agent-server names a token this bridge did not make for it"}
	case rec.Exposed != "":
		return ep, true, &EndpointExposedError{ConversationID: conv.ID, URL: ep.URL, Port: ep.Port(), How: rec.Exposed}
	}
	ep.Token = rec.Token
	return ep, true, nil
}

// EndpointExposedError: an attached conversation's agent reaches its tools
// at a port that another user's program held while no bridge served it.
// The agent sends its token with every call, so that program may know it:
// the bridge does not serve that token again. The conversation can go on
// only as a new one, with a new endpoint and token, that starts from its
// history (Options.ContinueFrom).
type EndpointExposedError struct {
	ConversationID string
	URL            string
	Port           int
	How            string // who held the port, and when it was seen
}

func (e *EndpointExposedError) Error() string {
	return fmt.Sprintf("the agent of conversation %s reaches its tools at %s, and %s: the token its agent sends may be known to that program, "+
		"so this bridge does not serve it again. Continue in a new conversation that starts from this one's history (its tools get a new endpoint and token)",
		e.ConversationID, e.URL, e.How)
}

// Kind is "mcp_token_exposed".
func (e *EndpointExposedError) Kind() string { return "mcp_token_exposed" }

// Data names the conversation, for a face to offer its continuation.
func (e *EndpointExposedError) Data() map[string]any {
	return map[string]any{"conversationId": e.ConversationID, "url": e.URL, "port": e.Port, "canContinue": true}
}

// serveNamed has the face serve the session's tools where an attached
// conversation's agent reaches them.
func serveNamed(ctx context.Context, conv *agentserver.ConversationInfo, ep Endpoint, records string, start func(context.Context, Listen) (Endpoint, error)) (Endpoint, error) {
	// Another user's program on the port has had the agent's calls, and
	// with them the token, since the bridge that served it went away.
	if o, listening, err := sockowner.Listening(netip.MustParseAddr("127.0.0.1"), ep.Port()); err == nil && listening && !o.IsPersonOrRoot() {
		how := fmt.Sprintf("port %d there is held by %s (seen %s), not by a bridge of yours", ep.Port(), o.Describe(), time.Now().UTC().Format(time.RFC3339))
		if err := markExposed(records, conv.ID, how); err != nil {
			return Endpoint{}, fmt.Errorf("%w (and the record could not say so: %v)", &EndpointExposedError{ConversationID: conv.ID, URL: ep.URL, Port: ep.Port(), How: how}, err)
		}
		return Endpoint{}, &EndpointExposedError{ConversationID: conv.ID, URL: ep.URL, Port: ep.Port(), How: how}
	}
	got, err := start(ctx, Listen{Port: ep.Port(), Token: ep.Token})
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return Endpoint{}, &EndpointTakenError{ConversationID: conv.ID, URL: ep.URL, Port: ep.Port(), Err: syscall.EADDRINUSE}
		}
		return Endpoint{}, fmt.Errorf("cannot serve the tools where the agent of conversation %s reaches them (%s): %w", conv.ID, ep.URL, err)
	}
	if got.Port() != ep.Port() || got.Token != ep.Token {
		if got.Close != nil {
			got.Close(ctx)
		}
		return Endpoint{}, &EndpointTakenError{ConversationID: conv.ID, URL: ep.URL, Port: ep.Port(), Err: errors.New("this bridge serves its tools elsewhere")}
	}
	return got, nil
}

// The record of the endpoints of the conversations this bridge created:
// one file a conversation, <user cache dir>/oh-bridge/endpoints/<id>.json,
// mode 0600 in a 0700 directory, read and written as the bridge's own
// files are (internal/ownfile). It is what proves an endpoint the
// bridge's: a conversation whose agent names an endpoint with no record
// is not served.

// recordMark is the Bridge field of every record: a file without it is
// not one.
const recordMark = "oh-bridge endpoint record 1"

type record struct {
	Bridge       string `json:"bridge"`
	Conversation string `json:"conversation"`
	URL          string `json:"url"`
	Token        string `json:"token"`
	// Exposed, once set, says how the token may have leaked (another
	// user's program held the port): it is never served again.
	Exposed string `json:"exposed,omitempty"`
}

// tokenShape is the shape of the tokens the bridge's endpoints make (32
// random bytes, base64url): a record holding anything else was not
// written by the bridge.
var tokenShape = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// RecordsDir is where the endpoints are recorded by default.
func RecordsDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "oh-bridge", "endpoints")
}

var recordName = regexp.MustCompile(`^[0-9A-Za-z-]{1,64}$`)

func recordPath(dir, id string) (string, error) {
	if dir == "" {
		return "", errors.New("no directory to record endpoints in")
	}
	if !recordName.MatchString(id) {
		return "", fmt.Errorf("conversation id %q cannot name a file", id)
	}
	return filepath.Join(dir, id+".json"), nil
}

const recordsWhat = "the bridge's directory of endpoint records"

func writeRecord(dir, id string, ep Endpoint) error {
	return putRecord(dir, record{Bridge: recordMark, Conversation: id, URL: ep.URL, Token: ep.Token})
}

func putRecord(dir string, r record) error {
	path, err := recordPath(dir, r.Conversation)
	if err != nil {
		return err
	}
	if !tokenShape.MatchString(r.Token) {
		return fmt.Errorf("the endpoint's token is not one the bridge makes; it is not recorded")
	}
	data, _ := json.Marshal(r)
	return ownfile.Write(path, data, recordsWhat)
}

// markExposed keeps in a conversation's record that its token may have
// leaked.
func markExposed(dir, id, how string) error {
	r, err := readRecord(dir, id)
	if err != nil {
		return err
	}
	r.Exposed = how
	return putRecord(dir, r)
}

func readRecord(dir, id string) (record, error) {
	var r record
	path, err := recordPath(dir, id)
	if err != nil {
		return r, err
	}
	if err := ownfile.Dir(dir, recordsWhat); err != nil {
		return r, err
	}
	data, err := ownfile.Read(path, ownfile.Options{What: "the endpoint record", Limit: 4096})
	if err != nil {
		return r, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil || r.Bridge != recordMark || r.Conversation != id || !tokenShape.MatchString(r.Token) {
		return record{}, &ownfile.UnsafeError{Path: path, What: "the endpoint record", Why: "is not a record this bridge wrote for this conversation",
			Fix: "remove it; the conversation's tools can then not be served again, start a new conversation"}
	}
	return r, nil
}
