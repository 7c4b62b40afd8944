package rpc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// TestReadLine reads lines as they come in pieces (a reader's buffer of
// 16 bytes), with and without a newline at the end, at and over the
// limit; a line over it is read to its end and reported with the id its
// first bytes name, and the next line is read.
func TestReadLine(t *testing.T) {
	lead := rpc.LeadLen
	pad := func(n int) string { return strings.Repeat("y", n) }
	// A member that fills the first bytes up to where "id":12345 is cut
	// after "id":12.
	straddle := `{"pad":"` + pad(lead-len(`{"pad":"`)-len(`","id":12`)) + `","id":12345,"method":"m"}`
	idFirst := `{"jsonrpc":"2.0","id":7,"method":"m","params":"` + pad(100) + `"}`
	stringID := `{"id":"a\"b","method":"m","params":"` + pad(100) + `"}`
	idLast := `{"jsonrpc":"2.0","method":"m","params":"` + pad(lead) + `","id":7}`
	inParams := `{"method":"m","params":{"id":3,"s":"` + pad(lead) + `"}}`
	negative := `{"id":-1,"method":"m","params":"` + pad(100) + `"}`
	tooLarge := func(msg, id string) string { return fmt.Sprintf("too large %d %s", len(msg), id) }
	for _, c := range []struct {
		name, in string
		limit    int
		want     []string // lines read; "too large <size> <id>" for one over the limit
	}{
		{"lines", "a\nbc\r\n\nd", 10, []string{"a", "bc\r", "", "d"}},
		{"at the limit", "0123456789\nx\n", 10, []string{"0123456789", "x"}},
		{"over the limit, id first", idFirst + "\nnext\n", 64, []string{tooLarge(idFirst, "7"), "next"}},
		{"over the limit, string id", stringID + "\nnext", 64, []string{tooLarge(stringID, `"a\"b"`), "next"}},
		{"over the limit, id after params", idLast + "\n", 1000, []string{tooLarge(idLast, "null")}},
		{"over the limit, an id inside params", inParams + "\n", 1000, []string{tooLarge(inParams, "null")}},
		{"over the limit, id cut by the end of the first bytes", straddle + "\n", 1000, []string{tooLarge(straddle, "null")}},
		{"over the limit, negative id", negative, 64, []string{tooLarge(negative, "null")}},
		{"over the limit without a newline", pad(100), 64, []string{"too large 100 null"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(c.in), 16)
			var got []string
			for {
				line, err := rpc.ReadLine(r, c.limit)
				var tooLarge *rpc.MessageTooLargeError
				if errors.As(err, &tooLarge) {
					id := string(tooLarge.ID)
					if id == "" {
						id = "null"
					}
					got = append(got, fmt.Sprintf("too large %d %s", tooLarge.Size, id))
					if tooLarge.Limit != int64(c.limit) || tooLarge.Kind() != "message_too_large" {
						t.Errorf("limit %d, kind %s; want %d, message_too_large", tooLarge.Limit, tooLarge.Kind(), c.limit)
					}
					continue
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(line))
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("read %q, want %q", clipAll(got), clipAll(c.want))
			}
		})
	}
	t.Run("a line of many blocks", func(t *testing.T) {
		// 3.5 MiB of varied bytes, read through a buffer of 4 KiB:
		// gathered in blocks, the line must come back byte for byte.
		var b bytes.Buffer
		for i := 0; b.Len() < 7<<19; i++ {
			fmt.Fprintf(&b, "%d,", i)
		}
		want := b.Bytes()
		r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(want), strings.NewReader("\nnext\n")), 4096)
		line, err := rpc.ReadLine(r, 4<<20)
		if err != nil || !bytes.Equal(line, want) {
			t.Fatalf("read %d bytes (%v), want the %d written", len(line), err, len(want))
		}
		if next, err := rpc.ReadLine(r, 4<<20); string(next) != "next" || err != nil {
			t.Fatalf("next line %q %v", next, err)
		}
	})
}

func clipAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		if len(x) > 60 {
			x = x[:60] + "…"
		}
		out[i] = x
	}
	return out
}

