package agentserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/sockowner"
	"github.com/oh-bridge/oh-bridge/ohevents"
)

// Client calls an agent-server's REST API.
type Client struct {
	base   *url.URL
	key    string
	header http.Header
	hc     *http.Client
}

// NewClient checks the server URL and returns a client. key is the session
// API key ("" when the server has none); header is sent with every request.
func NewClient(serverURL, key string, header http.Header, hc *http.Client) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(serverURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL of an OpenHands agent-server, e.g. http://127.0.0.1:8000", serverURL)
	}
	if hc == nil {
		hc = DefaultHTTPClient()
	}
	return &Client{base: u, key: key, header: header.Clone(), hc: hc}, nil
}

// DefaultHTTPClient is the client of a Client given none: 30 s a request,
// and no server on this machine's loopback is talked to unless the socket
// that takes the connection is the person's (or root's): any user can
// listen on a local port, and answer as an agent-server. A face that
// trusts more (servers the person confirmed) passes its own client.
func DefaultHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = sockowner.CheckedDial(&net.Dialer{Timeout: 10 * time.Second}, personOrRoot, nil)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func personOrRoot(o sockowner.Owner, remote netip.AddrPort) error {
	if o.IsPersonOrRoot() {
		return nil
	}
	return &UntrustedPeerError{Remote: remote.String(), Owner: o.Describe()}
}

// UntrustedPeerError: the socket on this machine that took the connection
// is another user's.
type UntrustedPeerError struct{ Remote, Owner string }

func (e *UntrustedPeerError) Error() string {
	return fmt.Sprintf("the server on %s is run by %s, not by you: it may be another user's program posing as an agent-server, so nothing is sent to it", e.Remote, e.Owner)
}

// Kind is "server_not_trusted".
func (e *UntrustedPeerError) Kind() string { return "server_not_trusted" }

// refusedByDial is the error a checked dial refused the connection with
// (one with a kind of its own), so that it reaches the faces as itself
// rather than as an unreachable server.
func refusedByDial(err error) error {
	var k interface {
		error
		Kind() string
	}
	if errors.As(err, &k) {
		return k
	}
	return nil
}

// URL is the server's base URL.
func (c *Client) URL() string { return c.base.String() }

// ServerInfo is what GET /server_info says of the server.
type ServerInfo struct {
	Title      string  `json:"title"`
	Version    string  `json:"version"`
	SDKVersion string  `json:"sdk_version"`
	Uptime     float64 `json:"uptime"`
}

// ConversationInfo is the part of a conversation the bridge reads.
type ConversationInfo struct {
	ID              string          `json:"id"`
	ExecutionStatus string          `json:"execution_status"`
	Title           string          `json:"title"` // "" until the server titles it
	Agent           json.RawMessage `json:"agent"`
	Workspace       json.RawMessage `json:"workspace"`
	// CreatedAt and UpdatedAt are ISO 8601 times, as the server writes them.
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	// ParentConversationID is set for a conversation another one owns (a
	// sub-agent's).
	ParentConversationID string `json:"parent_conversation_id"`
}

// WorkingDir is the directory the conversation's agent works in (its
// workspace's working_dir), "" when the workspace names none.
func (i *ConversationInfo) WorkingDir() string {
	var w struct {
		WorkingDir string `json:"working_dir"`
	}
	json.Unmarshal(i.Workspace, &w)
	return w.WorkingDir
}

// RedactedSecret is what the agent-server shows for a secret it keeps
// (pydantic's SecretStr; the SDK's REDACTED_SECRET_VALUE).
const RedactedSecret = "**********"

// BridgeMCP is the bridge's endpoint as the conversation's agent names it
// (its mcp_config's "oh-bridge" server: the url, and the token of its
// Authorization header or bearer auth). ok is false when the agent has no
// such server over HTTP. Token is "" when the server does not show it:
// the SDK keeps headers as secrets, so GET /api/conversations/{id} answers
// RedactedSecret in their place.
func (i *ConversationInfo) BridgeMCP() (ep MCPServer, ok bool) {
	var agent struct {
		MCPConfig map[string]json.RawMessage `json:"mcp_config"`
	}
	if json.Unmarshal(i.Agent, &agent) != nil {
		return MCPServer{}, false
	}
	servers := agent.MCPConfig
	if wrapped, ok := servers["mcpServers"]; ok {
		servers = nil
		json.Unmarshal(wrapped, &servers)
	}
	var s struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Auth    struct {
			Strategy string `json:"strategy"`
			Value    string `json:"value"`
		} `json:"auth"`
	}
	if json.Unmarshal(servers["oh-bridge"], &s) != nil || s.URL == "" {
		return MCPServer{}, false
	}
	ep.URL = s.URL
	for name, v := range s.Headers {
		if strings.EqualFold(name, "Authorization") {
			if scheme, token, found := strings.Cut(strings.TrimSpace(v), " "); found && strings.EqualFold(scheme, "bearer") {
				ep.Token = strings.TrimSpace(token)
			}
		}
	}
	if ep.Token == "" && strings.EqualFold(s.Auth.Strategy, "bearer") {
		ep.Token = s.Auth.Value
	}
	if ep.Token == RedactedSecret {
		ep.Token = ""
	}
	return ep, true
}

