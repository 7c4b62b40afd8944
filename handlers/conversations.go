package handlers

import (
	"context"
	"net/http"

	"github.com/oh-bridge/oh-bridge/conversation"
)

type listConversationsParams struct {
	ServerURL     string            `json:"serverUrl"`
	SessionAPIKey string            `json:"sessionApiKey"`
	Headers       map[string]string `json:"headers"`
	// Cursor continues a listing where the last page ended (its next).
	Cursor string `json:"cursor"`
}

// ConversationSummary is one earlier conversation of this workspace on
// the agent-server.
type ConversationSummary struct {
	ConversationID string `json:"conversationId"`
	Title          string `json:"title,omitempty"`
	// UpdatedAt is when it last changed (ISO 8601), for "2 hours ago".
	UpdatedAt  string `json:"updatedAt,omitempty"`
	WorkingDir string `json:"workingDir"`
}

type listConversationsResult struct {
	Conversations []ConversationSummary `json:"conversations"`
	// Next, when set, is the cursor of the next page.
	Next string `json:"next,omitempty"`
}

// listConversations lists the agent-server's conversations whose agent
// works in this workspace's first root, the latest active first: the
// search ACP's session/list uses, so an editor and an ACP client see the
// same conversations. Listing opens no conversation; openhands/connect
// with a conversationId reopens one, its history replayed.
func (h *Handlers) listConversations(ctx context.Context, p *listConversationsParams) (*listConversationsResult, error) {
	if err := checkServerURL(p.ServerURL); err != nil {
		return nil, err
	}
	header := http.Header{}
	for k, v := range p.Headers {
		header.Set(k, v)
	}
	page, err := conversation.List(ctx, conversation.ListOptions{
		ServerURL:     p.ServerURL,
		SessionAPIKey: h.local.KeyFor(p.ServerURL, p.SessionAPIKey),
		Header:        header,
		HTTPClient:    h.httpClient(),
		WorkingDir:    h.Roots()[0],
		Cursor:        p.Cursor,
	})
	if err != nil {
		return nil, err
	}
	out := &listConversationsResult{Conversations: make([]ConversationSummary, 0, len(page.Conversations)), Next: page.Next}
	for _, c := range page.Conversations {
		out.Conversations = append(out.Conversations, ConversationSummary{
			ConversationID: c.ID, Title: c.Title, UpdatedAt: c.UpdatedAt, WorkingDir: c.WorkingDir,
		})
	}
	return out, nil
}
