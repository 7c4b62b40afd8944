package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
)

// The agent-server keeps the person's settings (since 1.20.1; in
// ~/.openhands/settings.json with Agent Canvas), the LLM among them with
// its key encrypted under the server's secret. GET /api/settings with
// X-Expose-Secrets: encrypted answers the key as that ciphertext, and a
// StartConversationRequest with secrets_encrypted: true has the server
// decrypt it again: the bridge starts a conversation with the person's own
// model and key without ever holding the key. Sources: openhands-agent-
// server settings_router.py (X-Expose-Secrets: absent, "encrypted",
// "plaintext"), conversation/request.py (secrets_encrypted),
// conversation_service.py (decrypting it).

// storedSettings is the part of GET /api/settings the bridge reads.
type storedSettings struct {
	AgentSettings struct {
		LLM json.RawMessage `json:"llm"`
	} `json:"agent_settings"`
	LLMAPIKeyIsSet bool `json:"llm_api_key_is_set"`
}

// StoredLLM is the LLM of the server's own settings, its key encrypted
// (to go back with secrets_encrypted), or nil when the server keeps none:
// no model, neither a key nor a base URL, or no settings at all (a server
// older than the settings API, or one without a secret to encrypt with,
// which answers 503 to "encrypted"). A server that stored nothing answers
// its defaults, whose model is set (1.58.2: "gpt-5.6") with no key and no
// base URL: that is no LLM of the person's.
func (c *Client) StoredLLM(ctx context.Context) (json.RawMessage, error) {
	cc := *c
	cc.header = c.header.Clone()
	if cc.header == nil {
		cc.header = http.Header{}
	}
	cc.header.Set("X-Expose-Secrets", "encrypted")
	var s storedSettings
	err := cc.do(ctx, http.MethodGet, "/api/settings", nil, nil, &s, errNoSettings)
	var se *ServerError
	switch {
	case errors.Is(err, errNoSettings), errors.As(err, &se) && (se.Status == http.StatusServiceUnavailable || se.Status == http.StatusMethodNotAllowed):
		return nil, nil
	case err != nil:
		return nil, err
	}
	var llm struct {
		Model   string `json:"model"`
		BaseURL string `json:"base_url"`
	}
	// A model without a key is kept when it has a base URL: a local
	// model may need no key.
	if len(s.AgentSettings.LLM) == 0 || json.Unmarshal(s.AgentSettings.LLM, &llm) != nil || llm.Model == "" ||
		(!s.LLMAPIKeyIsSet && llm.BaseURL == "") {
		return nil, nil
	}
	return s.AgentSettings.LLM, nil
}

var errNoSettings = errors.New("the agent-server has no settings API")