// ConversationPage is a page of GET /api/conversations/search.
type ConversationPage struct {
	Items      []ConversationInfo `json:"items"`
	NextPageID *string            `json:"next_page_id"`
}

// The orders GET /api/conversations/search sorts in (ConversationSortOrder).
const (
	SortCreatedAtDesc = "CREATED_AT_DESC"
	SortUpdatedAtDesc = "UPDATED_AT_DESC"
)

// EventPage is a page of GET /api/conversations/{id}/events/search.
// Items are decoded (ohevents.Decode); an item that is not a JSON object
// is left out.
type EventPage struct {
	Items      []ohevents.Event
	NextPageID *string
}

// do sends one request and decodes a 2xx answer into out. notFound, if
// set, is the error for a 404.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any, notFound error) error {
	var rd io.Reader
	contentType := ""
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd, contentType = bytes.NewReader(b), "application/json"
	}
	return c.send(ctx, method, path, query, contentType, rd, out, notFound)
}

// send is do with a body of any type (a file upload's multipart form).
func (c *Client) send(ctx context.Context, method, path string, query url.Values, contentType string, rd io.Reader, out any, notFound error) error {
	u := *c.base
	u.Path += path
	if query != nil {
		u.RawQuery = query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("X-Session-API-Key", c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if refused := refusedByDial(err); refused != nil {
			return refused
		}
		return &UnreachableError{URL: c.base.String(), Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return &UnreachableError{URL: c.base.String(), Err: err}
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return &APIKeyError{URL: c.base.String(), How: "HTTP " + strconv.Itoa(resp.StatusCode)}
	case resp.StatusCode == http.StatusNotFound && notFound != nil:
		return notFound
	case resp.StatusCode == http.StatusTooManyRequests:
		// 1.58 answers 429 to each request that would start a run past
		// max_concurrent_runs (1.49 queues the run instead); a message
		// sent with run is kept before the run is refused.
		return &ServerBusyError{URL: c.base.String(), Request: method + " " + path, Detail: detail(data),
			Saved: method == http.MethodPost && strings.HasSuffix(path, "/events")}
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return &ServerError{URL: method + " " + u.Path, Status: resp.StatusCode, Detail: detail(data)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &ServerError{URL: method + " " + u.Path, Status: resp.StatusCode, Detail: "the answer is not the JSON expected: " + err.Error()}
	}
	return nil
}

// detail is FastAPI's {"detail": ...}, or the body's start.
func detail(data []byte) string {
	var d struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &d) == nil && len(d.Detail) > 0 {
		var s string
		if json.Unmarshal(d.Detail, &s) == nil {
			return s
		}
		if s := validationErrors(d.Detail); s != "" {
			return s
		}
		return string(d.Detail)
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		s = "(no detail)"
	}
	return s
}

// validationErrors renders FastAPI's 422 detail, a list of pydantic
// errors, as "agent.llm.model: Field required; …".
func validationErrors(raw json.RawMessage) string {
	var errs []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(raw, &errs) != nil || len(errs) == 0 {
		return ""
	}
	var parts []string
	for _, e := range errs {
		var loc []string
		for i, l := range e.Loc {
			if i == 0 && (l == "body" || l == "query" || l == "path") {
				continue
			}
			loc = append(loc, fmt.Sprint(l))
		}
		parts = append(parts, strings.Join(loc, ".")+": "+e.Msg)
	}
	return strings.Join(parts, "; ")
}

// ServerInfo checks that the URL is an agent-server whose API the bridge
// speaks: a 1.x from ohevents.OldestSupported on (ohevents.CheckVersion).
func (c *Client) ServerInfo(ctx context.Context) (*ServerInfo, error) {
	var info ServerInfo
	err := c.do(ctx, http.MethodGet, "/server_info", nil, nil, &info, &NotAgentServerError{URL: c.base.String(), Detail: "GET /server_info answered 404"})
	var se *ServerError
	if errors.As(err, &se) {
		return nil, &NotAgentServerError{URL: c.base.String(), Detail: fmt.Sprintf("GET /server_info answered HTTP %d", se.Status)}
	}
	if err != nil {
		return nil, err
	}
	if info.Version == "" || !strings.Contains(strings.ToLower(info.Title), "agent server") {
		return nil, &NotAgentServerError{URL: c.base.String(), Detail: "GET /server_info did not describe an agent-server"}
	}
	if err := ohevents.CheckVersion(c.base.String(), info.Version); err != nil {
		return nil, err
	}
	return &info, nil
}

func conversationPath(id string) string { return "/api/conversations/" + url.PathEscape(id) }

// StartConversation creates a conversation (POST /api/conversations);
// request is a StartConversationRequest.
func (c *Client) StartConversation(ctx context.Context, request any) (*ConversationInfo, error) {
	var info ConversationInfo
	if err := c.do(ctx, http.MethodPost, "/api/conversations", nil, request, &info, nil); err != nil {
		return nil, err
	}
	if info.ID == "" {
		return nil, &ServerError{URL: "POST /api/conversations", Status: 200, Detail: "the answer has no conversation id"}
	}
	return &info, nil
}

// Conversation reads a conversation.
func (c *Client) Conversation(ctx context.Context, id string) (*ConversationInfo, error) {
	var info ConversationInfo
	if err := c.do(ctx, http.MethodGet, conversationPath(id), nil, nil, &info, &NotFoundError{ConversationID: id}); err != nil {
		return nil, err
	}
	return &info, nil
}

// SearchConversations reads a page of the server's conversations in order
// (SortUpdatedAtDesc: the latest active first); pageID is the page's
// next_page_id from the page before, "" for the first. limit is 1 to 100.
func (c *Client) SearchConversations(ctx context.Context, pageID string, limit int, order string) (*ConversationPage, error) {
	q := url.Values{"limit": {strconv.Itoa(limit)}, "sort_order": {order}}
	if pageID != "" {
		q.Set("page_id", pageID)
	}
	var page ConversationPage
	err := c.do(ctx, http.MethodGet, "/api/conversations/search", q, nil, &page,
		&NotAgentServerError{URL: c.base.String(), Detail: "GET /api/conversations/search answered 404"})
	if err != nil {
		return nil, err
	}
	return &page, nil
}

// textMessage is a SendMessageRequest with one text part.
func textMessage(text string, run bool) map[string]any {
	return map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": text}}, "run": run}
}

// SendMessage posts the user's message and lets the agent run.
func (c *Client) SendMessage(ctx context.Context, id, text string) error {
	return c.do(ctx, http.MethodPost, conversationPath(id)+"/events", nil, textMessage(text, true), nil, &NotFoundError{ConversationID: id})
}

// DeleteConversation deletes a conversation and its history.
func (c *Client) DeleteConversation(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, conversationPath(id), nil, nil, nil, &NotFoundError{ConversationID: id})
}

// Run resumes (or starts) the agent.
func (c *Client) Run(ctx context.Context, id string) error {
	err := c.do(ctx, http.MethodPost, conversationPath(id)+"/run", nil, nil, nil, &NotFoundError{ConversationID: id})
	var se *ServerError
	if errors.As(err, &se) && se.Status == http.StatusConflict {
		return nil // already running: what resume asks for
	}
	return err
}

// Pause lets the agent finish its current step, then stop.
func (c *Client) Pause(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, conversationPath(id)+"/pause", nil, nil, nil, &NotFoundError{ConversationID: id})
}

