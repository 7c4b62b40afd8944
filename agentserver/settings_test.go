package agentserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
)

// TestLLMFromSettings: with no LLM given, a new conversation takes the one
// the server keeps in its settings, its key read encrypted and sent back
// so (the bridge never holds it), or a local model's without a key; else
// the face's fallback (the person's OpenHands settings file); else it says
// where it looked. A server that stored nothing answers its defaults (a
// model, no key, no base URL): no LLM. The status names the source.
func TestLLMFromSettings(t *testing.T) {
	b := newBridge(t)
	record := filepath.Join(t.TempDir(), "record.jsonl")
	// The stand-in: servers whose settings hold an LLM (--settings-llm),
	// where the shared real server's stay empty for the other tests, and
	// a record of each request and answer (--record).
	stored := agentservertest.Start(t, "--settings-llm", `{"model": "stored/model", "api_key": "sk-stored-secret"}`, "--record", record)
	local := agentservertest.Start(t, "--settings-llm", `{"model": "ollama/qwen3", "base_url": "http://127.0.0.1:11434"}`)
	plain := sharedServer(t, realserver.Latest)

	o := connectOptions(b, stored.URL, newRecorder())
	o.LLM = nil
	o.FallbackLLM = func() (json.RawMessage, string) {
		t.Error("the fallback was asked, with the server's own LLM there")
		return nil, ""
	}
	s := connect(t, o)
	if st := s.Status(); st.LLMSource != "the agent-server's own settings" {
		t.Errorf("status %+v: want the LLM from the server's settings", st)
	}
	if _, err := stored.WaitLine("SETTINGS_READ encrypted", 10*time.Second); err != nil {
		t.Error(err)
	}
	if _, err := stored.WaitLine("LLM_KEY_DECRYPTED stored/model", 10*time.Second); err != nil {
		t.Error(err)
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "sk-stored-secret") {
		t.Error("the stored key crossed the wire in plain text")
	}

	o = connectOptions(b, local.URL, newRecorder())
	o.LLM = nil
	o.FallbackLLM = func() (json.RawMessage, string) {
		t.Error("the fallback was asked, with a local model in the server's settings")
		return nil, ""
	}
	if st := connect(t, o).Status(); st.LLMSource != "the agent-server's own settings" {
		t.Errorf("status %+v: want the local model from the server's settings", st)
	}

	o = connectOptions(b, plain.URL, newRecorder())
	o.SessionAPIKey = plain.Key
	o.LLM = nil
	o.FallbackLLM = func() (json.RawMessage, string) {
		return json.RawMessage(`{"model": "cli/model", "api_key": "sk-cli"}`), "the OpenHands CLI's settings (/h/.openhands/agent_settings.json)"
	}
	s = connect(t, o)
	if st := s.Status(); st.LLMSource != "the OpenHands CLI's settings (/h/.openhands/agent_settings.json)" {
		t.Errorf("status %+v: want the fallback's source", st)
	}

	o.FallbackLLM = func() (json.RawMessage, string) { return nil, "" }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = agentserver.Connect(ctx, o)
	var oe *agentserver.OptionError
	if !errors.As(err, &oe) || oe.Option != "llm" || !strings.Contains(err.Error(), "~/.openhands/agent_settings.json") {
		t.Fatalf("no LLM anywhere: %v", err)
	}
}
