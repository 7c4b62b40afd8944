package conversation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/conversation"
)

// TestListPages lists a directory's conversations among many others on
// the stand-in: the server has no filter by directory, so the listing
// reads its pages and keeps the matches, ending a page early with a
// cursor that goes on where it stopped, each conversation once.
func TestListPages(t *testing.T) {
	// The stand-in, for speed: 193 conversations, which the real server
	// would each give a directory, a git repository (it runs git init in
	// the working directory) and files on disk, seconds under load; the
	// search's answer is held to the real server's by agentserver's
	// TestStandInKeepsToTheRealServer.
	p := agentservertest.Start(t)
	start := func(dir string) (string, error) {
		body, _ := json.Marshal(map[string]any{
			"agent":     map[string]any{"kind": "Agent", "llm": map[string]any{"model": "stand-in/scripted"}, "tools": []any{}},
			"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": dir},
		})
		resp, err := http.Post(p.URL+"/api/conversations", "application/json", bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var info struct {
			ID string `json:"id"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || resp.StatusCode != http.StatusCreated {
			return "", fmt.Errorf("starting a conversation: HTTP %d, %v", resp.StatusCode, err)
		}
		return info.ID, nil
	}
	// 160 in one directory, 32 in another and one without a directory
	// (relative), started 8 at a time.
	want := map[string]map[string]bool{"/w/a": {}, "/w/b": {}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < 193; i += 8 {
				dir := "/w/a"
				switch {
				case i == 192:
					dir = "relative/dir"
				case i%6 == 0:
					dir = "/w/b"
				}
				id, err := start(dir)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				if want[dir] != nil {
					want[dir][id] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	for dir, ids := range want {
		got := map[string]bool{}
		cursor, pages := "", 0
		for {
			page, err := conversation.List(context.Background(), conversation.ListOptions{ServerURL: p.URL, WorkingDir: dir + "/", Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, c := range page.Conversations {
				if got[c.ID] || !ids[c.ID] || c.WorkingDir != dir {
					t.Fatalf("%s: listed %+v: twice, or not one of the directory's", dir, c)
				}
				got[c.ID] = true
			}
			if page.Next == "" {
				break
			}
			cursor = page.Next
		}
		if len(got) != len(ids) {
			t.Errorf("%s: listed %d of %d conversations", dir, len(got), len(ids))
		}
		if dir == "/w/a" && pages < 2 {
			t.Errorf("%s: %d conversations came in %d page, want a cursor past the first 50", dir, len(ids), pages)
		}
	}

	all, err := conversation.List(context.Background(), conversation.ListOptions{ServerURL: p.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all.Conversations {
		if c.WorkingDir == "relative/dir" {
			t.Errorf("listed a conversation without an absolute directory: %+v", c)
		}
	}
	if _, err := conversation.List(context.Background(), conversation.ListOptions{ServerURL: "http://127.0.0.1:1"}); err == nil {
		t.Error("listing an unreachable server did not fail")
	} else if want := "cannot reach the OpenHands agent-server"; !strings.Contains(err.Error(), want) {
		t.Errorf("unreachable server: %v, want it to say %q", err, want)
	}
}
