package handlers

import (
	"context"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// openhandsMethods are the openhands/* methods.
func (h *Handlers) openhandsMethods() map[string]rpc.Method { return nil }

// startOpenHands prepares the OpenHands action runtime once the roots are known.
func (h *Handlers) startOpenHands(roots []string) error { return nil }

// stopOpenHands closes the agent's shells.
func (h *Handlers) stopOpenHands(ctx context.Context) {}

// openhandsCapabilities are merged into initialize's result capabilities.
func (h *Handlers) openhandsCapabilities() map[string]any { return nil }