// TestOverLimitMessageIsAnsweredUnderItsID sends a message a MiB over
// MaxMessageSize on both framings: it is answered -32600 with kind
// message_too_large, its size and the limit, under its id when its first
// bytes name it and with id null when they do not; then the connection
// answers the next request. The message is streamed, never held by the
// test. (The Content-Length face used to close the connection; the line
// face answered with id null.)
func TestOverLimitMessageIsAnsweredUnderItsID(t *testing.T) {
	size := int64(rpc.MaxMessageSize + 1<<20)
	for _, framing := range []string{"content-length", "lines"} {
		for _, c := range []struct {
			name       string
			head, tail string
			id         string
		}{
			{"id first", `{"jsonrpc":"2.0","id":41,"method":"test/echo","params":{"s":"`, `"}}`, "41"},
			{"id last", `{"jsonrpc":"2.0","method":"test/echo","params":{"s":"`, `"},"id":42}`, "null"},
		} {
			t.Run(framing+"/"+c.name, func(t *testing.T) {
				conn, answers := serveRaw(t, framing == "lines")
				fill := size - int64(len(c.head)+len(c.tail))
				if framing == "content-length" {
					fmt.Fprintf(conn, "Content-Length: %d\r\n\r\n", size)
				}
				go func() {
					io.WriteString(conn, c.head)
					io.Copy(conn, io.LimitReader(repeatReader('y'), fill))
					io.WriteString(conn, c.tail)
					if framing == "lines" {
						io.WriteString(conn, "\n")
					}
					send(conn, framing == "lines", `{"jsonrpc":"2.0","id":43,"method":"test/echo","params":{"x":1}}`)
				}()
				m := await(t, answers)
				var data struct {
					Kind        string
					Size, Limit int64
				}
				if m.Error != nil && m.Error.Data != nil {
					json.Unmarshal(*m.Error.Data, &data)
				}
				if string(m.ID) != c.id || m.Error == nil || m.Error.Code != rpc.CodeInvalidRequest ||
					data != (struct {
						Kind        string
						Size, Limit int64
					}{"message_too_large", size, rpc.MaxMessageSize}) ||
					!strings.Contains(m.Error.Message, fmt.Sprintf("a message of %d bytes was skipped: messages are limited to %d bytes (64 MiB); send smaller ones", size, rpc.MaxMessageSize)) {
					t.Fatalf("answered id %s, error %+v, data %+v; want id %s, -32600, message_too_large with the size and the limit", m.ID, m.Error, data, c.id)
				}
				if m := await(t, answers); string(m.ID) != "43" || string(m.Result) != `{"x":1}` {
					t.Fatalf("the next request: %+v", m)
				}
			})
		}
	}
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

type rawAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *rpc.Error      `json:"error"`
}

// serveRaw serves an initialized connection with the test methods over a
// pipe, framed by lines or Content-Length, and returns the client's end
// and the answers read from it.
func serveRaw(t *testing.T, lines bool) (net.Conn, <-chan rawAnswer) {
	t.Helper()
	h := &harness{t: t, exit: make(chan int, 1)}
	srv := rpc.NewServer(rpc.Options{Methods: testMethods(h, &perPathLog{seen: map[string][]int{}})})
	a, b := net.Pipe()
	stream := rpc.NewStream(a, nil, nil)
	if lines {
		stream = rpc.NewLineStream(a, nil, nil)
	}
	go srv.Serve(context.Background(), stream)
	t.Cleanup(func() { b.Close() })
	answers := make(chan rawAnswer, 10)
	go func() {
		defer close(answers)
		r := bufio.NewReader(b)
		for {
			var body []byte
			var err error
			if lines {
				body, err = rpc.ReadLine(r, 1<<20)
			} else {
				body, err = rpc.ReadFrame(r)
			}
			if err != nil {
				return
			}
			var m rawAnswer
			json.Unmarshal(body, &m)
			answers <- m
		}
	}()
	send(b, lines, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if m := await(t, answers); string(m.ID) != "0" || m.Error != nil {
		t.Fatalf("initialize: %+v", m)
	}
	return b, answers
}

func send(w io.Writer, lines bool, msg string) {
	if lines {
		io.WriteString(w, msg+"\n")
		return
	}
	fmt.Fprintf(w, "Content-Length: %d\r\n\r\n%s", len(msg), msg)
}

func await(t *testing.T, answers <-chan rawAnswer) rawAnswer {
	t.Helper()
	select {
	case m, ok := <-answers:
		if !ok {
			t.Fatal("the connection closed")
		}
		return m
	case <-time.After(time.Minute):
		t.Fatal("no answer in a minute")
	}
	return rawAnswer{}
}
