package ohtools_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

var fromOpenHands = flag.Bool("from-openhands", false,
	"rewrite fixtures/openhands-v1/*.jsonl with what openhands-tools answers (task fixtures-v1; review the diff)")

// fixtureFile is a fixtures/openhands-v1/*.jsonl file and its lines.
type fixtureFile struct {
	file  string
	cases []goldenCase
}

func readFixtures(t *testing.T) []fixtureFile {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.jsonl"))
	if len(files) == 0 {
		t.Fatal("no fixtures in " + fixtureDir)
	}
	var out []fixtureFile
	for _, f := range files {
		out = append(out, fixtureFile{f, readCases(t, f)})
	}
	return out
}

// checkFixture holds a fixture file's lines to what openhands-tools
// answered for them, or with -from-openhands rewrites the file with it.
func checkFixture(t *testing.T, f fixtureFile, got []goldenResult, rules, used map[string]bool) {
	if len(got) != len(f.cases) {
		t.Fatalf("openhands-tools answered %d calls of %d", len(got), len(f.cases))
	}
	for i := range f.cases {
		c := &f.cases[i]
		real := got[i]
		if c.Differs != "" {
			if !rules[c.Differs] {
				t.Errorf("%s names %q, which is no row of the table of intended differences in %s", c.Name, c.Differs, compatDoc)
			}
			used[c.Differs] = true
		}
		if *fromOpenHands {
			if c.Differs == "" {
				c.Result = real
			} else {
				c.OpenHands = &real
			}
			continue
		}
		switch {
		case c.Differs == "" && renderResult(real) != renderResult(c.Result):
			t.Errorf("%s: openhands-tools answers otherwise than the fixture (run task fixtures-v1 and review the diff)\nfixture:         %s\nopenhands-tools: %s\n%s",
				c.Name, clip(renderResult(c.Result)), clip(renderResult(real)), lineDiff(renderResult(real), renderResult(c.Result)))
		case c.Differs != "" && (c.OpenHands == nil || renderResult(real) != renderResult(*c.OpenHands)):
			t.Errorf("%s: openhands-tools answers otherwise than the fixture's \"openhands\" (run task fixtures-v1 and review the diff)\nopenhands-tools: %s", c.Name, clip(renderResult(real)))
		case c.Differs != "" && renderResult(real) == renderResult(c.Result):
			t.Errorf("%s is marked as differing (%s) but openhands-tools answers the fixture's result: remove the mark and its \"openhands\"", c.Name, c.Differs)
		}
	}
	if *fromOpenHands {
		writeCases(t, f.file, f.cases)
	}
}

const toolsSnapshot = "../fixtures/openhands-v1/tools.json"

// checkDefinitions holds fixtures/openhands-v1/tools.json's tools (which
// TestDefinitionsMatchOpenHands holds the bridge's definitions to) to the
// real tools' to_mcp_tool, key order included; with -from-openhands it
// rewrites them.
func checkDefinitions(t *testing.T, real json.RawMessage) {
	data, err := os.ReadFile(toolsSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		Source json.RawMessage `json:"source"`
		Tools  json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(data, &snap); err != nil {
		t.Fatal(err)
	}
	if compact(snap.Tools) == compact(real) {
		return
	}
	if !*fromOpenHands {
		t.Fatalf("openhands-tools' definitions differ from %s (run task fixtures-v1 and review the diff)\nsnapshot:        %s\nopenhands-tools: %s",
			toolsSnapshot, compact(snap.Tools), compact(real))
	}
	snap.Tools = real
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(snap); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(toolsSnapshot, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeCases rewrites a fixture file, one case a line, in the style of
// Python's json.dumps (", " and ": "), non-ASCII text as it is.
func writeCases(t *testing.T, file string, cases []goldenCase) {
	// The setup without its empty fields, as the fixtures are written.
	type setup struct {
		Files   map[string]string `json:"files,omitempty"`
		Sh      string            `json:"sh,omitempty"`
		SleepMs int               `json:"sleep_ms,omitempty"`
	}
	type line struct {
		Name      string          `json:"name"`
		Setup     *setup          `json:"setup,omitempty"`
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
		Differs   string          `json:"differs,omitempty"`
		Result    goldenResult    `json:"result"`
		OpenHands *goldenResult   `json:"openhands,omitempty"`
	}
	var b bytes.Buffer
	for _, c := range cases {
		l := line{Name: c.Name, Tool: c.Tool, Arguments: c.Arguments, Differs: c.Differs, Result: c.Result, OpenHands: c.OpenHands}
		if c.Setup != nil {
			l.Setup = &setup{c.Setup.Files, c.Setup.Sh, c.Setup.SleepMs}
		}
		line, err := pyStyleJSON(l)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pyStyleJSON encodes v on one line with a blank after every "," and
// ":" between tokens, as json.dumps writes the fixtures.
func pyStyleJSON(v any) ([]byte, error) {
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(&compact)
	dec.UseNumber()
	var out bytes.Buffer
	// The decoder's tokens carry no commas or colons: a value follows a
	// key (": ") or another value in its container (", ").
	type frame struct {
		object bool
		n      int
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			out.WriteString(d.String())
			continue
		}
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			switch {
			case top.object && top.n%2 == 1:
				out.WriteString(": ")
			case top.n > 0:
				out.WriteString(", ")
			}
			top.n++
		}
		switch v := tok.(type) {
		case json.Delim:
			out.WriteString(v.String())
			stack = append(stack, frame{object: v == '{'})
		case string:
			s := bytes.Buffer{}
			e := json.NewEncoder(&s)
			e.SetEscapeHTML(false)
			e.Encode(v)
			out.Write(bytes.TrimSuffix(s.Bytes(), []byte("\n")))
		case json.Number:
			out.WriteString(v.String())
		case bool:
			fmt.Fprint(&out, v)
		case nil:
			out.WriteString("null")
		}
	}
}
