package rpc_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/rpc"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name, body string
		wantOK     bool
		wantID     string // echoed id in the error reply
		wantCode   int64
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"m"}`, true, "", 0},
		{"string id", `{"jsonrpc":"2.0","id":"a","method":"m"}`, true, "", 0},
		{"notification", `{"jsonrpc":"2.0","method":"m"}`, true, "", 0},
		{"response", `{"jsonrpc":"2.0","id":3,"result":null}`, true, "", 0},
		{"error response", `{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"x"}}`, true, "", 0},
		{"missing jsonrpc is tolerated", `{"id":1,"method":"m"}`, true, "", 0},
		{"wrong version echoes the id", `{"jsonrpc":"1.0","id":7,"method":"m"}`, false, "7", rpc.CodeInvalidRequest},
		{"empty method echoes the id", `{"jsonrpc":"2.0","id":"q","method":""}`, false, `"q"`, rpc.CodeInvalidRequest},
		{"response without id", `{"jsonrpc":"2.0","result":1}`, false, "null", rpc.CodeInvalidRequest},
		{"huge id", `{"jsonrpc":"2.0","id":99999999999999999999,"method":"m"}`, false, "null", rpc.CodeInvalidRequest},
		{"garbage", `}{`, false, "null", rpc.CodeParseError},
		{"empty body", ``, false, "null", rpc.CodeParseError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reply := rpc.Validate([]byte(c.body))
			if c.wantOK {
				if reply != nil {
					t.Fatalf("Validate(%s) = %s, want nil", c.body, reply)
				}
				return
			}
			var m struct {
				ID    json.RawMessage `json:"id"`
				Error rpc.Error       `json:"error"`
			}
			if err := json.Unmarshal(reply, &m); err != nil {
				t.Fatalf("reply %q is not JSON: %v", reply, err)
			}
			if string(m.ID) != c.wantID || m.Error.Code != c.wantCode {
				t.Fatalf("Validate(%s): id %s code %d (%s); want id %s code %d", c.body, m.ID, m.Error.Code, m.Error.Message, c.wantID, c.wantCode)
			}
		})
	}
}

// nopCloser joins a reader and a writer into a stream for the fuzzer.
type fuzzRWC struct {
	io.Reader
	out bytes.Buffer
}

func (f *fuzzRWC) Write(p []byte) (int, error) { return f.out.Write(p) }
func (f *fuzzRWC) Close() error                { return nil }

// FuzzStream feeds arbitrary bytes to the framing and validation path. It
// must never panic or loop, and everything it writes back must be
// well-formed frames holding JSON-RPC error objects.
func FuzzStream(f *testing.F) {
	f.Add([]byte("Content-Length: 38\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}"))
	f.Add([]byte("Content-Length: 5\r\n\r\nhello"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rwc := &fuzzRWC{Reader: bytes.NewReader(data)}
		s := rpc.NewStream(rwc, nil, nil)
		for i := 0; ; i++ {
			var v json.RawMessage
			if err := s.ReadObject(&v); err != nil {
				break
			}
			if !json.Valid(v) {
				t.Fatalf("ReadObject returned invalid JSON %q", v)
			}
			if i > len(data) {
				t.Fatal("more messages than input bytes")
			}
		}
		r := bufio.NewReader(&rwc.out)
		for {
			body, err := rpc.ReadFrame(r)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("the stream wrote a broken frame: %v", err)
			}
			var m struct {
				Error *rpc.Error `json:"error"`
			}
			if json.Unmarshal(body, &m) != nil || m.Error == nil || !strings.Contains(m.Error.Message, " ") {
				t.Fatalf("the stream wrote %q, want an error reply", body)
			}
		}
	})
}

// TestLineStream reads and writes ACP's newline-delimited framing: blank
// lines and CRLF are tolerated, a bad line is answered and skipped, and the
// last message may lack its newline.
func TestLineStream(t *testing.T) {
	in := "\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r\n" +
		"not json\n" +
		"   \n" +
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\",\"params\":{\"s\":\"x\\ny\"}}\n" +
		"{\"jsonrpc\":\"2.0\",\"method\":\"c\"}"
	rwc := &fuzzRWC{Reader: strings.NewReader(in)}
	s := rpc.NewLineStream(rwc, nil, nil)
	var methods []string
	for {
		var m struct {
			Method string `json:"method"`
		}
		if err := s.ReadObject(&m); err != nil {
			if err != io.EOF {
				t.Fatalf("ReadObject: %v", err)
			}
			break
		}
		methods = append(methods, m.Method)
	}
	if got := strings.Join(methods, ","); got != "a,b,c" {
		t.Errorf("messages read = %s, want a,b,c", got)
	}
	if err := s.WriteObject(map[string]any{"jsonrpc": "2.0", "method": "n", "params": map[string]string{"s": "two\nlines"}}); err != nil {
		t.Fatal(err)
	}
	out := strings.Split(strings.TrimSuffix(rwc.out.String(), "\n"), "\n")
	if len(out) != 2 {
		t.Fatalf("wrote %q, want two lines: the parse error's answer and the notification", rwc.out.String())
	}
	var reply struct {
		Error *rpc.Error `json:"error"`
	}
	if json.Unmarshal([]byte(out[0]), &reply) != nil || reply.Error == nil || reply.Error.Code != rpc.CodeParseError {
		t.Errorf("answer to the bad line = %s, want a -32700 error", out[0])
	}
	if !strings.Contains(out[1], `"two\nlines"`) || strings.Contains(rwc.out.String(), "Content-Length") {
		t.Errorf("notification written as %q, want one JSON line", out[1])
	}
}

// TestTooDeepIsAnsweredUnderItsID answers a request nested beyond
// encoding/json's limit under its own id, so the client is not left
// waiting.
func TestTooDeepIsAnsweredUnderItsID(t *testing.T) {
	deep := strings.Repeat(`{"a":[`, 5001) + strings.Repeat(`]}`, 5001)
	for _, c := range []struct{ body, id string }{
		{`{"jsonrpc":"2.0","method":"m","params":` + deep + `,"id":7}`, "7"},
		{`{"id":"x\"y","jsonrpc":"2.0","method":"m","params":` + deep + `}`, `"x\"y"`},
		{`{"jsonrpc":"2.0","params":[` + deep + `,"}"],"id":12,"method":"m"}`, "12"},
		{`{"jsonrpc":"2.0","method":"m","params":` + deep + `}`, "null"},
	} {
		reply := rpc.Validate([]byte(c.body))
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *rpc.Error      `json:"error"`
		}
		if json.Unmarshal(reply, &m) != nil || m.Error == nil || string(m.ID) != c.id {
			t.Errorf("reply %s, want an error under id %s", reply, c.id)
		}
	}
}
