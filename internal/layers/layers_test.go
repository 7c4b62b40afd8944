package layers

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestImportsFlowOneWay reads the module's real import graph and fails on
// any import the stack forbids: a face importing shellint, a domain package
// importing the session, a package in no layer.
func TestImportsFlowOneWay(t *testing.T) {
	graph := importGraph(t)
	if len(graph) < len(Stack) {
		t.Fatalf("go list found only %d packages", len(graph))
	}
	for _, l := range Stack {
		for _, p := range l.Packages {
			if _, ok := graph[p]; !ok {
				t.Errorf("layers.Stack names %s, which go list does not find: update the stack", p)
			}
		}
	}
	for _, v := range Violations(graph) {
		t.Error(v)
	}
}

// TestViolationsAreFound: the check fails on the imports it exists to
// forbid, so a broken Violations cannot pass silently.
func TestViolationsAreFound(t *testing.T) {
	cases := []struct {
		name  string
		graph map[string][]string
		want  string
	}{
		{"a face drives terminals itself", map[string][]string{"handlers": {"session", "shellint"}}, "handlers (faces) imports shellint: only the session uses the domain"},
		{"a face chooses roots", map[string][]string{"acp": {"session", "workspace"}}, "acp (faces) imports workspace: only the session uses the domain"},
		{"a face renders editor types", map[string][]string{"handlers": {"editor"}}, "handlers (faces) imports editor: only the session uses the domain"},
		{"the command checks roots itself", map[string][]string{"cmd/oh-bridge": {"workspace"}}, "cmd/oh-bridge (command) imports workspace"},
		{"the agent-server client reads files", map[string][]string{"conversation": {"workspace"}}, "conversation (conversation link) imports workspace"},
		{"an ACP face reaches the engine", map[string][]string{"acp": {"engine"}}, "acp imports engine"},
		{"the domain knows the session", map[string][]string{"workspace": {"session"}}, "workspace (domain) imports session (session), a layer above it"},
		{"faces import each other", map[string][]string{"handlers": {"mcpserver"}}, "handlers imports mcpserver, of its own layer (faces)"},
		{"a new package nobody placed", map[string][]string{"newthing": {"rpc"}}, "newthing is in no layer"},
		{"the agent-server client knows the session", map[string][]string{"agentserver": {"session"}}, "agentserver imports session: a face reaches it only through the session"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Violations(c.graph)
			if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), c.want) {
				t.Errorf("Violations(%v) = %q, want one containing %q", c.graph, got, c.want)
			}
		})
	}
	if got := Violations(map[string][]string{"handlers": {"session", "rpc"}, "session": {"workspace", "shellint", "editor"}, "editor": {"workspace", "pytext"}}); len(got) != 0 {
		t.Errorf("allowed imports reported: %q", got)
	}
}

// importGraph runs go list over the module: each package's imports within
// it, tests excluded.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", Module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(out)
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var deps []string
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, Module+"/"); ok {
				deps = append(deps, rel)
			}
		}
		graph[strings.TrimPrefix(p.ImportPath, Module+"/")] = deps
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	return graph
}
