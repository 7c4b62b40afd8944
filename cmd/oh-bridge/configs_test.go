package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsShowTheConfigs: docs/openhands-v1.md shows each agent's block
// from extension/src/agents/configs.json, the one source the extension
// copies and the real-agent tests apply, with the placeholders as the page
// names them.
func TestDocsShowTheConfigs(t *testing.T) {
	root := repoRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "extension", "src", "agents", "configs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Agents []map[string]json.RawMessage
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "openhands-v1.md"))
	if err != nil {
		t.Fatal(err)
	}
	fill := strings.NewReplacer("{BIN}", "oh-bridge", "{WS}", ".", "{URL}", "URL", "{TOKEN}", "TOKEN")
	if len(c.Agents) < 3 {
		t.Fatalf("configs.json lists %d agents", len(c.Agents))
	}
	blocks := 0
	for _, a := range c.Agents {
		var id string
		json.Unmarshal(a["id"], &id)
		for key, raw := range a {
			var b struct{ Text string }
			if json.Unmarshal(raw, &b) != nil || b.Text == "" {
				continue // the id and the name
			}
			blocks++
			block := "\n" + strings.TrimRight(fill.Replace(b.Text), "\n") + "\n```"
			if !strings.Contains(string(doc), block) {
				t.Errorf("docs/openhands-v1.md does not show %s's %s block:%s", id, key, block)
			}
		}
	}
	if blocks < 2*len(c.Agents) {
		t.Errorf("%d blocks in configs.json, want a stdio and an http one for each agent", blocks)
	}
}
