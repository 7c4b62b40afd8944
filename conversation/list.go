package conversation

import (
	"context"
	"net/http"
	"path/filepath"

	"github.com/oh-bridge/oh-bridge/agentserver"
)

// ListOptions say which conversations List reads.
type ListOptions struct {
	ServerURL     string
	SessionAPIKey string
	Header        http.Header
	// HTTPClient: Options.HTTPClient.
	HTTPClient *http.Client
	// WorkingDir keeps only the conversations whose agent works there
	// (their workspace's working_dir); "" keeps every one that names an
	// absolute directory.
	WorkingDir string
	// Cursor continues a listing where the page before ended (its Next).
	Cursor string
}

// Listed is one conversation of a listing.
type Listed struct {
	ID         string
	WorkingDir string
	Title      string // "" until the server titles it
	UpdatedAt  string // ISO 8601
}

// ListPage is a page of a listing; Next, when set, is the Cursor of the
// next one.
type ListPage struct {
	Conversations []Listed
	Next          string
}

// The agent-server has no filter by directory: List reads its pages (the
// latest active conversation first) and keeps the matches. It stops once
// a page holds listWant of them, or after listPages pages, so a server with
// thousands of other conversations still answers quickly; the cursor goes
// on from there.
const (
	listPageSize = 100 // the server's largest page
	listWant     = 50
	listPages    = 10
)

// List reads the conversations of a working directory on an agent-server.
// Conversations another one owns (a sub-agent's) are part of their
// parent's work and are not listed.
func List(ctx context.Context, o ListOptions) (*ListPage, error) {
	c, err := agentserver.NewClient(o.ServerURL, o.SessionAPIKey, o.Header, o.HTTPClient)
	if err != nil {
		return nil, err
	}
	if _, err := c.ServerInfo(ctx); err != nil {
		return nil, err
	}
	dir := ""
	if o.WorkingDir != "" {
		dir = filepath.Clean(o.WorkingDir)
	}
	out := &ListPage{Conversations: []Listed{}}
	cursor := o.Cursor
	for range listPages {
		page, err := c.SearchConversations(ctx, cursor, listPageSize, agentserver.SortUpdatedAtDesc)
		if err != nil {
			return nil, err
		}
		for i := range page.Items {
			info := &page.Items[i]
			wd := info.WorkingDir()
			if info.ParentConversationID != "" || !filepath.IsAbs(wd) || (dir != "" && filepath.Clean(wd) != dir) {
				continue
			}
			out.Conversations = append(out.Conversations, Listed{ID: info.ID, WorkingDir: filepath.Clean(wd), Title: info.Title, UpdatedAt: info.UpdatedAt})
		}
		if page.NextPageID == nil || *page.NextPageID == "" {
			return out, nil
		}
		cursor = *page.NextPageID
		if len(out.Conversations) >= listWant {
			break
		}
	}
	out.Next = cursor
	return out, nil
}
