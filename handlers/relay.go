package handlers

import (
	"context"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/relayinstall"
	"github.com/oh-bridge/oh-bridge/rpc"
)

type installRelayParams struct {
	// ServerURL and SessionAPIKey are the agent-server on the other
	// machine, whose bash and file upload put the relay beside it.
	ServerURL     string `json:"serverUrl"`
	SessionAPIKey string `json:"sessionApiKey,omitempty"`
	// PublicURL is where the person's proxy exposes the relay's editors'
	// side: the URL editors dial.
	PublicURL string `json:"publicUrl"`
	// Confirmed installs. Without it the answer says what an install
	// would do, and nothing changes on either machine: the editor shows
	// it and asks.
	Confirmed bool `json:"confirmed,omitempty"`
}

type installRelayResult struct {
	// Plan says what the install does there, a line each, for the person
	// to agree to.
	Plan []string `json:"plan"`
	// Installed is true once the relay runs; then RelayURL (the
	// PublicURL given) and RelaySecret (its new pairing secret, for the
	// editor's secret storage) are set, and Said is the relay's first
	// words.
	Installed   bool   `json:"installed"`
	RelayURL    string `json:"relayUrl,omitempty"`
	RelaySecret string `json:"relaySecret,omitempty"`
	Said        string `json:"said,omitempty"`
}

// installRelay is openhands/install_relay: `oh-bridge relay install`
// for the editor, which asks the person between the two calls.
func (h *Handlers) installRelay(ctx context.Context, p *installRelayParams) (*installRelayResult, error) {
	if err := checkServerURL(p.ServerURL); err != nil {
		return nil, err
	}
	if p.PublicURL == "" {
		return nil, rpc.InvalidParams("publicUrl", "the URL at which your proxy exposes the relay's editors' side, e.g. https://cloud.example/s/abc/relay")
	}
	// The binary's upload can take a while on a slow link.
	c, err := agentserver.NewClient(p.ServerURL, h.local.KeyFor(p.ServerURL, p.SessionAPIKey), nil, h.cfg.Trust.HTTPClient(5*time.Minute))
	if err != nil {
		return nil, rpc.InvalidParams("serverUrl", err.Error())
	}
	plan, err := relayinstall.Prepare(ctx, c, relayinstall.Options{Server: p.ServerURL, PublicURL: p.PublicURL})
	if err != nil {
		return nil, err
	}
	res := &installRelayResult{Plan: plan.Words()}
	if !p.Confirmed {
		return res, nil
	}
	secret, said, err := plan.Install(ctx)
	if err != nil {
		return nil, err
	}
	h.log.Info("installed a relay beside the agent-server", "server", p.ServerURL, "relay", p.PublicURL)
	res.Installed, res.RelayURL, res.RelaySecret, res.Said = true, p.PublicURL, secret, said
	return res, nil
}
