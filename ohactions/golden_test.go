package ohactions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/ohactions"
	"github.com/oh-bridge/oh-bridge/shellint"
)

var update = flag.Bool("update", false, "rewrite fixtures/openhands/*.jsonl with the observations produced")

const fixtureDir = "../fixtures/openhands"

// goldenCase is one line of a fixtures/openhands/*.jsonl file. Lines of a
// file run in order on one runtime and one workspace.
type goldenCase struct {
	Name        string          `json:"name"`
	Setup       *ohtest.Setup   `json:"setup"`
	Action      json.RawMessage `json:"action"`
	Observation json.RawMessage `json:"observation"`
}

func newTestRuntime(t *testing.T) (*ohactions.Runtime, string) {
	t.Helper()
	fs, dir := ohtest.Workspace(t)
	rt, err := ohactions.New(ohactions.Options{
		FS:              fs,
		NoChangeTimeout: time.Second,
		ShellMode:       shellint.ModeNoRC,
		Env:             map[string]string{"HOME": t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, dir
}

func TestGolden(t *testing.T) {
	ohtest.EachFile(t, fixtureDir, func(t *testing.T, file string) {
		cases, lines := readCases(t, file)
		rt, dir := newTestRuntime(t)
		var out []string
		for i, c := range cases {
			c.Setup.Apply(t, dir, c.Name)
			action := bytes.ReplaceAll(c.Action, []byte("$WORKSPACE"), []byte(dir))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			obs, err := rt.Execute(ctx, action)
			cancel()
			if err != nil {
				t.Fatalf("%s: Execute: %v", c.Name, err)
			}
			raw, err := json.Marshal(obs)
			if err != nil {
				t.Fatal(err)
			}
			got := Normalize(t, raw, dir)
			want := canonical(t, c.Observation)
			if *update {
				lines[i]["observation"] = json.RawMessage(got)
				b, _ := marshalLine(lines[i])
				out = append(out, b)
				continue
			}
			if got != want {
				t.Errorf("%s\naction: %s\nwant: %s\ngot:  %s", c.Name, c.Action, want, got)
			}
		}
		if *update {
			os.WriteFile(file, []byte(strings.Join(out, "\n")+"\n"), 0o644)
		}
	})
}

func readCases(t *testing.T, file string) ([]goldenCase, []map[string]json.RawMessage) {
	var cases []goldenCase
	var lines []map[string]json.RawMessage
	raw, numbers := ohtest.Lines(t, file)
	for i, line := range raw {
		var c goldenCase
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("%s:%d: %v", file, numbers[i], err)
		}
		cases = append(cases, c)
		var m map[string]json.RawMessage
		json.Unmarshal(line, &m)
		lines = append(lines, m)
	}
	return cases, lines
}

// marshalLine keeps name, setup, action, observation in that order.
func marshalLine(m map[string]json.RawMessage) (string, error) {
	var o ohactions.Object
	for _, k := range []string{"name", "setup", "action", "observation"} {
		if v, ok := m[k]; ok {
			o = append(o, ohactions.Field{Key: k, Value: v})
		}
	}
	b, err := json.Marshal(o)
	return string(b), err
}

var (
	timestampRE   = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$`)
	interpreterRE = regexp.MustCompile(`\[Jupyter Python interpreter: [^\]\n]*\]`)
)

// Normalize replaces the volatile parts of an observation: id, timestamp,
// the PS1 identity fields, the interpreter path and the workspace path.
func Normalize(t *testing.T, raw []byte, workspaceDir string) string {
	t.Helper()
	v := decodeOrdered(t, raw)
	o, ok := v.(ohactions.Object)
	if !ok {
		t.Fatalf("observation is not an object: %s", raw)
	}
	if id, ok := o.Get("id"); ok {
		if _, isNum := id.(json.Number); !isNum {
			t.Errorf("id %v is not a number", id)
		}
		o.Set("id", "$ID")
	}
	if ts, ok := o.Get("timestamp"); ok {
		if s, _ := ts.(string); !timestampRE.MatchString(s) {
			t.Errorf("timestamp %q is not a naive isoformat", s)
		}
		o.Set("timestamp", "$TIMESTAMP")
	}
	if ex, ok := o.Get("extras"); ok {
		if exo, ok := ex.(ohactions.Object); ok {
			if md, ok := exo.Get("metadata"); ok {
				if mdo, ok := md.(ohactions.Object); ok {
					for k, ph := range map[string]string{"username": "$USERNAME", "hostname": "$HOSTNAME", "py_interpreter_path": "$PY"} {
						if val, _ := mdo.Get(k); val != nil {
							mdo.Set(k, ph)
						}
					}
				}
			}
		}
	}
	v = replaceStrings(o, func(s string) string {
		s = interpreterRE.ReplaceAllString(s, "[Jupyter Python interpreter: $$PY]")
		return strings.ReplaceAll(s, workspaceDir, "$WORKSPACE")
	})
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func canonical(t *testing.T, raw []byte) string {
	b, err := json.Marshal(decodeOrdered(t, raw))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func replaceStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case ohactions.Object:
		for i := range v {
			v[i].Value = replaceStrings(v[i].Value, f)
		}
		return v
	case []any:
		for i := range v {
			v[i] = replaceStrings(v[i], f)
		}
		return v
	}
	return v
}

// decodeOrdered decodes JSON keeping object key order.
func decodeOrdered(t *testing.T, raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '{':
			o := ohactions.Object{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o = append(o, ohactions.Field{Key: k.(string), Value: v})
			}
			_, err := dec.Token()
			return o, err
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token()
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", tok)
	}
	return tok, nil
}
