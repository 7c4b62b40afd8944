// Command oh-bridge executes an AI agent's actions (files, edits, terminal
// commands) inside an editor's workspace. An editor spawns it and speaks
// LSP-style JSON-RPC 2.0 over stdio; an MCP agent spawns `oh-bridge mcp`;
// an ACP editor (Zed, Neovim, Emacs) spawns `oh-bridge acp`. Every mode
// ends cleanly on SIGTERM, SIGINT and SIGHUP, with exit 128+signal.
//
// Usage:
//
//	oh-bridge [--stdio] [--workspace DIR]... [--log-file PATH] [--log-level LEVEL] [--record FILE]
//	oh-bridge mcp [--workspace DIR]... [--log-file PATH] [--log-level LEVEL]
//	oh-bridge acp [--server URL] [--llm-model MODEL] [--config PATH] [--log-file PATH] [--log-level LEVEL] [--record FILE]
//	oh-bridge replay [-v] [--update] [--workspace DIR] FILE...
//	oh-bridge trust-server [--yes] URL
//	oh-bridge --version
package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/oh-bridge/oh-bridge/handlers"
	"github.com/oh-bridge/oh-bridge/localserver"
	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/session"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	// The supervisor of an agent-server the bridge starts is this binary
	// again (localserver/supervise.go): it supervises, and exits, here.
	localserver.RunSupervisorIfAsked()
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "replay":
			os.Exit(replayMain(os.Args[2:]))
		case "mcp":
			os.Exit(mcpMain(os.Args[2:]))
		case "acp":
			os.Exit(acpMain(os.Args[2:]))
		case "relay":
			os.Exit(relayMain(os.Args[2:], os.Stdout, os.Stderr))
		case "trust-server":
			os.Exit(trustServerMain(os.Args[2:], os.Stdin, os.Stdout))
		}
	}
	os.Exit(serveMain(os.Args[1:]))
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func serveMain(args []string) int {
	fs := flag.NewFlagSet("oh-bridge", flag.ContinueOnError)
	var (
		roots       stringList
		stdio       = fs.Bool("stdio", true, "serve JSON-RPC on stdin/stdout (the default)")
		showVersion = fs.Bool("version", false, "print the version and exit")
		logFile     = fs.String("log-file", "", "write logs to this file instead of stderr")
		logLevel    = fs.String("log-level", "info", "log level: debug, info, warn or error")
		record      = fs.String("record", "", "record every message in both directions to this JSONL file")
		configPath  = fs.String("config", defaultConfigPath(), "a JSON file with the agent-server's serverUrl and sessionApiKey, where openhands/find_server looks second")
		extraTools  = fs.String("extra-tools", "", "serve these tools of the bridge's own beside OpenHands' on the MCP endpoint, comma-separated (open_file)")
	)
	fs.Var(&roots, "workspace", "a workspace root (repeatable); the client's folders are added at initialize")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *showVersion {
		fmt.Println("oh-bridge", version)
		return 0
	}
	if !*stdio {
		fmt.Fprintln(os.Stderr, "oh-bridge: only --stdio is supported")
		return 2
	}
	logger, closeLog, ok := openLog("oh-bridge", *logFile, *logLevel)
	if !ok {
		return 2
	}
	defer closeLog()
	extras, ok := parseExtraTools("oh-bridge", *extraTools)
	if !ok {
		return 2
	}
	if _, err := session.ChooseRoots(session.Candidates("--workspace", roots...)...); err != nil {
		fmt.Fprintln(os.Stderr, "oh-bridge:", err)
		return 2
	}
	var rec *rpc.Recorder
	if *record != "" {
		var err error
		if rec, err = rpc.CreateRecorder(*record); err != nil {
			fmt.Fprintln(os.Stderr, "oh-bridge:", err)
			return 2
		}
		defer rec.Close()
	}

	file, err := readConfigFile(*configPath)
	if err != nil {
		// The editor's bridge serves on without it: only finding a server
		// reads it.
		logger.Warn("the config file is left out", "error", err)
	}
	trusted := trust()
	h := handlers.New(handlers.Config{Version: version, Roots: roots, Logger: logger, StartMCP: startMCP(logger, trusted, extras), StartRelay: startRelay(logger, "editor", extras), ExtraTools: extras,
		ServerConfig: file.serverConfig(*configPath), ConfigError: err, Trust: trusted})
	srv := rpc.NewServer(rpc.Options{Methods: h.Methods(), Logger: logger, Shutdown: h.Shutdown})
	h.Bind(srv)
	logger.Info("serving on stdio", "version", version, "pid", os.Getpid())
	ctx, signalCode, stop := onSignals()
	defer stop()
	code := srv.Serve(ctx, rpc.NewStream(newStdio(), logger, rec))
	if c := signalCode(); c >= 0 {
		code = c
	}
	logger.Info("exiting", "code", code)
	return code
}

// parseFlags parses a subcommand's flags; it takes no arguments, and hint
// says where its inputs go instead. False means exit 2 (the reason is out).
func parseFlags(fs *flag.FlagSet, args []string, hint string) bool {
	if err := fs.Parse(args); err != nil {
		return false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "%s: unexpected argument %q; %s\n", fs.Name(), fs.Arg(0), hint)
		return false
	}
	return true
}

// openLog opens the logger the flags ask for; false means exit 2 (the
// reason is out, after the command's name).
func openLog(name, file, level string) (*slog.Logger, func(), bool) {
	logger, closeLog, err := newLogger(file, level)
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return nil, nil, false
	}
	return logger, closeLog, true
}

func newLogger(path, level string) (*slog.Logger, func(), error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	var w io.Writer = os.Stderr
	closeFn := func() {}
	if path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot open the log file: %w", err)
		}
		w, closeFn = f, func() { f.Close() }
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), closeFn, nil
}
