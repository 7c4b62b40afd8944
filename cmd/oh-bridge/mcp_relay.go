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
// secret (relaySecret).
func relayFromFlags(url, secretFile string) (facekit.Relay, error) {
	if url == "" {
		return facekit.Relay{}, nil
	}
	secret, err := relaySecret(secretFile, url)
	if err != nil {
		return facekit.Relay{}, err
	}
	return facekit.Relay{URL: url, Secret: secret}, nil
}

// acpRelay is the relay ACP's conversations reach the editor through,
// found as the server is: the flag, the environment, the config file;
// and with none given, the relay `oh-bridge relay install` put beside
// this very server, as it recorded it here.
func acpRelay(url, secretFile string, file acpConfigFile, server string, logger *slog.Logger) (facekit.Relay, error) {
	if url != "" {
		if secretFile == "" && url == file.RelayURL {
			secretFile = file.RelaySecretFile
		}
		return relayFromFlags(url, secretFile)
	}
	if secretFile != "" {
		return facekit.Relay{}, errors.New("--relay-secret-file without a relay: give --relay URL too (the relay's editors' side)")
	}
	if rec, ok := readInstalledRelay(defaultRelaySecretPath()); ok && server != "" && sameURL(rec.Server, server) {
		logger.Info("using the relay `oh-bridge relay install` put beside the server", "server", server, "relay", rec.URL)
		return facekit.Relay{URL: rec.URL, Secret: rec.Secret}, nil
	}
	return facekit.Relay{}, nil
}

// installedRelay is what `oh-bridge relay install` kept here of the relay
// it put beside a server: the secret file's first line is the secret,
// then "relay URL" and "server URL" lines say whose it is.
type installedRelay struct {
	Secret, URL, Server string
}

// readInstalledRelay reads the record `oh-bridge relay install` keeps at
// path; ok is false when there is none (or a bare secret file).
func readInstalledRelay(path string) (installedRelay, bool) {
	if path == "" {
		return installedRelay{}, false
	}
	data, err := ownfile.Read(path, ownfile.Options{What: "the relay's secret file", Limit: 64 << 10})
	if err != nil {
		return installedRelay{}, false
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	rec := installedRelay{Secret: strings.TrimSpace(lines[0])}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(strings.TrimSpace(l), " ")
		switch k {
		case "relay":
			rec.URL = v
		case "server":
			rec.Server = v
		}
	}
	return rec, rec.Secret != "" && rec.URL != "" && rec.Server != ""
}

// installedRecord is the secret file's text for a relay installed beside
// server, reachable at url.
func installedRecord(secret, url, server string) string {
	return fmt.Sprintf("%s\nrelay %s\nserver %s\n", secret, url, server)
}

// sameURL compares two URLs as the person would write them.
func sameURL(a, b string) bool { return strings.TrimRight(a, "/") == strings.TrimRight(b, "/") }

// relaySecret reads the pairing secret of the relay at url: the file's
// first line, read as the bridge's own file, or OH_BRIDGE_RELAY_SECRET,
// or the secret `oh-bridge relay install` kept for that relay. A secret
// goes only to the relay it was made for: the installed one is used for
// its own URL alone.
func relaySecret(file, url string) (string, error) {
	if file == "" {
		if v := os.Getenv("OH_BRIDGE_RELAY_SECRET"); v != "" {
			return v, nil
		}
		if rec, ok := readInstalledRelay(defaultRelaySecretPath()); ok && sameURL(rec.URL, url) {
			return rec.Secret, nil
		}
		return "", fmt.Errorf("the relay at %s needs its pairing secret: --relay-secret-file FILE (or OH_BRIDGE_RELAY_SECRET, or relaySecretFile in the config file), the secret the relay was started with; `oh-bridge relay install` keeps the one it makes in %s", url, defaultRelaySecretPath())
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
	secret, err := relaySecret(secretFile, url)
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
