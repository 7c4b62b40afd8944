// Package wire is what a bridge and a relay say to each other over the
// WebSocket the bridge dials: frames, and the streams that carry each of
// an agent's MCP sessions across a link that may drop and come back.
// docs/relay.md describes the protocol.
package wire

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
)

// NewSecret makes a pairing secret or a token: 256 random bits, as text.
// The relay makes its tokens with it, and a bridge that installs a relay
// its pairing secret.
func NewSecret() string { return rand.Text() + rand.Text() }

// Frame kinds.
const (
	// THello is the bridge's first frame on a link: its window, and for a
	// reconnect, what it received of each stream.
	THello = "hello"
	// TWelcome answers a hello: the relay's name for the window, and what
	// the relay received of each stream that lives on.
	TWelcome = "welcome"
	// TOpen (relay → bridge) starts a stream: an agent's MCP session for
	// a conversation bound to the window.
	TOpen = "open"
	// TMsg carries one JSON-RPC message of a stream, numbered.
	TMsg = "msg"
	// TAck says every message of a stream up to N arrived.
	TAck = "ack"
	// TClose ends a stream, with why.
	TClose = "close"
	// TBind (bridge → relay) asks for a new conversation bound to the
	// window; TBound answers with where its agent reaches the tools.
	TBind  = "bind"
	TBound = "bound"
	// TError answers a frame the other end could not take, in words.
	TError = "error"
)

// MaxFrame bounds one frame read from a link. A message over it is
// refused in words, and the link lives on.
const MaxFrame = 32 << 20

// Frame is one WebSocket text message.
type Frame struct {
	T string `json:"t"`
	// S names the stream of open, msg, ack and close.
	S string `json:"s,omitempty"`
	// N is a msg's number, or the last number an ack covers.
	N uint64 `json:"n,omitempty"`
	// M is a msg's JSON-RPC message.
	M json.RawMessage `json:"m,omitempty"`
	// ID pairs a bind with its bound, or an error with what it answers.
	ID string `json:"id,omitempty"`
	// Conversation is the relay's key of the conversation a stream or a
	// bind is for.
	Conversation string `json:"conversation,omitempty"`
	// Window is the hello's window, or the welcome's name for it.
	Window *Window `json:"window,omitempty"`
	// Streams are, in a hello or welcome, the last number received of
	// each stream the sender still has.
	Streams map[string]uint64 `json:"streams,omitempty"`
	// Ended are, in a hello, the streams the bridge ended lately (their
	// close may have been lost with the old link): the relay ends them
	// too. A stream of the window's that a hello names in neither lost
	// its open with the old link, and the relay opens it again.
	Ended []string `json:"ended,omitempty"`
	// Bound is a bind's answer.
	Bound *Bound `json:"bound,omitempty"`
	// Why says, in words, why a stream closed or a frame was refused;
	// Kind is the error's kind, as every face gives it.
	Why  string `json:"why,omitempty"`
	Kind string `json:"kind,omitempty"`
	// Base is, in a welcome, the editors' side's URL as the bridge
	// reached it (through any proxy).
	Base string `json:"base,omitempty"`
}

// Window is an editor window as its bridge registers it.
type Window struct {
	// ID is the bridge's random name for the window; a reconnect sends
	// the same one, and the relay keeps it only under the pairing secret
	// that registered it.
	ID string `json:"id"`
	// Name is what the person calls it (the workspace folder's name, and
	// the editor's), to tell two windows of one workspace apart.
	Name    string   `json:"name"`
	Roots   []string `json:"roots"`
	Version string   `json:"version"`
	// Tools are the MCP tools the window serves, as its own MCP server
	// lists them: the relay serves the same to the agent.
	Tools []json.RawMessage `json:"tools,omitempty"`
	// Instructions are its MCP server's instructions.
	Instructions string `json:"instructions,omitempty"`
	// Conversations are those bound to the window, sent again on every
	// hello so that a relay that restarted binds them again.
	Conversations []Bound `json:"conversations,omitempty"`
}

// Bound is where a conversation's agent reaches the window's tools: the
// MCP URL on the relay's agent side and the token for its
// Authorization header.
type Bound struct {
	Conversation string `json:"conversation"`
	URL          string `json:"url"`
	Token        string `json:"token"`
}

// Check says what is wrong with a frame received, in words.
func (f *Frame) Check() error {
	switch f.T {
	case THello:
		if f.Window == nil || f.Window.ID == "" {
			return fmt.Errorf("a hello frame names no window: send {\"t\":\"hello\",\"window\":{\"id\":…}}")
		}
	case TOpen, TAck, TClose:
		if f.S == "" {
			return fmt.Errorf("a %s frame names no stream (\"s\")", f.T)
		}
	case TMsg:
		if f.S == "" || f.N == 0 || len(f.M) == 0 {
			return fmt.Errorf("a msg frame needs a stream (\"s\"), a number from 1 (\"n\") and a message (\"m\")")
		}
	case TBind, TBound, TWelcome, TError:
	default:
		return fmt.Errorf("unknown frame kind %q", f.T)
	}
	return nil
}
