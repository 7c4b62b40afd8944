package ohtools_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/internal/realserver"
)

// The differential test's files: the cases, the driver that runs them
// through openhands-tools, and the page that lists every intended
// difference.
const (
	toolCasesFile = "../test/openhands/tool_cases.jsonl"
	driverFile    = "../test/openhands/tools_driver.py"
	compatDoc     = "../docs/openhands-compat.md"
)

// diffSoftTimeout is NO_CHANGE_TIMEOUT_SECONDS on both paths.
const diffSoftTimeout = 1

// diffJobs is how many cases each path runs at once: the cases mostly
// wait (soft timeouts, tmux's polls), so more than the two cores.
const diffJobs = 8

// toolCase is one line of test/openhands/tool_cases.jsonl: calls that run
// in order on one agent over a fresh workspace.
type toolCase struct {
	Name  string     `json:"name"`
	Calls []toolCall `json:"calls"`
}

type toolCall struct {
	Setup     *ohtest.Setup   `json:"setup,omitempty"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Differs names the row of docs/openhands-compat.md's table of
	// intended differences that lets this call's texts differ.
	Differs string `json:"differs,omitempty"`
}

// TestAgainstOpenHands holds the bridge to openhands-tools 1.58.2 itself,
// in two parts that share one run of the real tools:
//
//   - cases: every case of test/openhands/tool_cases.jsonl runs twice,
//     each time over a fresh workspace prepared the same way: through
//     openhands-tools' own executors, in process in the installed
//     agent-server's Python (test/openhands/tools_driver.py, the agent's
//     own path from a tool call's JSON to the text the LLM reads), and
//     through `oh-bridge mcp` with the MCP Go SDK's client. The texts must
//     be equal after the normalizations of (*diffEnv).normalize; a call
//     may differ only when it names a row of the table of intended
//     differences in docs/openhands-compat.md, and then it must differ.
//   - fixtures: the calls of every fixtures/openhands-v1/*.jsonl file run
//     through openhands-tools, in order over one workspace per file as
//     TestGolden runs them on the bridge, and each line's result must be
//     what they answer (its "openhands", for a line that names an
//     intended difference, whose result, the bridge's, must still
//     differ). With -from-openhands those fields are rewritten instead
//     (task fixtures-v1), so the fixtures TestGolden holds the bridge to
//     come from the real tools.
func TestAgainstOpenHands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs some 130 cases and every V1 fixture through two implementations")
	}
	if *fromOpenHands {
		// Asked to rewrite the fixtures: not finding the tools is a failure.
		if _, err := realserver.Venv(realserver.Latest); err != nil {
			t.Fatal(err)
		}
		if _, err := exec.LookPath("tmux"); err != nil {
			t.Fatal("tmux is not installed: the real terminal runs in tmux: apt-get install tmux, or brew install tmux")
		}
	}
	venv := realserver.Need(t, realserver.Latest)
	needTool(t, "tmux", "the real terminal runs in tmux: apt-get install tmux, or brew install tmux")
	cases := readToolCases(t)
	fixtures := readFixtures(t)
	rules := intendedDifferences(t)
	env := newDiffEnv(t)

	start := time.Now()
	// The fixture files first: each is one long run, which the driver's
	// other jobs can then overlap with the short cases.
	var runs []driverRun
	for i, f := range fixtures {
		run := driverRun{Name: "fixture " + f.file, Workspace: env.workspace("fixtures", i)}
		for _, c := range f.cases {
			run.Calls = append(run.Calls, toolCall{Setup: c.Setup, Tool: c.Tool, Arguments: c.Arguments})
		}
		runs = append(runs, run)
	}
	for i, c := range cases {
		runs = append(runs, driverRun{"case " + c.Name, env.workspace(realSide, i), c.Calls})
	}
	type realRun struct {
		*driverOutput
		err error
	}
	realDone := make(chan realRun, 1)
	go func() {
		r, err := runDriverRuns(venv, env, runs)
		t.Logf("openhands-tools took %s", time.Since(start).Round(time.Second))
		realDone <- realRun{r, err}
	}()
	bridge := runBridge(t, env, cases)
	t.Logf("oh-bridge took %s", time.Since(start).Round(time.Second))
	real := <-realDone
	if real.err != nil {
		t.Fatal(real.err)
	}
	t.Logf("%d cases, %d calls, and %d fixture files, in %s", len(cases), countCalls(cases), len(fixtures), time.Since(start).Round(time.Second))

	used := map[string]bool{}
	t.Run("cases", func(t *testing.T) {
		for _, c := range cases {
			t.Run(c.Name, func(t *testing.T) {
				compareCase(t, c, real.results["case "+c.Name], bridge[c.Name], rules, used)
			})
		}
	})
	t.Run("definitions", func(t *testing.T) {
		checkDefinitions(t, real.definitions)
	})
	t.Run("fixtures", func(t *testing.T) {
		for _, f := range fixtures {
			t.Run(strings.TrimSuffix(filepath.Base(f.file), ".jsonl"), func(t *testing.T) {
				checkFixture(t, f, real.results["fixture "+f.file], rules, used)
			})
		}
	})
	if strings.Contains(flag.Lookup("test.run").Value.String(), "/") {
		return // some cases were left out: the rows' use is not known
	}
	for rule := range rules {
		if !used[rule] && !t.Failed() {
			t.Errorf("the intended difference %q in %s is named by no case: add one, or remove the row", rule, compatDoc)
		}
	}
}

// compareCase holds a case's texts on both paths to each other.
func compareCase(t *testing.T, c toolCase, want, got []goldenResult, rules, used map[string]bool) {
	if len(want) != len(c.Calls) || len(got) != len(c.Calls) {
		t.Fatalf("openhands-tools answered %d calls, oh-bridge %d, of %d", len(want), len(got), len(c.Calls))
	}
	for i, call := range c.Calls {
		w, g := renderResult(want[i]), renderResult(got[i])
		switch {
		case call.Differs != "" && !rules[call.Differs]:
			t.Errorf("call %d names %q, which is no row of the table of intended differences in %s", i+1, call.Differs, compatDoc)
		case call.Differs != "" && w == g:
			t.Errorf("call %d is marked as differing (%s) but the texts are equal: remove the mark (and the row, if no other case uses it)\n%s", i+1, call.Differs, w)
		case call.Differs == "" && w != g:
			t.Errorf("call %d %s %s: the texts differ, and no row of %s's intended differences is named\nopenhands-tools: %s\noh-bridge:       %s\n%s",
				i+1, call.Tool, call.Arguments, compatDoc, clip(w), clip(g), lineDiff(w, g))
		case call.Differs != "":
			used[call.Differs] = true
			t.Logf("call %d differs as intended (%s)\nopenhands-tools: %s\noh-bridge:       %s\n%s", i+1, call.Differs, clip(w), clip(g), lineDiff(w, g))
		}
	}
}

// clip keeps a long rendering's head and tail for a failure message.
func clip(s string) string {
	if len(s) <= 1500 {
		return s
	}
	return s[:1000] + " [...] " + s[len(s)-400:]
}

func countCalls(cases []toolCase) int {
	n := 0
	for _, c := range cases {
		n += len(c.Calls)
	}
	return n
}

// needTool ends the test when a program is not on PATH: skipped outside
// CI, failed in CI.
func needTool(t *testing.T, name, install string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		msg := name + " is not installed: " + install
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

func readToolCases(t *testing.T) []toolCase {
	t.Helper()
	lines, numbers := ohtest.Lines(t, toolCasesFile)
	seen := map[string]bool{}
	var cases []toolCase
	for i, line := range lines {
		var c toolCase
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("%s:%d: %v", toolCasesFile, numbers[i], err)
		}
		if c.Name == "" || len(c.Calls) == 0 || seen[c.Name] {
			t.Fatalf("%s:%d: a case needs a name of its own and calls", toolCasesFile, numbers[i])
		}
		seen[c.Name] = true
		cases = append(cases, c)
	}
	return cases
}

// intendedDifferences reads the rule names (the first column, in
// backquotes) of the table after the marker in docs/openhands-compat.md.
func intendedDifferences(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(compatDoc)
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- intended differences: the rule names are read by ohtools' TestAgainstOpenHands -->"
	_, table, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf("%s has no line %q before its table of intended differences", compatDoc, marker)
	}
	rules := map[string]bool{}
	row := regexp.MustCompile("^\\| `([a-z0-9-]+)` \\|")
	started := false
	for _, line := range strings.Split(table, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		if m := row.FindStringSubmatch(line); m != nil {
			rules[m[1]] = true
		}
	}
	if len(rules) == 0 {
		t.Fatalf("the table after %q in %s has no rows", marker, compatDoc)
	}
	return rules
}

func renderResult(r goldenResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"is_error": %t, "content": [`, r.IsError)
	for i, c := range r.Content {
		if i > 0 {
			b.WriteString(", ")
		}
		var v any
		json.Unmarshal(c, &v)
		enc, _ := json.Marshal(v)
		b.Write(enc)
	}
	b.WriteString("]}")
	return b.String()
}

// lineDiff shows where two renderings part: the texts' lines, the first
// differing one marked.
func lineDiff(want, got string) string {
	w, g := strings.Split(unescape(want), "\n"), strings.Split(unescape(got), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("first difference at line %d:\n  openhands-tools: %q\n  oh-bridge:       %q", i+1, a, b)
		}
	}
	return ""
}

func unescape(rendered string) string {
	var r struct{ Content []any }
	json.Unmarshal([]byte(rendered), &r)
	var parts []string
	for _, c := range r.Content {
		if s, ok := c.(string); ok {
			parts = append(parts, s)
		} else {
			b, _ := json.Marshal(c)
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n---\n")
}
