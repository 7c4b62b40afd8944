package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/sourcegraph/jsonrpc2"
)

// FuzzSplitParams: a request read with its params kept from jsonrpc2
// (splitParams) is the request jsonrpc2 reads from the whole body: the
// same method, id and kind, params equal as JSON values, and the same
// bodies refused. jsonrpc2 itself decodes params into Go values and
// encodes them again (sorted keys, <, > and & escaped), so params are
// compared as decoded values.
func FuzzSplitParams(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"path":"a<b>&c","n":1.50,"big":123456789012345678901234567890}}`,
		`{"jsonrpc":"2.0","id":"x","method":"m","params":[1,"two",null,{"b":1,"a":2}]}`,
		`{"jsonrpc":"2.0","method":"n","params":{}}`,
		`{"jsonrpc":"2.0","id":null,"method":"m","params":{"x":1}}`,
		`{"jsonrpc":"2.0","id":2,"method":"m","params":null}`,
		`{"jsonrpc":"2.0","id":3,"method":"m"}`,
		`{"jsonrpc":"2.0","id":4,"method":"m","params":{"a":1},"params":{"b":2}}`,
		`{"jsonrpc":"2.0","id":5,"method":"m","p\u0061rams":{"a":1}}`,
		`{"jsonrpc":"2.0","id":6,"m\u0065thod":"m","params":{"a":1}}`,
		`{"jsonrpc":"2.0","id":7,"Method":"m","params":{"a":1}}`,
		`{"jsonrpc":"2.0","id":8,"method":"m","result":1}`,
		`{"jsonrpc":"2.0","id":9,"method":"m","Error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":10,"method":"m","meta":{"trace":1},"extra":[1]}`,
		" {\n \"jsonrpc\" : \"2.0\" ,\n \"id\" : 11 , \"method\" : \"m\\u00e9\" , \"params\" : { \"s\" : \"\\ud83d\\ude00 \\u0000\" } }\n",
		`{"jsonrpc":"2.0","id":12,"method":"m","params":{"s":"bad utf-8 ` + "\xff" + `","a":{"a":"A"},"A":1}}`,
		`{"jsonrpc":"2.0","id":13,"result":{"x":1}}`,
		`{"method":"m","id":14,"params":"just a string"}`,
		`{"jsonrpc":"2.0","id":15,"method":"m","Method":null}`,
		`{"jsonrpc":"2.0","id":16,"method":"m","re\u017fult":1}`,
		`{"jsonrpc":"2.0","id":17,"method":"m","Params":{"a":1}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		whole, wholeReply := readThroughJSONRPC2(body, false)
		split, splitReply := readThroughJSONRPC2(body, true)
		if (whole == nil) != (split == nil) || (wholeReply == nil) != (splitReply == nil) {
			t.Fatalf("%q: read whole %v (answered %s), split %v (answered %s)", body, whole, wholeReply, split, splitReply)
		}
		if whole == nil {
			return
		}
		if whole.Method != split.Method || whole.ID != split.ID || whole.Notif != split.Notif {
			t.Fatalf("%q: whole %q %v %v, split %q %v %v", body, whole.Method, whole.ID, whole.Notif, split.Method, split.ID, split.Notif)
		}
		if (whole.Params == nil) != (split.Params == nil) {
			t.Fatalf("%q: params %v whole, %v split", body, whole.Params, split.Params)
		}
		if whole.Params != nil && !reflect.DeepEqual(decoded(t, *whole.Params), decoded(t, *split.Params)) {
			t.Fatalf("%q: params %s whole, %s split", body, *whole.Params, *split.Params)
		}
	})
}

// readThroughJSONRPC2 frames body on a Stream read by a jsonrpc2.Conn, as
// Server.Serve does, with params kept from jsonrpc2 or not, and returns
// the request handled, if any, and what the stream answered itself.
func readThroughJSONRPC2(body []byte, hold bool) (*jsonrpc2.Request, []byte) {
	var in bytes.Buffer
	fmt.Fprintf(&in, "Content-Length: %d\r\n\r\n%s", len(body), body)
	rwc := &testRWC{Reader: &in}
	stream := NewStream(rwc, nil, nil)
	stream.holdParams = hold
	var got *jsonrpc2.Request
	conn := jsonrpc2.NewConn(context.Background(), stream, handlerFunc(func(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
		if p, ok := stream.takeParams(); ok {
			req.Params = p
		}
		got = req
	}), jsonrpc2.SetLogger(discardLogger{}))
	<-conn.DisconnectNotify()
	if rwc.out.Len() == 0 {
		return got, nil
	}
	return got, rwc.out.Bytes()
}

type testRWC struct {
	io.Reader
	out bytes.Buffer
}

func (r *testRWC) Write(p []byte) (int, error) { return r.out.Write(p) }
func (r *testRWC) Close() error                { return nil }

func decoded(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("params %q: %v", raw, err)
	}
	return v
}
