package localserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/oh-bridge/oh-bridge/internal/ownfile"
)

// The person's own OpenHands settings, for a new conversation's LLM when
// the editor names none and the agent-server keeps none:
//
//   - the OpenHands CLI's agent_settings.json in $OPENHANDS_PERSISTENCE_DIR
//     (~/.openhands by default): a serialized SDK Agent, its llm
//     {model, api_key, base_url} written in plain text (AgentStore.save
//     dumps with expose_secrets). Sources: OpenHands-CLI
//     openhands_cli/locations.py, stores/agent_store.py; software-agent-sdk
//     pydantic_secrets.py.
//   - the retired OpenHands app's settings.json in ~/.openhands: flat
//     llm_model, llm_api_key, llm_base_url. The agent-server's own
//     settings.json has the same name but another shape (schema_version,
//     agent_settings) and its key encrypted: that one is read through the
//     server (agentserver.Client.StoredLLM), never here.
//
// The files are read like a key file (ownfile): regular, not a link,
// non-blocking, capped, the person's and writable by no one else. A key found here goes to the agent-server with the
// conversation, as one typed in the editor would; it is never logged.

// settingsLimit caps a settings file: an agent spec is a few KiB.
const settingsLimit = 1 << 20

// UserLLM finds the LLM in the person's OpenHands settings. source names
// the file ("the OpenHands CLI's settings (~/.openhands/agent_settings.json)");
// skipped lists files that were there and could not be used, with why.
func UserLLM(getenv func(string) string, home string) (llm json.RawMessage, source string, skipped []string) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	cliDir := getenv("OPENHANDS_PERSISTENCE_DIR")
	if cliDir == "" && home != "" {
		cliDir = filepath.Join(home, ".openhands")
	}
	if cliDir == "" {
		return nil, "", nil
	}
	type place struct {
		name, words string
		read        func([]byte) (json.RawMessage, error)
	}
	for _, p := range []place{
		{"agent_settings.json", "the OpenHands CLI's settings", cliLLM},
		{"settings.json", "the OpenHands app's settings", appLLM},
	} {
		path := filepath.Join(cliDir, p.name)
		data, err := ownfile.Read(path, ownfile.Options{What: p.words + " file", Limit: settingsLimit, OthersMayRead: true})
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			llm, err = p.read(data)
		}
		if errors.Is(err, errNotThisShape) {
			continue
		}
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		return llm, fmt.Sprintf("%s (%s)", p.words, path), skipped
	}
	return nil, "", skipped
}

// FallbackLLM is UserLLM as a conversation's fallback for its LLM
// (conversation.Options.FallbackLLM), saying in log why a settings file
// was passed over and where the model came from (never the key).
func FallbackLLM(log *slog.Logger) func() (json.RawMessage, string) {
	return func() (json.RawMessage, string) {
		llm, source, skipped := UserLLM(nil, "")
		for _, why := range skipped {
			log.Warn("an OpenHands settings file is passed over", "why", why)
		}
		if llm != nil {
			log.Info("the new conversation's model comes from the person's OpenHands settings", "source", source)
		}
		return llm, source
	}
}

// errNotThisShape: the file is another program's of the same name (the
// agent-server's settings.json).
var errNotThisShape = errors.New("not this kind of settings file")

// cliLLM reads the llm of the CLI's serialized agent.
func cliLLM(data []byte) (json.RawMessage, error) {
	var agent struct {
		LLM *struct {
			Model   string `json:"model"`
			APIKey  any    `json:"api_key"`
			BaseURL string `json:"base_url"`
		} `json:"llm"`
	}
	if err := json.Unmarshal(data, &agent); err != nil {
		return nil, fmt.Errorf("not the JSON of an OpenHands agent: %w", err)
	}
	if agent.LLM == nil || strings.TrimSpace(agent.LLM.Model) == "" {
		return nil, errors.New("it names no LLM model (llm.model)")
	}
	key, ok := agent.LLM.APIKey.(string)
	if agent.LLM.APIKey != nil && (!ok || strings.Trim(key, "*") == "") {
		return nil, errors.New("its llm.api_key is masked or not a string: set the key in the editor instead")
	}
	return llmJSON(agent.LLM.Model, key, agent.LLM.BaseURL), nil
}

// appLLM reads the retired app's flat settings.
func appLLM(data []byte) (json.RawMessage, error) {
	var s map[string]json.RawMessage
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, ok := s["agent_settings"]; ok {
		return nil, errNotThisShape
	}
	if _, ok := s["schema_version"]; ok {
		return nil, errNotThisShape
	}
	var flat struct {
		Model   string `json:"llm_model"`
		APIKey  string `json:"llm_api_key"`
		BaseURL string `json:"llm_base_url"`
	}
	if err := json.Unmarshal(data, &flat); err != nil {
		return nil, fmt.Errorf("its llm_model, llm_api_key or llm_base_url is not a string: %w", err)
	}
	if strings.TrimSpace(flat.Model) == "" {
		return nil, errors.New("it names no LLM model (llm_model)")
	}
	return llmJSON(flat.Model, flat.APIKey, flat.BaseURL), nil
}

func llmJSON(model, key, baseURL string) json.RawMessage {
	m := map[string]string{"model": strings.TrimSpace(model)}
	if key != "" {
		m["api_key"] = key
	}
	if baseURL != "" {
		m["base_url"] = baseURL
	}
	b, _ := json.Marshal(m)
	return b
}
