package ohtools_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/ohtools"
	"github.com/oh-bridge/oh-bridge/shellint"
)

const fixtureDir = "../fixtures/openhands-v1"

// goldenCase is one line of a fixtures/openhands-v1/*.jsonl file: a tool
// call and the result the bridge gives for it, which is openhands-tools'
// own (TestFixturesFromOpenHands writes and checks it) unless the line
// names an intended difference: then Result is the bridge's and OpenHands
// holds openhands-tools'. The lines of a file run in order on one agent
// in one workspace. In the texts, $WORKSPACE is the workspace root, $PY
// the Python interpreter on the terminal's PATH, and $TMP the random part
// of a temporary file's name.
type goldenCase struct {
	Name      string          `json:"name"`
	Setup     *ohtest.Setup   `json:"setup,omitempty"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Differs names a row of docs/openhands-compat.md's intended
	// differences, as in test/openhands/tool_cases.jsonl.
	Differs   string        `json:"differs,omitempty"`
	Result    goldenResult  `json:"result"`
	OpenHands *goldenResult `json:"openhands,omitempty"`
}

type goldenResult struct {
	IsError bool              `json:"is_error"`
	Content []json.RawMessage `json:"content"` // a text, or {"image": mime, "bytes": n}
}

// newTestAgent returns an agent over a fresh workspace, with a soft timeout
// of one second and a python of its own on the terminal's PATH.
func newTestAgent(t *testing.T) (*ohtools.Toolbox, string, string) {
	return newBenchAgent(t)
}

func newBenchAgent(t testing.TB) (*ohtools.Toolbox, string, string) {
	t.Helper()
	fs, dir := ohtest.Workspace(t)
	bin := t.TempDir()
	python := filepath.Join(bin, "python")
	if err := os.WriteFile(python, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := ohtools.NewToolbox(ohtools.ToolboxOptions{
		FS:              fs,
		NoChangeTimeout: time.Second,
		ShellMode:       shellint.ModeNoRC,
		Env:             map[string]string{"HOME": dir, "PATH": bin + ":/usr/local/bin:/usr/bin:/bin"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a, dir, python
}

var tempNameRE = regexp.MustCompile(`\.[a-z0-9_]{8}\.tmp'`)

func TestGolden(t *testing.T) {
	ohtest.EachFile(t, fixtureDir, func(t *testing.T, file string) {
		a, dir, python := newTestAgent(t)
		expand := strings.NewReplacer("$WORKSPACE", dir, "$PY", python)
		for _, c := range readCases(t, file) {
			c.Setup.Apply(t, dir, c.Name)
			args := []byte(expand.Replace(string(c.Arguments)))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			obs, err := a.Call(ctx, c.Tool, args, nil)
			cancel()
			got := describe(t, obs, err, dir)
			want := describeWant(t, c.Result, dir, python)
			if got != want {
				t.Errorf("%s\narguments: %s\nwant: %s\ngot:  %s", c.Name, args, want, got)
			}
		}
	})
}

// describe renders a result as comparable text: the error flag, then each
// block (text verbatim, an image as its type and size).
func describe(t *testing.T, obs *ohtools.Observation, err error, dir string) string {
	t.Helper()
	if err != nil {
		var ae *ohtools.ArgumentError
		var ue *ohtools.UnknownToolError
		if !errors.As(err, &ae) && !errors.As(err, &ue) {
			t.Fatalf("Call: %v", err)
		}
		return render(true, []string{err.Error()})
	}
	var blocks []string
	for _, c := range obs.Content {
		if c.MIMEType != "" {
			blocks = append(blocks, "image "+c.MIMEType+" "+itoa(len(c.Data)))
			continue
		}
		blocks = append(blocks, tempNameRE.ReplaceAllString(c.Text, ".$$TMP.tmp'"))
	}
	return render(obs.IsError, blocks)
}

func describeWant(t *testing.T, r goldenResult, dir, python string) string {
	t.Helper()
	var blocks []string
	for _, raw := range r.Content {
		var text string
		if json.Unmarshal(raw, &text) == nil {
			text = strings.NewReplacer("$WORKSPACE", dir, "$PY", python).Replace(text)
			blocks = append(blocks, text)
			continue
		}
		var img struct {
			Image string `json:"image"`
			Bytes int    `json:"bytes"`
		}
		if err := json.Unmarshal(raw, &img); err != nil {
			t.Fatalf("content block %s is neither a text nor an image", raw)
		}
		blocks = append(blocks, "image "+img.Image+" "+itoa(img.Bytes))
	}
	return render(r.IsError, blocks)
}

func render(isError bool, blocks []string) string {
	b, _ := json.Marshal(map[string]any{"is_error": isError, "content": blocks})
	return string(b)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func readCases(t *testing.T, file string) []goldenCase {
	var cases []goldenCase
	lines, numbers := ohtest.Lines(t, file)
	for i, line := range lines {
		var c goldenCase
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("%s:%d: %v", file, numbers[i], err)
		}
		cases = append(cases, c)
	}
	return cases
}
