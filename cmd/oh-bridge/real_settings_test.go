package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// TestConnectTakesTheServersStoredModel: the person set their model and
// key in the real agent-server's settings (through its own API, as Agent
// Canvas's settings page does). openhands/connect with no llm starts the
// conversation with that model: the bridge reads it with the key encrypted
// (X-Expose-Secrets: encrypted) and hands it back for the server to
// decrypt (secrets_encrypted), so the key reaches the model without ever
// passing through the bridge in the clear. The status says where the model
// came from. (The shared server keeps these settings for the tests after
// this one; they all name their model.)
func TestConnectTakesTheServersStoredModel(t *testing.T) {
	srv := realServer(t, realserver.Latest)
	const secret = "sk-stored-in-the-server"
	keyed := func(r *scriptedllm.Request) error {
		if got := r.Header.Get("Authorization"); got != "Bearer "+secret {
			return fmt.Errorf("the model was called with Authorization %q, want the stored key", got)
		}
		return nil
	}
	first := offered(terminalCall("echo from-stored > stored.txt"))
	first.Check = keyed
	model := scriptedllm.Start(t, first, scriptedllm.Turn{Check: keyed, Content: "Done with the stored model."})
	patch, _ := json.Marshal(map[string]any{"agent_settings_diff": map[string]any{"llm": map[string]any{
		"model": scriptedModel, "base_url": model.URL, "api_key": secret, "num_retries": 0}}})
	req, _ := http.NewRequest(http.MethodPatch, srv.URL+"/api/settings", bytes.NewReader(patch))
	req.Header.Set("X-Session-API-Key", srv.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH /api/settings: HTTP %d", resp.StatusCode)
	}

	// What the bridge reads: the key as the server's ciphertext.
	c, err := agentserver.NewClient(srv.URL, srv.Key, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := c.StoredLLM(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var llm struct {
		APIKey string `json:"api_key"`
	}
	json.Unmarshal(stored, &llm)
	if !strings.HasPrefix(llm.APIKey, "gAAAAA") || strings.Contains(string(stored), secret) {
		t.Fatalf("StoredLLM = %s; want the key as a Fernet token", stored)
	}

	ws, home := t.TempDir(), t.TempDir()
	e := startEditor(t, ws, []string{"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "OPENHANDS_PERSISTENCE_DIR="})
	var res struct {
		ConversationID string
		Status         agentserver.Status
	}
	if err := e.client.Call(ctxT(t), "openhands/connect", map[string]any{"serverUrl": srv.URL, "sessionApiKey": srv.Key, "task": "Use my model."}, &res); err != nil {
		t.Fatal(err)
	}
	if want := "the agent-server's own settings"; res.Status.LLMSource != want {
		t.Errorf("llmSource %q, want %q", res.Status.LLMSource, want)
	}
	awaitFile(t, filepath.Join(ws, "stored.txt"), "from-stored\n", time.Minute)
	e.awaitFinished(model, time.Minute)
	if strings.Contains(e.stderr.String(), secret) {
		t.Error("the bridge's log holds the stored key")
	}
}
