// Package layers states how oh-bridge's packages stack, and checks it: the
// one-way imports docs/architecture.md draws. Its test reads the real
// import graph with `go list` and fails on an import that goes the wrong
// way, or on a face that reaches terminals without the session.
package layers

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Module is the module path the package names below are relative to.
const Module = "github.com/oh-bridge/oh-bridge"

// Layer is a package's place in the stack: a package imports only
// packages of greater layers (further down), or of its own layer where
// Peers allows it.
type Layer struct {
	Name     string
	Packages []string
	// Peers lets the layer's packages import one another (the domain's
	// editor builds on workspace).
	Peers bool
}

// Stack is the house, top to bottom.
var Stack = []Layer{
	{Name: "command", Packages: []string{"cmd/oh-bridge"}},
	{Name: "faces", Packages: []string{"handlers", "acp", "mcpserver", "relay", "relaylink"}},
	{Name: "face kit", Packages: []string{"facekit", "relayinstall"}},
	{Name: "conversation link", Packages: []string{"conversation", "localserver"}},
	{Name: "face parts", Packages: []string{"updates", "agentserver", "relay/wire"}},
	{Name: "agent-server events", Packages: []string{"ohevents"}},
	{Name: "session", Packages: []string{"session"}},
	{Name: "dialects", Packages: []string{"ohtools", "ohactions"}},
	{Name: "engine", Packages: []string{"engine"}},
	{Name: "domain", Packages: []string{"shellint", "workspace", "editor", "pytext", "rpc"}, Peers: true},
}

// Forbidden are imports no package above the session may make, although
// the stack would allow them: commands reach a face only through the
// session, which is the only door to terminals and the engine. A face may
// still use the dialects' types (ohtools, ohactions) to word them. The
// domain packages of SessionOnly are forbidden to every one of them
// besides.
var Forbidden = map[string][]string{
	"handlers":     {"engine"},
	"acp":          {"engine", "ohtools", "ohactions"},
	"mcpserver":    {"engine", "ohactions"},
	"facekit":      {"engine", "ohtools", "ohactions"},
	"conversation": {"engine"},
	"localserver":  {"engine", "session", "ohtools", "ohactions"},
	"updates":      {"engine"},
	"agentserver":  {"engine", "session", "ohtools", "ohactions"},
	// The relay runs where the agent-server does and holds no session:
	// it routes calls to the windows that do.
	"relay":      {"engine", "session", "ohtools", "ohactions"},
	"relaylink":  {"engine", "session", "ohtools", "ohactions"},
	"relay/wire": {"engine", "session", "ohtools", "ohactions"},
	// Installing a relay talks to the agent-server's API alone.
	"relayinstall": {"engine", "session", "ohtools", "ohactions"},
}

// SessionOnly are the domain packages only the session (and what it
// drives) imports: no package above it, neither a face nor the command,
// imports them, for policy or for a type. The session chooses the roots,
// builds the file host and the shells from its Options, and names every
// type a face renders (session.TextFile, session.TerminalInfo,
// session.RootCandidate), so a face passes what it was told and renders
// what it gets.
var SessionOnly = []string{"shellint", "workspace", "editor"}

// Violations lists what is wrong with graph (a package's module-relative
// path → the module-relative paths it imports, tests excluded): imports
// up the stack, forbidden imports, and packages the stack does not place.
// Packages under internal/, test helpers and commands other than
// cmd/oh-bridge (demo) stand outside the stack.
func Violations(graph map[string][]string) []string {
	rank := map[string]int{}
	peers := map[string]bool{}
	for i, l := range Stack {
		for _, p := range l.Packages {
			rank[p] = i
			peers[p] = l.Peers
		}
	}
	session := rank["session"]
	var out []string
	for pkg, imports := range graph {
		r, placed := rank[pkg]
		if !placed {
			if !outside(pkg) {
				out = append(out, fmt.Sprintf("%s is in no layer: add it to layers.Stack and to docs/architecture.md", pkg))
			}
			continue
		}
		for _, imp := range imports {
			ir, ok := rank[imp]
			if !ok {
				continue // internal helpers, test helpers
			}
			switch {
			case ir < r:
				out = append(out, fmt.Sprintf("%s (%s) imports %s (%s), a layer above it", pkg, Stack[r].Name, imp, Stack[ir].Name))
			case ir == r && imp != pkg && !peers[pkg]:
				out = append(out, fmt.Sprintf("%s imports %s, of its own layer (%s)", pkg, imp, Stack[r].Name))
			}
			for _, f := range Forbidden[pkg] {
				if imp == f {
					out = append(out, fmt.Sprintf("%s imports %s: a face reaches it only through the session", pkg, imp))
				}
			}
			if r < session && slices.Contains(SessionOnly, imp) {
				out = append(out, fmt.Sprintf("%s (%s) imports %s: only the session uses the domain; use the session's own types and let it choose roots and build domain objects from its Options", pkg, Stack[r].Name, imp))
			}
		}
	}
	sort.Strings(out)
	return out
}

// outside says whether a package stands outside the stack: internal
// helpers, test helpers (a *test package), the demo, benchmarks and soak,
// which drive the built binary, and Go files an npm package ships under
// extension/node_modules.
func outside(pkg string) bool {
	return strings.HasPrefix(pkg, "internal/") || strings.HasSuffix(pkg, "test") ||
		strings.HasPrefix(pkg, "extension/") || pkg == "demo" || pkg == "bench" || pkg == "soak"
}
