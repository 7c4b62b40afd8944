package rpc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// TestDecodeParamsEmptyArrays reads an empty array as the empty object a
// Lua client meant, wherever an object is expected, and nowhere else.
func TestDecodeParamsEmptyArrays(t *testing.T) {
	type caps struct {
		Terminal *struct {
			Streaming bool `json:"streaming"`
		} `json:"terminal"`
		Experimental map[string]any `json:"experimental"`
	}
	type params struct {
		Capabilities caps     `json:"capabilities"`
		Roots        []string `json:"roots"`
		Name         string   `json:"name"`
	}
	cases := []struct {
		in, want, err string
	}{
		{`[]`, `{"Capabilities":{"terminal":null,"experimental":null},"Roots":null,"Name":""}`, ""},
		{` [ ] `, `{"Capabilities":{"terminal":null,"experimental":null},"Roots":null,"Name":""}`, ""},
		{`{"capabilities":[]}`, `{"Capabilities":{"terminal":null,"experimental":null},"Roots":null,"Name":""}`, ""},
		{`{"capabilities":{"terminal":[],"experimental":[]},"roots":[]}`, `{"Capabilities":{"terminal":{"streaming":false},"experimental":{}},"Roots":[],"Name":""}`, ""},
		{`{"capabilities":[1]}`, "", `"capabilities" must be a JSON object, not a JSON array`},
		{`{"name":[]}`, "", `"name" must be a JSON string, not a JSON array`},
		{`[1,2]`, "", "expected object, got a JSON array"},
	}
	for _, c := range cases {
		var p params
		err := rpc.DecodeParams(json.RawMessage(c.in), &p)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("DecodeParams(%s) error = %v, want one containing %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("DecodeParams(%s): %v", c.in, err)
			continue
		}
		got, _ := json.Marshal(struct {
			Capabilities caps
			Roots        []string
			Name         string
		}(p))
		if string(got) != c.want {
			t.Errorf("DecodeParams(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
