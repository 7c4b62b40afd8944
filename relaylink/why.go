package relaylink

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/coder/websocket"

	"github.com/oh-bridge/oh-bridge/relay/wire"
)

// Error is a link's failure, in words, with its kind. why, when set, is
// the same in a few words without the relay's URL, for a sentence that
// names the relay already (Why).
type Error struct{ kind, words, why string }

func (e *Error) Error() string { return e.words }

// Kind is the error's kind.
func (e *Error) Kind() string { return e.kind }

// Why says in a few words why a link is down, for the person: what
// OnState was given, which for a link that was up is the WebSocket
// library's own error (a read on a closed connection says little).
func Why(err error) string {
	var e *Error
	var beat *wire.HeartbeatError
	var closed websocket.CloseError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		if e.why != "" {
			return e.why
		}
		return e.words
	case errors.As(err, &beat):
		return fmt.Sprintf("the relay did not answer the heartbeat within %s", beat.Within)
	case errors.As(err, &closed):
		if closed.Reason != "" {
			return "the relay closed it: " + closed.Reason
		}
		return fmt.Sprintf("the relay closed it (WebSocket status %d)", int(closed.Code))
	}
	return "the connection to the relay broke: " + netCause(err)
}

// dialError is a failed dial in words: a refused secret, an address
// that is not the relay's, or a network that does not get there.
func dialError(url string, resp *http.Response, err error) *Error {
	switch {
	case resp != nil && resp.StatusCode == http.StatusUnauthorized:
		const fix = "copy the secret the relay was started with into the bridge's relay setting"
		return &Error{kind: "relay_unauthorized",
			words: fmt.Sprintf("the relay at %s refused the pairing secret: %s", url, fix),
			why:   "the relay refused the pairing secret: " + fix}
	case resp != nil && resp.StatusCode == http.StatusForbidden:
		return &Error{kind: "relay_unauthorized",
			words: fmt.Sprintf("the relay at %s, or a proxy in front of it, refused the link (HTTP 403): check the relay's URL, and the proxy's configuration in docs/relay.md", url),
			why:   "the relay refused the link (HTTP 403)"}
	case resp != nil && resp.StatusCode != http.StatusSwitchingProtocols:
		why := fmt.Sprintf("the address answered HTTP %d, not a relay's WebSocket", resp.StatusCode)
		return &Error{kind: "relay_unreachable",
			words: fmt.Sprintf("%s: %s; check the relay's URL (its editors' side, as the proxy exposes it) and that the proxy passes WebSocket upgrades (docs/relay.md)", url, why),
			why:   why}
	}
	cause := netCause(err)
	return &Error{kind: "relay_unreachable", words: fmt.Sprintf("cannot reach the relay at %s: %s", url, cause), why: "cannot reach it: " + cause}
}

// netCause is the part of a network error that says what went wrong,
// without the layers of "failed to WebSocket dial: failed to send
// handshake request: Get …" around it.
func netCause(err error) string {
	var op *net.OpError
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the other end closed the connection"
	case errors.As(err, &cert):
		return "its TLS certificate is not trusted: " + cert.Err.Error()
	case errors.As(err, &dns):
		return dns.Error()
	case errors.As(err, &op):
		return op.Error()
	}
	return err.Error()
}
