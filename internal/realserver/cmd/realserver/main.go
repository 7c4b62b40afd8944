// Command realserver starts the real OpenHands agent-server as package
// realserver does for Go tests, for tests that are not Go (the VS Code
// end-to-end run, extension/e2e): on 127.0.0.1, in a fresh directory, with
// a clean environment that reaches nothing past loopback. Once the server
// answers /ready it prints one line of JSON:
//
//	{"url": "http://127.0.0.1:N", "key": "…", "dir": "…", "conversations": "…", "venv": "…", "startupMs": N}
//
// (venv is the lock's Python environment, whose bin/agent-server is the
// package's own start command), and keeps it running until its standard
// input closes (the caller ended, however it ended) or it gets SIGTERM or
// SIGINT; then it stops the server and what the server started, and exits.
// A server that does not start makes it exit 1 with the reason and the
// server's log on stderr.
//
// Usage: realserver [-lock agent-server-1.58] [-port N] [-key KEY | -no-key] [-log FILE] [-env K=V]...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/oh-bridge/oh-bridge/internal/helperstop"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
)

type envFlags []string

func (e *envFlags) String() string { return strings.Join(*e, " ") }

func (e *envFlags) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("%q is not KEY=VALUE", v)
	}
	*e = append(*e, v)
	return nil
}

func main() {
	lock := flag.String("lock", realserver.Latest, "the lock file of test/openhands whose environment runs the server ("+realserver.Latest+" or "+realserver.Canvas+")")
	key := flag.String("key", "", "the session API key (a random one when empty)")
	noKey := flag.Bool("no-key", false, "serve with no session API key: every request on 127.0.0.1 is taken, as by a server started without OH_SESSION_API_KEYS_0")
	logFile := flag.String("log", "", "write the server's output to this file when it stops")
	port := flag.Int("port", 0, "the port on 127.0.0.1 to listen on (a free one when 0)")
	var env envFlags
	flag.Var(&env, "env", "a KEY=VALUE setting for the server, over the defaults (repeatable)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "realserver: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if *noKey && *key != "" {
		fmt.Fprintln(os.Stderr, "realserver: -key and -no-key contradict each other: give one")
		os.Exit(2)
	}
	o := realserver.Options{Key: *key, Env: env, Port: *port}
	if *noKey {
		// The server drops an empty key (config.py,
		// _drop_empty_session_api_keys), and this one wins over the key
		// package realserver sets.
		o.Env = append(o.Env, "OH_SESSION_API_KEYS_0=")
	}
	os.Exit(run(*lock, o, *noKey, *logFile))
}

func run(lock string, o realserver.Options, noKey bool, logFile string) int {
	venv, err := realserver.Venv(lock)
	if err != nil {
		fmt.Fprintf(os.Stderr, "realserver: %v\n", err)
		return 1
	}
	// Asked to stop while the server starts, it stops once started: Launch
	// cannot be cut short, and the server it returns must not outlive it.
	asked, release := helperstop.Asked(os.Stdin)
	defer release()

	s, err := realserver.Launch(venv, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "realserver: %v\n", err)
		return 1
	}
	key := s.Key
	if noKey {
		key = ""
	}
	line, _ := json.Marshal(map[string]any{"url": s.URL, "key": key, "dir": s.Dir, "conversations": s.ConversationsDir(),
		"venv": venv, "startupMs": s.Startup.Milliseconds()})
	fmt.Printf("%s\n", line)
	code := 0
	select {
	case <-asked:
	case <-s.Exited():
		fmt.Fprintf(os.Stderr, "realserver: the agent-server ended on its own; its log:\n%s\n", s.Log())
		code = 1
	}
	s.Stop()
	if logFile != "" {
		if err := os.WriteFile(logFile, []byte(s.Log()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "realserver: %v\n", err)
		}
	}
	return code
}
