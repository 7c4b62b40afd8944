package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/ownfile"
	"github.com/oh-bridge/oh-bridge/relay"
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
		agents     = fs.String("agents", "127.0.0.1:8931", "the relay's agents' side, on the server's machine")
		editors    = fs.String("editors", "127.0.0.1:8932", "the relay's editors' side, on the server's machine (where the proxy forwards)")
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

// defaultRelaySecretPath is where the bridge keeps a relay's secret.
func defaultRelaySecretPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "oh-bridge", "relay-secret")
}

// platformOf maps `uname -sm` to Go's names.
func platformOf(uname string) (goos, goarch string) {
	f := strings.Fields(uname)
	if len(f) != 2 {
		return "", ""
	}
	goos = strings.ToLower(f[0])
	switch f[1] {
	case "x86_64", "amd64":
		goarch = "amd64"
	case "aarch64", "arm64":
		goarch = "arm64"
	default:
		goarch = f[1]
	}
	return goos, goarch
}

func installRelay(ctx context.Context, o relayInstall, stdin io.Reader, stdout io.Writer) error {
	c, err := agentserver.NewClient(o.server, o.key, nil, trust().HTTPClient(60*time.Second))
	if err != nil {
		return err
	}
	// Where it runs, and as whom.
	probe, err := c.ExecuteBash(ctx, `uname -sm; printf '%s\n' "$HOME"`, 30)
	if err != nil {
		return fmt.Errorf("asking the agent-server at %s what machine it runs on: %w", o.server, err)
	}
	lines := strings.Split(strings.TrimSpace(probe.Stdout), "\n")
	if probe.ExitCode != 0 || len(lines) < 2 || !strings.HasPrefix(lines[1], "/") {
		return fmt.Errorf("the agent-server's bash answered %q (exit %d) to `uname -sm; echo $HOME`", probe.Stdout+probe.Stderr, probe.ExitCode)
	}
	goos, goarch := platformOf(lines[0])
	bin := o.binary
	if bin == "" {
		if goos != runtime.GOOS || goarch != runtime.GOARCH {
			return fmt.Errorf("the agent-server runs on %s/%s and this bridge is %s/%s: give --binary with oh-bridge for %s/%s (the npm package oh-bridge-%s-%s carries it)",
				goos, goarch, runtime.GOOS, runtime.GOARCH, goos, goarch, goos, npmArch(goarch))
		}
		if bin, err = os.Executable(); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	dir := lines[1] + "/.oh-bridge"
	remoteBin, remoteSecret, remoteLog := dir+"/bin/oh-bridge", dir+"/relay-secret", dir+"/relay.log"
	fmt.Fprintf(stdout, "The agent-server at %s runs on %s, as the user whose home is %s.\n", o.server, lines[0], lines[1])
	fmt.Fprintf(stdout, "This puts %s (%.1f MB) there as %s, with a new pairing secret in %s (mode 600),\n", bin, float64(len(data))/(1<<20), remoteBin, remoteSecret)
	fmt.Fprintf(stdout, "and starts `oh-bridge relay`: its agents' side on %s and its editors' side on %s, which your proxy exposes as %s.\n", o.agents, o.editors, o.publicURL)
	fmt.Fprintf(stdout, "The secret is kept here in %s. Anyone with it can reach the tools of the windows you register.\n", o.secretFile)
	if !o.yes {
		fmt.Fprint(stdout, "Install the relay? [y/N] ")
		answer, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Not installed.")
			return nil
		}
	}
	secret := relay.NewSecret()
	if out, err := c.ExecuteBash(ctx, fmt.Sprintf("mkdir -p %s/bin && chmod 700 %s %s/bin", shq(dir), shq(dir), shq(dir)), 30); err != nil || out.ExitCode != 0 {
		return fmt.Errorf("making %s on the server's machine: %v %s", dir, err, outText(out))
	}
	if err := c.Upload(ctx, remoteBin, bytes.NewReader(data)); err != nil {
		var se *agentserver.ServerError
		if errors.As(err, &se) && se.Status == http.StatusRequestEntityTooLarge {
			return fmt.Errorf("the proxy in front of the agent-server refused the binary's %.1f MB (HTTP 413): let the agent-server's location take it (nginx: client_max_body_size 64m;), or put the relay there by hand (docs/relay.md)", float64(len(data))/(1<<20))
		}
		return fmt.Errorf("uploading the binary: %w", err)
	}
	if err := c.Upload(ctx, remoteSecret, strings.NewReader(secret+"\n")); err != nil {
		return fmt.Errorf("uploading the secret: %w", err)
	}
	start := fmt.Sprintf("chmod 700 %[1]s && chmod 600 %[2]s && : > %[3]s && chmod 600 %[3]s && "+
		"(setsid nohup %[1]s relay --secret-file %[2]s --agents %[4]s --editors %[5]s > %[3]s 2>&1 < /dev/null &)",
		shq(remoteBin), shq(remoteSecret), shq(remoteLog), shq(o.agents), shq(o.editors))
	if out, err := c.ExecuteBash(ctx, start, 30); err != nil || out.ExitCode != 0 {
		return fmt.Errorf("starting the relay: %v %s", err, outText(out))
	}
	// Its first line says where it listens; a failure says why.
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := c.ExecuteBash(ctx, "cat "+shq(remoteLog), 30)
		if err != nil {
			return err
		}
		switch {
		case strings.Contains(out.Stdout, "relay: agents' side"):
			if err := ownfile.Write(o.secretFile, []byte(secret+"\n"), "the bridge's config directory"); err != nil {
				return fmt.Errorf("the relay runs, but its secret could not be kept here: %w", err)
			}
			fmt.Fprintf(stdout, "%s\nThe relay runs. In VS Code, set \"openhands.relayUrl\" to %s and \"OpenHands: Set Relay Pairing Secret\" to the secret in %s;\nfrom an ACP editor: oh-bridge acp --server %s --relay %s --relay-secret-file %s\n",
				strings.TrimSpace(out.Stdout), o.publicURL, o.secretFile, o.server, o.publicURL, o.secretFile)
			return nil
		case strings.Contains(out.Stdout, "oh-bridge relay:"):
			return errors.New("the relay did not start: " + strings.TrimSpace(out.Stdout))
		case time.Now().After(deadline):
			return fmt.Errorf("the relay said nothing in 20 s; its log (%s) holds: %q", remoteLog, out.Stdout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond): // the server's machine sends no event; its log is read again
		}
	}
}

// npmArch is Node's name for a Go architecture, as the platform
// packages are named.
func npmArch(goarch string) string {
	if goarch == "amd64" {
		return "x64"
	}
	return goarch
}

// shq quotes s for the server's bash.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func outText(o *agentserver.BashOutput) string {
	if o == nil {
		return ""
	}
	return strings.TrimSpace(o.Stdout + " " + o.Stderr)
}
