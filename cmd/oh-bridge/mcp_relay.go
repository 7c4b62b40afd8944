package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/internal/ownfile"
	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/relaylink"
	"github.com/oh-bridge/oh-bridge/session"
)

// relayFromFlags is the relay a face was given: its URL, and its pairing
// secret from the file named, or OH_BRIDGE_RELAY_SECRET.
func relayFromFlags(url, secretFile string) (facekit.Relay, error) {
	if url == "" {
		return facekit.Relay{}, nil
	}
	secret, err := relaySecret(secretFile)
	if err != nil {
		return facekit.Relay{}, err
	}
	return facekit.Relay{URL: url, Secret: secret}, nil
}

// relaySecret reads the pairing secret: the file's first line, read as
// the bridge's own file, or OH_BRIDGE_RELAY_SECRET.
func relaySecret(file string) (string, error) {
	if file == "" {
		if v := os.Getenv("OH_BRIDGE_RELAY_SECRET"); v != "" {
			return v, nil
		}
		return "", errors.New("a relay needs its pairing secret: --relay-secret-file FILE (or OH_BRIDGE_RELAY_SECRET), the secret the relay was started with")
	}
	data, err := ownfile.Read(file, ownfile.Options{What: "the relay's secret file", Limit: 64 << 10})
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("the relay's secret file %s is not there: copy the secret the relay was started with into it (chmod 600)", file)
	}
	if err != nil {
		return "", err
	}
	secret, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
	return strings.TrimSpace(secret), nil
}

// serveRelay is `oh-bridge mcp --relay URL`: the workspace registers as a
// window with a relay (dialing out; nothing listens here), binds one
// conversation, and prints the mcp_config entry an agent-server
// conversation names to reach it. It serves until ctx ends.
func serveRelay(ctx context.Context, url, secretFile string, sess *session.Session, srv *mcpserver.Server, logger *slog.Logger) error {
	secret, err := relaySecret(secretFile)
	if err != nil {
		return err
	}
	roots := sess.ChosenRoots()
	link, err := relaylink.Dial(ctx, relaylink.Options{URL: url, Secret: secret, Name: filepath.Base(roots[0]), Roots: roots,
		Version: version, Host: srv, Logger: logger}, 30*time.Second)
	if err != nil {
		return err
	}
	defer link.Close()
	b, err := link.Bind(ctx)
	if err != nil {
		return err
	}
	entry, _ := json.Marshal(map[string]any{"oh-bridge": map[string]any{"transport": "http", "url": b.URL,
		"headers": map[string]string{"Authorization": "Bearer " + b.Token}}})
	fmt.Println(string(entry))
	logger.Info("serving MCP through the relay", "relay", url, "conversation", b.Conversation)
	<-ctx.Done()
	return nil
}
