package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/ownfile"
	"github.com/oh-bridge/oh-bridge/relayinstall"
)

// relayInstallMain is `oh-bridge relay install`: with the person's
// consent, the bridge puts a relay beside an agent-server on another
// machine through that server's own API (its file upload and its bash),
// and keeps the pairing secret here. The person gives the URL at which
// their proxy exposes the relay's editors' side; nothing is opened here.
func relayInstallMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("oh-bridge relay install", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		server     = fs.String("server", os.Getenv("OH_BRIDGE_SERVER_URL"), "the agent-server's URL (its session key from OH_BRIDGE_SESSION_API_KEY)")
		publicURL  = fs.String("public-url", "", "the URL at which your proxy exposes the relay's editors' side (e.g. https://cloud.example/s/abc/relay)")
		agents     = fs.String("agents", relayinstall.DefaultAgents, "the relay's agents' side, on the server's machine")
		editors    = fs.String("editors", relayinstall.DefaultEditors, "the relay's editors' side, on the server's machine (where the proxy forwards)")
		secretFile = fs.String("secret-file", defaultRelaySecretPath(), "where to keep the pairing secret on this machine (mode 600)")
		binary     = fs.String("binary", "", "the oh-bridge binary for the server's platform (default: this one, when the platforms match)")
		yes        = fs.Bool("yes", false, "install without asking (what is done is still printed)")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: oh-bridge relay install --server URL --public-url URL [flags]\n\nPuts `oh-bridge relay` beside an agent-server on another machine, through the server's own file and bash API, after asking.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *server == "" || *publicURL == "" {
		fmt.Fprintln(stderr, "oh-bridge relay install: --server and --public-url are needed: the agent-server, and where your proxy exposes the relay to editors")
		return 2
	}
	if err := installRelay(context.Background(), relayInstall{server: *server, key: os.Getenv("OH_BRIDGE_SESSION_API_KEY"), publicURL: *publicURL,
		agents: *agents, editors: *editors, secretFile: *secretFile, binary: *binary, yes: *yes}, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, "oh-bridge relay install:", err)
		return 1
	}
	return 0
}

type relayInstall struct {
	server, key, publicURL, agents, editors, secretFile, binary string
	yes                                                         bool
}

// acpLine is the ACP command that uses the relay just installed: with
// the secret where `oh-bridge acp` looks, the server alone finds it.
func acpLine(o relayInstall) string {
	if o.secretFile == defaultRelaySecretPath() {
		return "oh-bridge acp --server " + o.server + " (it finds the relay installed beside that server)"
	}
	return fmt.Sprintf("oh-bridge acp --server %s --relay %s --relay-secret-file %s", o.server, o.publicURL, o.secretFile)
}

// defaultRelaySecretPath is where the bridge keeps a relay's secret.
func defaultRelaySecretPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "oh-bridge", "relay-secret")
}

func installRelay(ctx context.Context, o relayInstall, stdin io.Reader, stdout io.Writer) error {
	c, err := agentserver.NewClient(o.server, o.key, nil, trust().HTTPClient(60*time.Second))
	if err != nil {
		return err
	}
	plan, err := relayinstall.Prepare(ctx, c, relayinstall.Options{Server: o.server, PublicURL: o.publicURL, Agents: o.agents, Editors: o.editors, Binary: o.binary})
	if err != nil {
		return err
	}
	for _, line := range plan.Words() {
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "The secret is kept here in %s. Anyone with it can reach the tools of the windows you register.\n", o.secretFile)
	if !o.yes {
		fmt.Fprint(stdout, "Install the relay? [y/N] ")
		answer, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Not installed.")
			return nil
		}
	}
	secret, said, err := plan.Install(ctx)
	if err != nil {
		return err
	}
	// Kept with whose it is: `oh-bridge acp --server` for this server
	// finds it, and it goes to no other relay.
	if err := ownfile.Write(o.secretFile, []byte(installedRecord(secret, o.publicURL, o.server)), "the bridge's config directory"); err != nil {
		return fmt.Errorf("the relay runs, but its secret could not be kept here: %w", err)
	}
	fmt.Fprintf(stdout, "%s\nThe relay runs. In VS Code, set \"openhands.relayUrl\" to %s and \"OpenHands: Set Relay Pairing Secret\" to the secret on the first line of %s (or run \"OpenHands: Install Relay on the Server\" there instead of this);\nfrom an ACP editor: %s\n",
		said, o.publicURL, o.secretFile, acpLine(o))
	return nil
}
