package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/oh-bridge/oh-bridge/acp"
	"github.com/oh-bridge/oh-bridge/internal/ownfile"
	"github.com/oh-bridge/oh-bridge/localserver"
	"github.com/oh-bridge/oh-bridge/rpc"
)

// acpConfigFile is what the config file holds; flags, then the
// environment, override it.
type acpConfigFile struct {
	ServerURL          string `json:"serverUrl"`
	SessionAPIKey      string `json:"sessionApiKey"`
	ConfirmationPolicy string `json:"confirmationPolicy"`
	LLM                struct {
		Model   string `json:"model"`
		APIKey  string `json:"api_key"`
		BaseURL string `json:"base_url"`
	} `json:"llm"`
	// RelayURL and RelaySecretFile: the agent-server runs on another
	// machine, with an `oh-bridge relay` beside it (docs/relay.md).
	RelayURL        string `json:"relayUrl"`
	RelaySecretFile string `json:"relaySecretFile"`
}

// configLimit caps the config file: a few settings.
const configLimit = 1 << 20

// readConfigFile reads the bridge's config file; one that is not there is
// empty. It is read as the bridge's own files are (internal/ownfile): a
// regular file (a link is followed, for dotfiles kept elsewhere), read
// without blocking, capped, the person's and writable by no one else: it
// names the server that gets the person's keys.
func readConfigFile(path string) (acpConfigFile, error) {
	var file acpConfigFile
	if path == "" {
		return file, nil
	}
	data, err := ownfile.Read(path, ownfile.Options{What: "the config file", Limit: configLimit, FollowLinks: true, OthersMayRead: true})
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return file, err
	default:
		if err := json.Unmarshal(data, &file); err != nil {
			return file, fmt.Errorf("the config file %s is not the JSON expected ({\"serverUrl\": …, \"llm\": {\"model\": …}}): %w", path, err)
		}
	}
	return file, nil
}

// serverConfig is what the config file says of the agent-server, for
// finding one.
func (f acpConfigFile) serverConfig(path string) localserver.Config {
	return localserver.Config{Path: path, ServerURL: f.ServerURL, SessionAPIKey: f.SessionAPIKey}
}

// trust is whom the bridge talks to on this machine's ports: the
// person's servers, and the others they confirmed (kept in
// $XDG_CONFIG_HOME/oh-bridge/choices.json, with their other answers that
// outlive a run).
func trust() *localserver.Trust {
	return &localserver.Trust{Choices: &localserver.Choices{Path: localserver.ChoicesPath()}}
}

// serverLog puts the output of an agent-server the bridge started in the
// log, a record a piece.
type serverLog struct{ log *slog.Logger }

func (w serverLog) Write(p []byte) (int, error) {
	w.log.Info("agent-server output", "text", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// defaultConfigPath is $XDG_CONFIG_HOME/oh-bridge/config.json.
func defaultConfigPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "oh-bridge", "config.json")
}

