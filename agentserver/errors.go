package agentserver

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
)

// UnreachableError: nothing answered at the URL.
type UnreachableError struct {
	URL string
	Err error
}

func (e *UnreachableError) Error() string {
	reason := e.Err.Error()
	switch {
	case errors.Is(e.Err, syscall.ECONNREFUSED):
		reason = "connection refused: is the agent-server running (python -m openhands.agent_server, port 8000 by default)?"
	case errors.Is(e.Err, io.EOF), errors.Is(e.Err, io.ErrUnexpectedEOF), errors.Is(e.Err, syscall.ECONNRESET):
		reason = "the connection closed without a word: the agent-server stopped, restarted or dropped it (the bridge reconnects once it answers again)"
	case isDNS(e.Err):
		reason = "the host name does not resolve"
	}
	return fmt.Sprintf("cannot reach the OpenHands agent-server at %s: %s", e.URL, reason)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Kind is "server_unreachable".
func (e *UnreachableError) Kind() string { return "server_unreachable" }

func isDNS(err error) bool {
	var d *net.DNSError
	return errors.As(err, &d)
}

// NotAgentServerError: something answered, but not an agent-server.
type NotAgentServerError struct {
	URL    string
	Detail string
}

func (e *NotAgentServerError) Error() string {
	return fmt.Sprintf("%s is not an OpenHands agent-server (%s); give the agent-server's URL (port 8000 by default); OpenHands' V0 servers are retired and cannot be dialled", e.URL, e.Detail)
}

// Kind is "not_openhands".
func (e *NotAgentServerError) Kind() string { return "not_openhands" }

// ServerBusyError: the agent-server already runs as many conversations as
// it allows (its max_concurrent_runs, OH_MAX_CONCURRENT_RUNS, 10 by
// default) and answered HTTP 429 to a request that would start a run.
type ServerBusyError struct {
	URL     string // the server
	Request string // "POST /api/conversations/{id}/run"
	Detail  string // the server's words
	// Saved is set when the request was a message, which the server kept
	// before it refused to run the agent on it.
	Saved bool
}

func (e *ServerBusyError) Error() string {
	what := "refused " + e.Request
	switch {
	case e.Saved:
		what = "kept the message but did not start the agent on it"
	case e.Request == "POST /api/conversations":
		what = "refused to start another conversation"
	case strings.HasSuffix(e.Request, "/respond_to_confirmation"):
		what = "refused to run the accepted actions"
	case strings.HasSuffix(e.Request, "/run"):
		what = "refused to run the conversation"
	}
	fix := "wait for one of its running conversations to finish (or pause one) and try again"
	if e.Saved {
		fix = "wait for one of its running conversations to finish (or pause one), then resume this one to run the message (do not send it again)"
	}
	return fmt.Sprintf("the agent-server at %s is running as many conversations at once as it allows, and %s (HTTP 429: %s); %s, or restart the server with a higher OH_MAX_CONCURRENT_RUNS (10 by default)",
		e.URL, what, strings.TrimSpace(e.Detail), fix)
}

// Kind is "server_busy".
func (e *ServerBusyError) Kind() string { return "server_busy" }

// Data names the request refused, and whether its message was kept.
func (e *ServerBusyError) Data() map[string]any {
	return map[string]any{"request": e.Request, "messageSaved": e.Saved}
}

// APIKeyError: the server refused the session API key.
type APIKeyError struct {
	URL string
	How string // "HTTP 401", "WebSocket close 4001"
}

func (e *APIKeyError) Error() string {
	return fmt.Sprintf("the agent-server at %s refused the session API key (%s); set the key the server was started with (OH_SESSION_API_KEYS_0)", e.URL, e.How)
}

// Kind is "api_key_rejected".
func (e *APIKeyError) Kind() string { return "api_key_rejected" }

// NotFoundError: no such conversation.
type NotFoundError struct{ ConversationID string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("conversation %s was not found on the agent-server; start a new one or check the id", e.ConversationID)
}

// Kind is "conversation_not_found".
func (e *NotFoundError) Kind() string { return "conversation_not_found" }

// ServerError is any other unexpected answer, with the server's detail.
type ServerError struct {
	URL    string
	Status int
	Detail string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("the agent-server answered %s with HTTP %d: %s", e.URL, e.Status, strings.TrimSpace(e.Detail))
}

// Kind is "server_error".
func (e *ServerError) Kind() string { return "server_error" }

// OptionError: an option of Connect is missing or malformed.
type OptionError struct {
	Option  string // "llm", "agent"
	Missing bool
	Message string
}

func (e *OptionError) Error() string { return e.Message }

// Kind is "missing_parameter" or "invalid_option".
func (e *OptionError) Kind() string {
	if e.Missing {
		return "missing_parameter"
	}
	return "invalid_option"
}

// Data names the option.
func (e *OptionError) Data() map[string]any { return map[string]any{"param": e.Option} }

// ClosedError: the session was closed.
type ClosedError struct{}

func (*ClosedError) Error() string {
	return "not connected to an OpenHands agent-server; run openhands/connect first"
}

// Kind is "not_connected".
func (*ClosedError) Kind() string { return "not_connected" }
