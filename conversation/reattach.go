package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"

	"github.com/oh-bridge/oh-bridge/agentserver"
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
// token the agent-server shows or, as it hides it, the one this machine's
// bridge recorded when it created the conversation. ok is false when the
// agent names no endpoint of a bridge.
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
	if ep.Token == "" {
		rec, rerr := readRecord(records, conv.ID)
		if rerr != nil || rec.URL != ep.URL || rec.Token == "" {
			return ep, true, &EndpointUnknownError{ConversationID: conv.ID, URL: named.URL,
				Why: "its token is one the agent-server keeps secret and this machine has no record of (the conversation was created by a bridge of another user or machine, or by hand)"}
		}
		ep.Token = rec.Token
	}
	return ep, true, nil
}

// serveNamed has the face serve the session's tools where an attached
// conversation's agent reaches them.
func serveNamed(ctx context.Context, conv *agentserver.ConversationInfo, ep Endpoint, start func(context.Context, Listen) (Endpoint, error)) (Endpoint, error) {
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

// The record of the endpoints of the conversations this bridge created,
// for when the agent-server hides their tokens: one file a conversation,
// <user cache dir>/oh-bridge/endpoints/<id>.json, mode 0600 in a 0700
// directory.

type record struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

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

func writeRecord(dir, id string, ep Endpoint) error {
	path, err := recordPath(dir, id)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data, _ := json.Marshal(record{URL: ep.URL, Token: ep.Token})
	f, err := os.CreateTemp(dir, ".record-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func readRecord(dir, id string) (record, error) {
	var r record
	path, err := recordPath(dir, id)
	if err != nil {
		return r, err
	}
	f, err := os.Open(path)
	if err != nil {
		return r, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o077 != 0 || st.Size() > 4096 {
		return r, fmt.Errorf("%s is not a record this bridge wrote (a regular file of mode 0600)", path)
	}
	err = json.NewDecoder(f).Decode(&r)
	return r, err
}