// acpMain is `oh-bridge acp`: an ACP agent on stdio, for editors that host
// agents (Zed, JetBrains, Neovim, Emacs).
func acpMain(args []string) int {
	fset := flag.NewFlagSet("oh-bridge acp", flag.ContinueOnError)
	var (
		server     = fset.String("server", "", "the OpenHands agent-server's URL, e.g. http://127.0.0.1:8000 (env OH_BRIDGE_SERVER_URL)")
		model      = fset.String("llm-model", "", "the agent's model for new conversations, e.g. anthropic/claude-sonnet-4-5-20250929 (env LLM_MODEL)")
		baseURL    = fset.String("llm-base-url", "", "the LLM's base URL, if not the provider's (env LLM_BASE_URL)")
		policy     = fset.String("confirmation-policy", "", "AlwaysConfirm, NeverConfirm or ConfirmRisky: when the agent-server itself asks first (the bridge asks before commands and edits anyway)")
		configPath = fset.String("config", defaultConfigPath(), "a JSON file with serverUrl, sessionApiKey, confirmationPolicy and llm {model, api_key, base_url}")
		logFile    = fset.String("log-file", "", "write the log to this file instead of "+acpLogHint()+"; - writes it to stderr")
		logLevel   = fset.String("log-level", "info", "log level: debug, info, warn or error; debug logs every ACP message, both ways")
		record     = fset.String("record", "", "record every message in both directions to this JSONL file, for oh-bridge replay")
		relayURL   = fset.String("relay", "", "the agent-server runs on another machine with an oh-bridge relay beside it: the relay's editors' side URL (docs/relay.md); its secret comes from --relay-secret-file or OH_BRIDGE_RELAY_SECRET")
		relaySec   = fset.String("relay-secret-file", "", "with --relay: the file holding the relay's pairing secret")
		findServer = fset.Bool("find-server", true, "with no server configured, look for the agent-server this person runs (Agent Canvas, port 8000) and offer to start one")
	)
	fset.Usage = func() {
		fmt.Fprintln(fset.Output(), "Usage: oh-bridge acp [--server URL] [--llm-model MODEL] [--config PATH] [--log-file PATH] [--log-level LEVEL] [--record FILE]")
		fmt.Fprintln(fset.Output(), "\nAn Agent Client Protocol agent on stdin/stdout: OpenHands, working in the editor's")
		fmt.Fprintln(fset.Output(), "files and in the bridge's terminals. API keys come from the environment")
		fmt.Fprintln(fset.Output(), "(LLM_API_KEY, OH_BRIDGE_SESSION_API_KEY) or the config file, never from flags.")
		fmt.Fprintln(fset.Output(), "\nThe log goes to a file; stderr gets errors only, since editors show it to the")
		fmt.Fprintln(fset.Output(), "person (--log-file - puts the whole log there).")
		fset.PrintDefaults()
	}
	if !parseFlags(fset, args, "see oh-bridge acp --help") {
		return 2
	}
	logger, closeLog, err := openACPLog(*logFile, *logLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "oh-bridge acp:", err)
		return 2
	}
	defer closeLog()
	file, err := readConfigFile(*configPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "oh-bridge acp:", err)
		return 2
	}
	pick := func(flagValue, env, fileValue string) string {
		if flagValue != "" {
			return flagValue
		}
		if v := os.Getenv(env); v != "" {
			return v
		}
		return fileValue
	}
	srv := acp.AgentServer{
		URL:                pick(*server, "OH_BRIDGE_SERVER_URL", file.ServerURL),
		ConfirmationPolicy: pick(*policy, "OH_BRIDGE_CONFIRMATION_POLICY", file.ConfirmationPolicy),
	}
	// Each session key goes only to the server it was given with:
	// OH_BRIDGE_SESSION_API_KEY to the server named by the flag or
	// OH_BRIDGE_SERVER_URL, the config file's to the config file's.
	if *server != "" || os.Getenv("OH_BRIDGE_SERVER_URL") != "" {
		srv.SessionAPIKey = os.Getenv("OH_BRIDGE_SESSION_API_KEY")
	}
	if srv.SessionAPIKey == "" && srv.URL == file.ServerURL {
		srv.SessionAPIKey = file.SessionAPIKey
	}
	llm := map[string]string{}
	for key, v := range map[string]string{
		"model":    pick(*model, "LLM_MODEL", file.LLM.Model),
		"api_key":  pick("", "LLM_API_KEY", file.LLM.APIKey),
		"base_url": pick(*baseURL, "LLM_BASE_URL", file.LLM.BaseURL),
	} {
		if v != "" {
			llm[key] = v
		}
	}
	if len(llm) > 0 {
		srv.LLM, _ = json.Marshal(llm)
	}
	// With no server configured, the one the person runs here, or one
	// they agree to start (docs/openhands-local.md).
	trusted := trust()
	var local *acp.Local
	if *findServer {
		local = &acp.Local{
			Find: localserver.Options{Config: file.serverConfig(*configPath), Trust: trusted},
			Log:  serverLog{logger},
		}
	}
	relay, err := acpRelay(pick(*relayURL, "OH_BRIDGE_RELAY_URL", file.RelayURL), *relaySec, file, srv.URL, logger)
	if err != nil {
		fmt.Fprintln(os.Stderr, "oh-bridge acp:", err)
		return 2
	}
	agent := acp.New(acp.Config{
		Version:        version,
		Logger:         logger,
		Server:         srv,
		Trust:          trusted,
		StartMCP:       startMCP(logger, trusted, nil),
		Relay:          relay,
		StartRelay:     startRelay(logger, "ACP", nil),
		HowToConfigure: howToConfigure(*configPath),
		Local:          local,
	})
	rec, err := openACPRecorder(*record, logger, acpRecordingMeta{Config: *configPath, AgentServer: srv.URL != "", FindServer: local != nil && srv.URL == ""})
	if err != nil {
		fmt.Fprintln(os.Stderr, "oh-bridge acp:", err)
		return 2
	}
	defer rec.Close()
	rs := rpc.NewServer(rpc.Options{Methods: agent.Methods(), Logger: logger, Shutdown: agent.Shutdown, CancelMethod: "$/cancel_request"})
	agent.Bind(rs)
	logger.Info("serving ACP on stdio", "version", version, "server", srv.URL, "record", *record)
	ctx, signalCode, stop := onSignals()
	defer stop()
	rs.Serve(ctx, rpc.NewLineStream(newStdio(), logger, rec))
	if c := signalCode(); c >= 0 {
		return c
	}
	return 0
}

// howToConfigure is the answer to a prompt when no server is configured.
func howToConfigure(configPath string) string {
	if configPath == "" {
		configPath = "~/.config/oh-bridge/config.json"
	}
	return strings.Join([]string{
		"oh-bridge has no OpenHands agent-server to send this to. Configure one in any of these ways, then start a new session:",
		"",
		"- **the flag**: run the agent as `oh-bridge acp --server http://127.0.0.1:8000 --llm-model anthropic/claude-sonnet-4-5-20250929`;",
		"- **the environment**: set `OH_BRIDGE_SERVER_URL=http://127.0.0.1:8000`, with `LLM_MODEL` and `LLM_API_KEY` for the agent's model (and `OH_BRIDGE_SESSION_API_KEY` if the server has a session API key);",
		"- **the config file** `" + configPath + "`: `{\"serverUrl\": \"http://127.0.0.1:8000\", \"llm\": {\"model\": \"anthropic/claude-sonnet-4-5-20250929\", \"api_key\": \"…\"}}`.",
		"",
		"An agent-server runs with `python -m openhands.agent_server --port 8000` (the openhands-agent-server package). The editors' setups are in oh-bridge's docs/editors.md.",
	}, "\n")
}