// Interrupt stops the agent at once.
func (c *Client) Interrupt(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, conversationPath(id)+"/interrupt", nil, nil, nil, &NotFoundError{ConversationID: id})
}

// RespondToConfirmation accepts or rejects the actions waiting for the
// user in confirmation mode.
func (c *Client) RespondToConfirmation(ctx context.Context, id string, accept bool, reason string) error {
	body := map[string]any{"accept": accept}
	if !accept && reason != "" {
		body["reason"] = reason
	}
	return c.do(ctx, http.MethodPost, conversationPath(id)+"/events/respond_to_confirmation", nil, body, nil, &NotFoundError{ConversationID: id})
}

// CountEvents counts the conversation's events.
func (c *Client) CountEvents(ctx context.Context, id string) (int, error) {
	var n int
	err := c.do(ctx, http.MethodGet, conversationPath(id)+"/events/count", nil, nil, &n, &NotFoundError{ConversationID: id})
	return n, err
}

// SearchEvents reads a page of the conversation's events, oldest first.
func (c *Client) SearchEvents(ctx context.Context, id, pageID string, limit int) (*EventPage, error) {
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if pageID != "" {
		q.Set("page_id", pageID)
	}
	var wire struct {
		Items      []json.RawMessage `json:"items"`
		NextPageID *string           `json:"next_page_id"`
	}
	if err := c.do(ctx, http.MethodGet, conversationPath(id)+"/events/search", q, nil, &wire, &NotFoundError{ConversationID: id}); err != nil {
		return nil, err
	}
	page := &EventPage{NextPageID: wire.NextPageID}
	for _, raw := range wire.Items {
		if ev, err := ohevents.Decode(raw); err == nil {
			page.Items = append(page.Items, ev)
		}
	}
	return page, nil
}
