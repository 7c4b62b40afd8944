package main_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
)

// TestListConversationsPages lists a workspace's conversations through the
// editor's face (openhands/list_conversations) on the real agent-server,
// among more than a page of the server's conversations (it answers at most
// 100 a page, and has no filter by directory): the bridge reads the
// server's pages and keeps the workspace's, stops once it has 50 with a
// cursor that goes on where it stopped, and lists each conversation once,
// the latest active first: all of the workspace's, as many as the
// server's own count grew by.
func TestListConversationsPages(t *testing.T) {
	srv := realServer(t, realserver.Latest)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := agentserver.NewClient(srv.URL, srv.Key, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws, other := t.TempDir(), t.TempDir()
	before := countConversations(t, srv)
	// 60 in the workspace and 45 elsewhere, made 6 at a time. They have no
	// message: no agent runs, and their model is never asked.
	const mine, theirs = 60, 45
	start := time.Now()
	var mu sync.Mutex
	want := map[string]bool{}
	errs := make(chan error, 6)
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := w; i < mine+theirs; i += 6 {
				dir := ws
				if i >= mine {
					dir = other
				}
				info, err := c.StartConversation(ctx, map[string]any{
					"agent": map[string]any{"kind": "Agent", "tools": []any{},
						"llm": map[string]any{"model": scriptedModel, "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-unused"}},
					"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": dir},
				})
				if err != nil {
					errs <- err
					return
				}
				if dir == ws {
					mu.Lock()
					want[info.ID] = true
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d conversations made in %v", mine+theirs, time.Since(start).Round(time.Millisecond))
	if after := countConversations(t, srv); after-before != mine+theirs {
		t.Fatalf("the server counts %d conversations more, want %d", after-before, mine+theirs)
	}

	e := startEditor(t, ws, nil)
	type listed struct {
		Conversations []struct {
			ConversationID, UpdatedAt, WorkingDir string
		}
		Next string
	}
	got := map[string]bool{}
	var times []time.Time
	cursor, pages := "", 0
	for {
		var page listed
		if err := e.client.Call(ctxT(t), "openhands/list_conversations", map[string]any{"serverUrl": srv.URL, "sessionApiKey": srv.Key, "cursor": cursor}, &page); err != nil {
			t.Fatal(err)
		}
		pages++
		for _, l := range page.Conversations {
			if got[l.ConversationID] || !want[l.ConversationID] || l.WorkingDir != ws {
				t.Fatalf("page %d lists %+v: twice, or not one of the workspace's", pages, l)
			}
			got[l.ConversationID] = true
			at, err := time.Parse(time.RFC3339Nano, l.UpdatedAt)
			if err != nil {
				t.Fatalf("updatedAt %q is not ISO 8601: %v", l.UpdatedAt, err)
			}
			times = append(times, at)
		}
		if pages == 1 && (len(page.Conversations) < 50 || page.Next == "") {
			t.Errorf("the first page lists %d with next %q; want 50 or more and a cursor", len(page.Conversations), page.Next)
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if len(got) != mine {
		t.Errorf("listed %d of the workspace's %d conversations in %d pages", len(got), mine, pages)
	}
	for i := 1; i < len(times); i++ {
		if times[i].After(times[i-1]) {
			t.Errorf("listed out of order: %v after %v", times[i], times[i-1])
			break
		}
	}
}

// countConversations is the server's own count of its conversations
// (GET /api/conversations/count).
func countConversations(t *testing.T, srv *realserver.Server) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/conversations/count", nil)
	req.Header.Set("X-Session-API-Key", srv.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var n int
	if err := json.NewDecoder(resp.Body).Decode(&n); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/conversations/count: HTTP %d, %v", resp.StatusCode, err)
	}
	return n
}
