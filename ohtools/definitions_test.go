package ohtools_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/ohtools"
)

// snapshotTool is one tool of fixtures/openhands-v1/tools.json, taken from
// openhands-tools.
type snapshotTool struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations struct {
		Title           *string `json:"title"`
		ReadOnlyHint    bool    `json:"readOnlyHint"`
		DestructiveHint bool    `json:"destructiveHint"`
		IdempotentHint  bool    `json:"idempotentHint"`
		OpenWorldHint   bool    `json:"openWorldHint"`
	} `json:"annotations"`
}

func readSnapshot(t *testing.T) []snapshotTool {
	t.Helper()
	data, err := os.ReadFile("../fixtures/openhands-v1/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Tools []snapshotTool `json:"tools"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s.Tools
}

// TestDefinitionsMatchOpenHands checks names, schemas (values and key
// order) and annotations against the snapshot taken from openhands-tools.
func TestDefinitionsMatchOpenHands(t *testing.T) {
	snap := readSnapshot(t)
	defs := ohtools.Definitions("/work/space")
	if len(defs) != len(snap) {
		t.Fatalf("%d tools, the snapshot has %d", len(defs), len(snap))
	}
	for i, want := range snap {
		got := defs[i]
		if got.Name != want.Name {
			t.Errorf("tool %d is %q, want %q", i, got.Name, want.Name)
			continue
		}
		var g, w any
		if err := json.Unmarshal(got.InputSchema, &g); err != nil {
			t.Fatalf("%s: schema is not JSON: %v", got.Name, err)
		}
		json.Unmarshal(want.InputSchema, &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: input schema differs from openhands-tools'\ngot:  %s\nwant: %s", got.Name, compact(got.InputSchema), compact(want.InputSchema))
		}
		if compact(got.InputSchema) != compact(want.InputSchema) {
			t.Errorf("%s: input schema keys are in another order than openhands-tools'\ngot:  %s\nwant: %s", got.Name, compact(got.InputSchema), compact(want.InputSchema))
		}
		a := want.Annotations
		title := ""
		if a.Title != nil {
			title = *a.Title
		}
		wantAnn := ohtools.Annotations{Title: title, ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint, IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint}
		if got.Annotations != wantAnn {
			t.Errorf("%s: annotations %+v, want %+v", got.Name, got.Annotations, wantAnn)
		}
		if got.Description == "" {
			t.Errorf("%s has no description", got.Name)
		}
	}
	if d := defs[1].Description; !strings.Contains(d, "Your current working directory is: /work/space\n") {
		t.Errorf("file_editor's description does not name the working directory:\n%s", d)
	}
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	json.Compact(&b, raw)
	return b.String()
}
