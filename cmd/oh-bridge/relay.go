package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ownfile"
	"github.com/oh-bridge/oh-bridge/relay"
	"github.com/oh-bridge/oh-bridge/relay/wire"
)

// relayMain is `oh-bridge relay`: run where an agent-server runs, it
// serves the tools of the editor windows that dial it to that server's
// agents. `oh-bridge relay secret` prints a new pairing secret.
func relayMain(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "secret" {
		fmt.Fprintln(stdout, wire.NewSecret())
		return 0
	}
	if len(args) > 0 && args[0] == "install" {
		return relayInstallMain(args[1:], os.Stdin, stdout, stderr)
	}
	fs := flag.NewFlagSet("oh-bridge relay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		agents      = fs.String("agents", "127.0.0.1:8931", "the agents' side: where the agent-server's agents reach the tools over MCP")
		agentURL    = fs.String("agent-url", "", "the agents' side's URL as the agents reach it (default: http://<--agents>)")
		editors     = fs.String("editors", "127.0.0.1:8932", "the editors' side: where the person's bridges dial in (behind your proxy)")
		secretFile  = fs.String("secret-file", "", "a file with the pairing secrets, one a line (each a person); make one with `oh-bridge relay secret`")
		allowRemote = fs.Bool("allow-remote", false, "listen on an address other machines reach (put TLS in front: docs/relay.md)")
		grace       = fs.Duration("grace", relay.DefaultGrace, "how long a window whose link dropped is kept for it to come back")
		callTimeout = fs.Duration("call-timeout", relay.DefaultCallTimeout, "the longest a tool call may take")
		maxWindows  = fs.Int("max-windows", relay.DefaultMaxWindows, "the most windows registered at once")
		maxConvs    = fs.Int("max-conversations", relay.DefaultMaxConversations, "the most conversations bound at once")
		maxCalls    = fs.Int("max-calls", relay.DefaultMaxCalls, "the most tool calls running at once")
	)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: oh-bridge relay --secret-file FILE [flags]\n       oh-bridge relay secret\n       oh-bridge relay install --server URL --public-url URL\n\nServes the tools of the editor windows that dial in to the agents of an agent-server on this machine.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "oh-bridge relay:", err)
		return 1
	}
	if *secretFile == "" {
		fmt.Fprintln(stderr, "oh-bridge relay: --secret-file is needed: `oh-bridge relay secret > FILE; chmod 600 FILE`, and give the same secret to your bridge")
		return 2
	}
	secrets, err := readSecrets(*secretFile)
	if err != nil {
		return fail(err)
	}
	for _, addr := range []string{*agents, *editors} {
		if err := checkListen(addr, *allowRemote); err != nil {
			return fail(err)
		}
	}
	r, err := relay.New(relay.Options{Secrets: secrets, AgentBase: *agentURL, Grace: *grace, CallTimeout: *callTimeout,
		MaxWindows: *maxWindows, MaxConversations: *maxConvs, MaxCalls: *maxCalls, Version: version, Logger: slog.New(slog.NewTextHandler(stderr, nil))})
	if err != nil {
		return fail(err)
	}
	agentLn, err := net.Listen("tcp", *agents)
	if err != nil {
		return fail(fmt.Errorf("the agents' side cannot listen on %s: %w (choose another with --agents)", *agents, err))
	}
	editorLn, err := net.Listen("tcp", *editors)
	if err != nil {
		agentLn.Close()
		return fail(fmt.Errorf("the editors' side cannot listen on %s: %w (choose another with --editors)", *editors, err))
	}
	if *agentURL == "" {
		*agentURL = "http://" + agentLn.Addr().String()
	}
	r.SetAgentBase(*agentURL)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	servers := []*http.Server{
		{Handler: r.AgentHandler(), ReadHeaderTimeout: 10 * time.Second},
		{Handler: r.EditorHandler(), ReadHeaderTimeout: 10 * time.Second},
	}
	errs := make(chan error, 2)
	for i, ln := range []net.Listener{agentLn, editorLn} {
		go func() { errs <- servers[i].Serve(ln) }()
	}
	fmt.Fprintf(stdout, "relay: agents' side %s, editors' side http://%s\n", *agentURL, editorLn.Addr())
	select {
	case <-ctx.Done():
	case err := <-errs:
		if !errors.Is(err, http.ErrServerClosed) {
			return fail(err)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range servers {
		_ = s.Shutdown(sctx)
	}
	return 0
}

// readSecrets reads the pairing secrets: the relay's own file, so it
// must be the person's, not a link, and readable by them alone.
func readSecrets(path string) ([]string, error) {
	data, err := ownfile.Read(path, ownfile.Options{What: "the relay's secret file", Limit: 64 << 10})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the relay's secret file %s is not there: make it with `oh-bridge relay secret > %s; chmod 600 %s`", path, path, path)
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the relay's secret file %s holds no secret: `oh-bridge relay secret > %s`", path, path)
	}
	return out, nil
}

// checkListen refuses an address other machines reach unless the person
// said so: the relay's sides guard shells, and plain HTTP carries their
// secrets.
func checkListen(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	if !allowRemote {
		return fmt.Errorf("%s is an address other machines reach; the relay listens on loopback unless told otherwise: pass --allow-remote to mean it, behind a proxy with TLS (docs/relay.md)", addr)
	}
	fmt.Fprintf(os.Stderr, "oh-bridge relay: listening on %s, which other machines reach (--allow-remote): keep TLS in front of it\n", addr)
	return nil
}
