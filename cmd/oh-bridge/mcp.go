package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/localserver"
	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/session"
)

// mcpMain is `oh-bridge mcp`: OpenHands V1's tools over MCP on stdio, for
// an agent that starts its own tool servers (OpenHands CLI, Claude Code,
// Codex, Gemini CLI). It ends, and with it every command it started, when
// the agent closes stdin or goes away.
func mcpMain(args []string) int {
	fs := flag.NewFlagSet("oh-bridge mcp", flag.ContinueOnError)
	var (
		roots    stringList
		logFile  = fs.String("log-file", "", "write logs to this file instead of stderr")
		logLevel = fs.String("log-level", "info", "log level: debug, info, warn or error")
		maxWait  = fs.Duration("max-wait", mcpserver.DefaultMaxWait, "answer a terminal call after this long at most, the command running on (0: no bound)")
		prefix   = fs.String("tool-prefix", "", "put this before each tool's name (bridge_ serves bridge_terminal, …), for an agent with tools of the same names: the OpenHands CLI")
		extra    = fs.String("extra-tools", "", "serve these tools of the bridge's own beside OpenHands', comma-separated (open_file); none by default")
		relayURL = fs.String("relay", "", "serve the tools to the agents of a relay's agent-server instead of stdio: the relay's editors' side URL (docs/relay.md)")
		relaySec = fs.String("relay-secret-file", "", "with --relay: the file holding the relay's pairing secret")
	)
	fs.Var(&roots, "workspace", "a workspace root (repeatable); the current directory if none")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: oh-bridge mcp [--workspace DIR]... [--tool-prefix PREFIX] [--extra-tools NAMES] [--max-wait DURATION] [--log-file PATH] [--log-level LEVEL]")
		fmt.Fprintln(fs.Output(), "\nServes OpenHands' terminal, file_editor and task_tracker tools over MCP on stdin/stdout.")
		fs.PrintDefaults()
	}
	if !parseFlags(fs, args, "workspace roots are given with --workspace DIR") {
		return 2
	}
	if err := mcpserver.CheckToolPrefix(*prefix); err != nil {
		fmt.Fprintln(os.Stderr, "oh-bridge mcp:", err)
		return 2
	}
	extras, ok := parseExtraTools(fs.Name(), *extra)
	if !ok {
		return 2
	}
	logger, closeLog, ok := openLog(fs.Name(), *logFile, *logLevel)
	if !ok {
		return 2
	}
	defer closeLog()
	sess, err := session.New(session.Options{Roots: session.Candidates("--workspace", roots...), Logger: logger})
	if err != nil {
		fmt.Fprintln(os.Stderr, "oh-bridge mcp:", err)
		return 2
	}
	ctx, signalCode, stop := onSignals()
	defer stop()
	wait := *maxWait
	if wait == 0 {
		wait = -1
	}
	srv := mcpserver.New(sess, mcpserver.Options{Version: version, Logger: logger, MaxWait: wait, ToolPrefix: *prefix, ExtraTools: extras})
	var serveErr error
	if *relayURL != "" {
		serveErr = serveRelay(ctx, *relayURL, *relaySec, sess, srv, logger)
	} else {
		logger.Info("serving MCP on stdio", "version", version, "pid", os.Getpid(), "roots", sess.ChosenRoots())
		std := newStdio()
		serveErr = srv.ServeStdio(ctx, mcpserver.StdioTransport(std.in, std.out))
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := sess.Close(closeCtx); err != nil {
		logger.Warn("closing the session", "error", err)
	}
	if c := signalCode(); c >= 0 {
		return c
	}
	if serveErr != nil {
		logger.Error("MCP ended", "error", serveErr)
		return 1
	}
	return 0
}

// startMCP is the MCP starter both faces get: the editor bridge's endpoint
// and a conversation's, over their session; the processes of the users
// trust allows may connect. extraTools are the bridge's own tools served
// beside OpenHands' (--extra-tools).
func startMCP(logger *slog.Logger, trust *localserver.Trust, extraTools []string) facekit.StartMCP {
	return mcpserver.Starter(mcpserver.Options{Version: version, Logger: logger, ExtraTools: extraTools}, trust.AllowsUID)
}

// parseExtraTools reads --extra-tools: names separated by commas, each a
// tool of the bridge's own (mcpserver.CheckExtraTools); it says why not on
// stderr.
func parseExtraTools(cmd, flag string) ([]string, bool) {
	var names []string
	for _, n := range strings.Split(flag, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if err := mcpserver.CheckExtraTools(names); err != nil {
		fmt.Fprintf(os.Stderr, "%s: --extra-tools: %v\n", cmd, err)
		return nil, false
	}
	return names, true
}
