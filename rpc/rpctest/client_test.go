package rpctest

import (
	"encoding/json"
	"reflect"
	"testing"
)

// decodeMessage must read what encoding/json reads, and refuse what it
// refuses, for the messages a client meets.
func TestDecodeMessageMatchesEncodingJSON(t *testing.T) {
	bodies := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":"a \"}\" \\\" ]\n","n":[1,{"x":null}]}}`,
		`{"jsonrpc":"2.0","id":"s\"1","result":"text \\\\"}`,
		` { "jsonrpc" : "2.0" , "id" : 7 , "result" : null } `,
		`{"jsonrpc":"2.0","id":2,"result":true}`,
		`{"jsonrpc":"2.0","id":3,"result":-1.5e3}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error","data":{"a":[1]}}}`,
		`{"jsonrpc":"2.0","method":"note","params":{"p":"}"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"workspace/applyEdit","params":[1,2]}`,
		`{"jsonrpc":"2.0","id":5,"result":{},"id":6}`,
		`{}`,
	}
	for _, body := range bodies {
		var want Message
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		got, err := decodeMessage([]byte(body))
		if err != nil {
			t.Fatalf("decodeMessage(%s): %v", body, err)
		}
		norm := func(m Message) string { b, _ := json.Marshal(m); return string(b) }
		if !reflect.DeepEqual(norm(got), norm(want)) {
			t.Errorf("decodeMessage(%s)\n got %s\nwant %s", body, norm(got), norm(want))
		}
	}
	for _, bad := range []string{``, `[]`, `{"id":1,"result":"x}`, `{"id":1,`, `{"id":1,"method":5}`, `not json`, `{"id":1}x`} {
		if m, err := decodeMessage([]byte(bad)); err == nil {
			t.Errorf("decodeMessage(%q) = %+v, want an error", bad, m)
		}
	}
}
