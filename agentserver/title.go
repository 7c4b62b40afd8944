package agentserver

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// The bridge makes its conversations with autotitle false, so that the
// server asks the agent's LLM for no title; it names them itself, as the
// server does when it has no LLM to ask (title_utils.py,
// generate_fallback_title): by their first message, trimmed and cut to
// 50 characters. The editors list conversations by that title.

// titleLength is generate_fallback_title's max_length.
const titleLength = 50

// fallbackTitle is the title of a conversation whose first message is
// text.
func fallbackTitle(text string) string {
	title := []rune(strings.TrimSpace(text))
	if len(title) > titleLength {
		title = append(title[:titleLength-3], []rune("...")...)
	}
	return string(title)
}

// SetTitle names a conversation (PATCH /api/conversations/{id}).
func (c *Client) SetTitle(ctx context.Context, id, title string) error {
	return c.do(ctx, http.MethodPatch, conversationPath(id), nil, map[string]any{"title": title}, nil, &NotFoundError{ConversationID: id})
}

// titleAfter names the conversation after its first message, once; a
// failure costs only the title, and is logged.
func (c *Conversation) titleAfter(ctx context.Context, text string) {
	c.mu.Lock()
	untitled := c.untitled
	c.untitled = false
	c.mu.Unlock()
	title := fallbackTitle(text)
	if !untitled || title == "" {
		return
	}
	if err := c.c.SetTitle(ctx, c.id, title); err != nil && !errors.Is(err, context.Canceled) {
		c.log.Warn("the conversation could not be named after its first message", "error", err)
	}
}
