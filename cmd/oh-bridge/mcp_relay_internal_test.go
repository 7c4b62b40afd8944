package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstalledRelayGoesToItsOwn: the secret `oh-bridge relay install`
// kept is found for its own server and relay, and goes to no other.
func TestInstalledRelayGoesToItsOwn(t *testing.T) {
	config := t.TempDir()
	// The config directory of every platform, in the test's own.
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv("HOME", config)
	t.Setenv("APPDATA", config)
	t.Setenv("OH_BRIDGE_RELAY_SECRET", "")
	if !strings.HasPrefix(defaultRelaySecretPath(), config) {
		t.Fatalf("the relay's secret would be kept outside the test: %s", defaultRelaySecretPath())
	}
	if err := os.MkdirAll(filepath.Dir(defaultRelaySecretPath()), 0o700); err != nil {
		t.Fatal(err)
	}
	const server, relay = "https://cloud.example/s/abc/agent", "https://cloud.example/s/abc/relay"
	if err := os.WriteFile(defaultRelaySecretPath(), []byte(installedRecord("S3CRET", relay, server)), 0o600); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)

	got, err := acpRelay("", "", acpConfigFile{}, server+"/", log)
	if err != nil || got.URL != relay || got.Secret != "S3CRET" {
		t.Errorf("the server's own relay: %+v %v", got, err)
	}
	if got, err := acpRelay("", "", acpConfigFile{}, "https://other.example/agent", log); err != nil || got.URL != "" {
		t.Errorf("another server took the installed relay: %+v %v", got, err)
	}
	if got, err := acpRelay(relay, "", acpConfigFile{}, server, log); err != nil || got.Secret != "S3CRET" {
		t.Errorf("--relay naming the installed relay: %+v %v", got, err)
	}
	got, err = acpRelay("https://elsewhere.example/relay", "", acpConfigFile{}, server, log)
	if err == nil || got.Secret != "" || !strings.Contains(err.Error(), "needs its pairing secret") {
		t.Errorf("another relay was given the installed relay's secret: %+v %v", got, err)
	}
	// The config file names a relay and its secret file.
	other := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(other, []byte("OTHER\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := acpConfigFile{RelayURL: "https://elsewhere.example/relay", RelaySecretFile: other}
	if got, err := acpRelay(file.RelayURL, "", file, server, log); err != nil || got.Secret != "OTHER" {
		t.Errorf("the config file's relay: %+v %v", got, err)
	}
	if _, err := acpRelay("", other, acpConfigFile{}, server, log); err == nil {
		t.Error("a secret file with no relay was taken")
	}
}
