//go:build unix

package localserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/ohtest/shellplant"

	"github.com/oh-bridge/oh-bridge/localserver"
)

// TestUserLLM: the CLI's agent_settings.json first, then the old app's
// flat settings.json; the agent-server's own settings.json (encrypted, read
// through the server) is not taken for the app's; files that cannot be
// used are passed over with why.
func TestUserLLM(t *testing.T) {
	cli := `{"kind": "Agent", "llm": {"model": "anthropic/claude-sonnet-4-5", "api_key": "sk-cli", "base_url": "https://llm.example", "usage_id": "agent"}, "tools": []}`
	app := `{"llm_model": "openai/gpt-5", "llm_api_key": "sk-app", "llm_base_url": ""}`
	server := `{"schema_version": 2, "agent_settings": {"llm": {"model": "x/y", "api_key": "gAAAAAencrypted"}}}`
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "agent_settings.json"), []byte(cli), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, plant string
		files       map[string]string
		env         map[string]string
		want        string // the llm's JSON, "" none
		source      string
		skipped     string
	}{
		{name: "none"},
		{name: "the CLI's", files: map[string]string{"agent_settings.json": cli, "settings.json": app},
			want: `{"api_key":"sk-cli","base_url":"https://llm.example","model":"anthropic/claude-sonnet-4-5"}`, source: "the OpenHands CLI's settings"},
		{name: "the app's", files: map[string]string{"settings.json": app},
			want: `{"api_key":"sk-app","model":"openai/gpt-5"}`, source: "the OpenHands app's settings"},
		{name: "the agent-server's settings.json is not the app's", files: map[string]string{"settings.json": server}},
		{name: "a masked key", files: map[string]string{"agent_settings.json": `{"llm": {"model": "m", "api_key": "**********"}}`, "settings.json": app},
			want: `{"api_key":"sk-app","model":"openai/gpt-5"}`, source: "the OpenHands app's settings", skipped: "masked"},
		{name: "no model", files: map[string]string{"agent_settings.json": `{"llm": {"api_key": "k"}}`}, skipped: "names no LLM model"},
		{name: "not JSON", files: map[string]string{"agent_settings.json": `{"llm": `}, skipped: "not the JSON of an OpenHands agent"},
		{name: "a wrong shape", files: map[string]string{"settings.json": `{"llm_model": 7}`}, skipped: "is not a string"},
		{name: "a FIFO", plant: "mkfifo agent_settings.json", skipped: "FIFO"},
		{name: "a symlink", plant: "ln -s " + outside + "/agent_settings.json agent_settings.json", skipped: "is a symbolic link"},
		{name: "a directory", plant: "mkdir agent_settings.json", skipped: "directory"},
		{name: "OPENHANDS_PERSISTENCE_DIR", env: map[string]string{"OPENHANDS_PERSISTENCE_DIR": outside},
			want: `{"api_key":"sk-cli","base_url":"https://llm.example","model":"anthropic/claude-sonnet-4-5"}`, source: filepath.Join(outside, "agent_settings.json")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			dir := filepath.Join(home, ".openhands")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			for name, body := range c.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if c.plant != "" {
				shellplant.Run(t, dir, c.plant)
			}
			llm, source, skipped := localserver.UserLLM(env(c.env), home)
			got := ""
			if llm != nil {
				var m map[string]string
				if err := json.Unmarshal(llm, &m); err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(m)
				got = string(b)
			}
			if got != c.want || !strings.Contains(source, c.source) {
				t.Errorf("got %s from %q; want %s from %q", got, source, c.want, c.source)
			}
			joined := strings.Join(skipped, "; ")
			if (c.skipped == "") != (joined == "") || !strings.Contains(joined, c.skipped) {
				t.Errorf("skipped %q; want it to say %q", joined, c.skipped)
			}
			if strings.Contains(source+joined, "sk-") {
				t.Errorf("a key in the words: %s %s", source, joined)
			}
		})
	}
}
