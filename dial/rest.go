package dial

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// REST calls the OpenHands server's conversation API.
type REST struct {
	// BaseURL is the server's base URL, with any path prefix.
	BaseURL string
	// SessionAPIKey is sent as X-Session-API-Key when set.
	SessionAPIKey string
	// Header holds extra headers and cookies for every request.
	Header     http.Header
	HTTPClient *http.Client
}

// Conversation is what GET /api/conversations/{id} reports.
type Conversation struct {
	ConversationID string `json:"conversation_id"`
	Title          string `json:"title"`
	Status         string `json:"status"`
	RuntimeStatus  string `json:"runtime_status"`
	URL            string `json:"url"`
	SessionAPIKey  string `json:"session_api_key"`
}

// NotFoundError means the server does not know the conversation.
type NotFoundError struct{ ConversationID string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("conversation %s was not found on the OpenHands server; start a new one or check the id", e.ConversationID)
}

// APIKeyError means the server refused the session API key.
type APIKeyError struct {
	URL    string
	Status int
}

func (e *APIKeyError) Error() string {
	return fmt.Sprintf("the OpenHands server at %s refused the session API key (HTTP %d); set the right key", e.URL, e.Status)
}

// ServerError is any other unexpected answer, with the server's detail.
type ServerError struct {
	URL    string
	Status int
	Detail string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("%s answered HTTP %d: %s", e.URL, e.Status, e.Detail)
}

// CreateConversation starts a conversation, optionally with the user's
// first message (the task), and returns its id.
func (r *REST) CreateConversation(ctx context.Context, initialUserMsg string) (string, error) {
	body := map[string]any{}
	if initialUserMsg != "" {
		body["initial_user_msg"] = initialUserMsg
	}
	var res struct {
		Status         string `json:"status"`
		ConversationID string `json:"conversation_id"`
		Message        string `json:"message"`
	}
	if err := r.do(ctx, http.MethodPost, "/api/conversations", body, &res); err != nil {
		return "", err
	}
	if res.ConversationID == "" {
		return "", &ServerError{URL: r.BaseURL, Status: 200, Detail: "no conversation_id in the answer: " + res.Message}
	}
	return res.ConversationID, nil
}

// GetConversation returns the conversation, or *NotFoundError.
func (r *REST) GetConversation(ctx context.Context, id string) (*Conversation, error) {
	var c *Conversation
	if err := r.do(ctx, http.MethodGet, "/api/conversations/"+url.PathEscape(id), nil, &c); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, &NotFoundError{ConversationID: id}
	}
	return c, nil
}

func (r *REST) do(ctx context.Context, method, path string, body, result any) error {
	u, err := url.Parse(r.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("server URL %q: use http://host[:port][/prefix] or https://…", r.BaseURL)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.SessionAPIKey != "" {
		req.Header.Set("X-Session-API-Key", r.SessionAPIKey)
	}
	client := r.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &UnreachableError{URL: r.BaseURL, Err: err}
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return &APIKeyError{URL: r.BaseURL, Status: resp.StatusCode}
	case resp.StatusCode == http.StatusNotFound:
		return &ServerError{URL: r.BaseURL, Status: resp.StatusCode, Detail: "no such API here — is this the OpenHands server's URL (with its path prefix)?"}
	case resp.StatusCode/100 != 2:
		detail := strings.TrimSpace(string(data))
		var v struct {
			Message string `json:"message"`
			Detail  string `json:"detail"`
		}
		if json.Unmarshal(data, &v) == nil && (v.Message != "" || v.Detail != "") {
			detail = v.Message + v.Detail
		}
		return &ServerError{URL: r.BaseURL, Status: resp.StatusCode, Detail: clip(detail, 300)}
	}
	if err := json.Unmarshal(data, result); err != nil {
		return &ServerError{URL: r.BaseURL, Status: resp.StatusCode, Detail: "the answer is not OpenHands JSON: " + clip(string(data), 120)}
	}
	return nil
}
