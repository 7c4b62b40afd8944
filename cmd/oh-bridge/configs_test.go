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
		Agents []struct {
			ID          string
			Stdio, HTTP struct{ Text string }
		}
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
	for _, a := range c.Agents {
		for transport, text := range map[string]string{"stdio": a.Stdio.Text, "http": a.HTTP.Text} {
			block := "\n" + strings.TrimRight(fill.Replace(text), "\n") + "\n```"
			if text == "" || !strings.Contains(string(doc), block) {
				t.Errorf("docs/openhands-v1.md does not show %s's %s block:%s", a.ID, transport, block)
			}
		}
	}
}
