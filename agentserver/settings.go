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
}

// StoredLLM is the LLM of the server's own settings, its key encrypted
// (to go back with secrets_encrypted), or nil when the server keeps none:
// no model, no key, or no settings at all (a server older than the
// settings API, or one without a secret to encrypt with, which answers
// 503 to "encrypted").
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
		Model string `json:"model"`
	}
	// A model without a key is kept: a local model may need none.
	if len(s.AgentSettings.LLM) == 0 || json.Unmarshal(s.AgentSettings.LLM, &llm) != nil || llm.Model == "" {
		return nil, nil
	}
	return s.AgentSettings.LLM, nil
}

var errNoSettings = errors.New("the agent-server has no settings API")
