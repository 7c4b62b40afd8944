package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// MaxMessageSize is the largest message the bridge reads, on the editor's
// face (Content-Length frames) and ACP's (lines). The largest a legitimate
// client sends is a whole document: VS Code hands its extensions documents
// of up to 50 MB (its MODEL_SYNC_LIMIT), which textDocument/didOpen and
// fs/write_text_file carry, and JSON's escapes (newlines, quotes,
// backslashes) add to that; an ACP client answers fs/read_text_file with a
// whole file and may embed files in a prompt. 64 MiB leaves room for that
// and bounds what one message costs (one to three times its size at the
// peak, docs/safety.md). A larger message is read to its end without being
// held, answered -32600 with kind message_too_large under its id when its
// first bytes name one, and the connection goes on.
const MaxMessageSize = 64 << 20

// maxHeaderLine bounds a header line, so garbage without newlines cannot
// grow memory before the framing error is noticed.
const maxHeaderLine = 8 << 10

// FramingError is a fatal problem with the byte stream itself (a broken
// header, a truncated frame). The connection cannot continue.
type FramingError struct{ Reason string }

func (e *FramingError) Error() string { return "jsonrpc framing: " + e.Reason }

// CharsetError reports a frame declared in a charset other than UTF-8. The
// frame was consumed, so the connection can continue.
type CharsetError struct{ Charset string }

func (e *CharsetError) Error() string {
	return fmt.Sprintf("Content-Type charset %q is not supported; send utf-8", e.Charset)
}

// Stream reads and writes LSP-framed JSON-RPC messages. It implements
// jsonrpc2.ObjectStream and differs from jsonrpc2.VSCodeObjectCodec where
// robustness matters: header names are case-insensitive, Content-Type is
// checked, the length is capped, and a frame whose body is not a valid
// JSON-RPC message is answered here (-32700/-32600, id null) while the
// connection keeps working, instead of closing it.
type Stream struct {
	rwc io.ReadWriteCloser
	r   *bufio.Reader
	log *slog.Logger
	rec *Recorder

	wmu sync.Mutex
	w   *bufio.Writer
	// corked holds replies in the buffer while the reader still has
	// buffered requests to process; the reader flushes before it blocks.
	// Pipelined requests then cost one write for a batch of replies.
	corked bool
	// lines frames a message as one line (ACP) instead of LSP's headers.
	lines bool

	// holdParams, set by Server.Serve, keeps a request's params from
	// jsonrpc2's decoding (see splitParams); params are those of the
	// request read last, which Server.handle takes on the same goroutine.
	holdParams bool
	params     *json.RawMessage
	held       bool // params hold the last request's
}

// NewLineStream frames messages as newline-delimited JSON, one message a
// line, as ACP's stdio transport does. rec may be nil.
func NewLineStream(rwc io.ReadWriteCloser, log *slog.Logger, rec *Recorder) *Stream {
	s := NewStream(rwc, log, rec)
	s.lines = true
	// A line has no header to bound the buffer by; a larger one reads a
	// long line in fewer pieces.
	s.r = bufio.NewReaderSize(rwc, 64<<10)
	return s
}

// NewStream frames messages over rwc. rec may be nil.
func NewStream(rwc io.ReadWriteCloser, log *slog.Logger, rec *Recorder) *Stream {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Stream{
		rwc: rwc,
		r:   bufio.NewReaderSize(rwc, maxHeaderLine),
		w:   bufio.NewWriterSize(rwc, 64<<10),
		log: log.With("component", "rpc"),
		rec: rec,
	}
}

// WriteObject frames and sends one message.
func (s *Stream) WriteObject(obj any) error {
	var body []byte
	var err error
	// jsonrpc2's messages marshal themselves; json.Marshal would only
	// re-validate and re-compact their output.
	if m, ok := obj.(json.Marshaler); ok {
		body, err = m.MarshalJSON()
	} else {
		body, err = json.Marshal(obj)
	}
	if err != nil {
		return err
	}
	return s.WriteRaw(body)
}

// WriteRaw frames and sends one already-encoded message.
func (s *Stream) WriteRaw(body []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.rec.record("out", body)
	if !s.lines {
		if _, err := fmt.Fprintf(s.w, "Content-Length: %d\r\n\r\n", len(body)); err != nil {
			return err
		}
	}
	if _, err := s.w.Write(body); err != nil {
		return err
	}
	if s.lines {
		// encoding/json escapes newlines inside strings, so a compact
		// message is one line.
		if err := s.w.WriteByte('\n'); err != nil {
			return err
		}
	}
	if s.corked {
		return nil
	}
	return s.w.Flush()
}

// setCork holds (true) or releases and flushes (false) written replies.
func (s *Stream) setCork(on bool) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.corked = on
	if on {
		return nil
	}
	return s.w.Flush()
}

// ReadObject reads the next valid JSON-RPC message into v. Invalid messages
// are answered and skipped; only I/O and framing errors are returned.
func (s *Stream) ReadObject(v any) error {
	for {
		// About to wait for input: release the replies held so far. This
		// also waits for a write that cannot go on (a client that does not
		// read): the bridge stops reading until its replies can be
		// written, so a client that floods it without reading holds it to
		// the reader's buffer, not to the requests sent.
		if s.r.Buffered() == 0 {
			if err := s.setCork(false); err != nil {
				return err
			}
		}
		var body []byte
		var err error
		if s.lines {
			body, err = readLine(s.r)
		} else {
			body, err = ReadFrame(s.r)
		}
		if err == nil && s.r.Buffered() > 0 {
			s.setCork(true)
		}
		var ce *CharsetError
		var tooLarge *MessageTooLargeError
		if errors.As(err, &tooLarge) {
			// Not recorded: the message was not kept.
			s.log.Warn("skipped a message over the limit", "bytes", tooLarge.Size, "limit", tooLarge.Limit, "id", string(tooLarge.ID))
			reply := errorReplyOf(tooLarge.ID, NewError(CodeInvalidRequest, "invalid request: "+tooLarge.Error(), tooLarge.Data()))
			if err := s.WriteRaw(reply); err != nil {
				return err
			}
			continue
		}
		if errors.As(err, &ce) {
			s.rec.record("in", body)
			if err := s.WriteRaw(errorReply(nil, CodeInvalidRequest, "invalid request: "+err.Error())); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			var fe *FramingError
			if errors.As(err, &fe) {
				s.log.Error("closing the connection: the client sent a frame that cannot be read", "reason", fe.Reason)
			}
			return err
		}
		s.rec.record("in", body)
		if reply := Validate(body); reply != nil {
			s.log.Warn("answered an invalid message", "error", string(reply))
			if err := s.WriteRaw(reply); err != nil {
				return err
			}
			continue
		}
		s.params, s.held = nil, false
		if s.holdParams {
			if head, params, ok := splitParams(body); ok {
				body, s.params, s.held = head, params, true
			}
		}
		if err := json.Unmarshal(body, v); err != nil {
			s.params, s.held = nil, false
			reply := errorReply(nil, CodeInvalidRequest, "invalid request: "+err.Error())
			if err := s.WriteRaw(reply); err != nil {
				return err
			}
			continue
		}
		return nil
	}
}

// takeParams hands Server.handle the params of the request read last,
// when ReadObject kept them from jsonrpc2 (ok).
func (s *Stream) takeParams() (params *json.RawMessage, ok bool) {
	params, ok = s.params, s.held
	s.params, s.held = nil, false
	return params, ok
}

// splitParams splits a request into the head jsonrpc2 decodes (jsonrpc,
// id, method) and its params, a slice of body. jsonrpc2's Request decodes
// params into Go values and encodes them again: a 60 MiB frame cost six
// times its size, and params of '<' characters, escaped as \u003c, forty
// times. It reads the members as jsonrpc2 does, by their exact names,
// the last of a name counting; body is a valid message (Validate). ok is
// false for a message that is not a request, and for one with a member
// whose name is one of JSON-RPC's in another case (jsonrpc2 reads some
// of those in any case): it goes to jsonrpc2 whole, as before.
func splitParams(body []byte) (head []byte, params *json.RawMessage, ok bool) {
	var id, method json.RawMessage
	whole := eachMember(body, func(m Member) bool {
		key := m.Key
		if strings.IndexByte(key, '\\') >= 0 {
			var k string
			if json.Unmarshal([]byte(key), &k) != nil {
				return false
			}
			key = strconv.Quote(k)
		}
		switch key {
		case `"jsonrpc"`:
		case `"id"`:
			id = m.Value
		case `"method"`:
			method = m.Value
		case `"params"`:
			p := m.Value
			params = &p
		default:
			for _, name := range []string{`"jsonrpc"`, `"id"`, `"method"`, `"params"`, `"result"`, `"error"`} {
				if strings.EqualFold(key, name) {
					return false
				}
			}
		}
		return true
	})
	if !whole || method == nil {
		return nil, nil, false
	}
	head = make([]byte, 0, 48+len(id)+len(method))
	head = append(head, `{"jsonrpc":"2.0","method":`...)
	head = append(head, method...)
	if id != nil {
		head = append(head, `,"id":`...)
		head = append(head, id...)
	}
	return append(head, '}'), params, true
}

// Close closes the underlying stream.
func (s *Stream) Close() error { return s.rwc.Close() }

// readLine reads one newline-delimited message, skipping blank lines. A
// line over MaxMessageSize is read to its end without being held and
// reported as *MessageTooLargeError, since the next line starts a new
// message.
func readLine(r *bufio.Reader) ([]byte, error) {
	for {
		line, err := ReadLine(r, MaxMessageSize)
		if err != nil {
			return nil, err
		}
		if line = bytes.Trim(line, jsonSpace); len(line) > 0 {
			return line, nil
		}
	}
}

// jsonSpace is JSON's whitespace: a line of a form feed and "0" is not
// JSON, and is answered as such (bytes.TrimSpace would have made it 0).
const jsonSpace = " \t\r\n"

// ReadFrame reads one Content-Length framed body. Blank lines before a
// header block are tolerated; header names are case-insensitive. A body
// over MaxMessageSize is read past without being held:
// *MessageTooLargeError, with the id its first bytes name.
func ReadFrame(r *bufio.Reader) ([]byte, error) {
	length := int64(-1)
	sawHeader := false
	badCharset := ""
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull || len(line) > maxHeaderLine {
			return nil, &FramingError{Reason: fmt.Sprintf("header line longer than %d bytes (is the client sending Content-Length framing?)", maxHeaderLine)}
		}
		if err != nil {
			if err == io.EOF && (len(line) > 0 || sawHeader) {
				return nil, &FramingError{Reason: "stream ended inside a header block"}
			}
			return nil, err
		}
		text := strings.TrimRight(string(line), "\r\n")
		if text == "" {
			if !sawHeader {
				continue
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(text, ":")
		if !ok {
			return nil, &FramingError{Reason: fmt.Sprintf("header line %q has no colon; expected \"Content-Length: <bytes>\"", clip(text, 80))}
		}
		value = strings.TrimSpace(value)
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "content-length":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || n < 0 {
				return nil, &FramingError{Reason: fmt.Sprintf("Content-Length %q is not a non-negative integer", clip(value, 40))}
			}
			length = n
		case "content-type":
			if cs := charset(value); cs != "" && cs != "utf-8" && cs != "utf8" {
				badCharset = cs
			}
		}
	}
	if length < 0 {
		return nil, &FramingError{Reason: "header block has no Content-Length"}
	}
	truncated := func(err error) error {
		return &FramingError{Reason: fmt.Sprintf("stream ended after a header announcing %d bytes: %v", length, err)}
	}
	if length > MaxMessageSize {
		lead := make([]byte, leadLen)
		if _, err := io.ReadFull(r, lead); err != nil {
			return nil, truncated(err)
		}
		if _, err := io.CopyN(io.Discard, r, length-leadLen); err != nil {
			return nil, truncated(err)
		}
		return nil, &MessageTooLargeError{Size: length, Limit: MaxMessageSize, ID: leadingID(lead)}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, truncated(err)
	}
	if badCharset != "" {
		return body, &CharsetError{Charset: badCharset}
	}
	return body, nil
}

func charset(contentType string) string {
	for _, part := range strings.Split(contentType, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && strings.EqualFold(k, "charset") {
			return strings.ToLower(strings.Trim(v, `"`))
		}
	}
	return ""
}

// Validate checks that body is one JSON-RPC 2.0 message the dispatcher can
// handle. It returns nil when it is, else the encoded error response to send.
func Validate(body []byte) []byte {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if !json.Valid(trimmed) {
			return parseErrorReply(body)
		}
		return errorReply(nil, CodeInvalidRequest, "invalid request: batch messages are not supported; send one message per frame")
	}
	var m struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	// One pass: Unmarshal validates the whole body before decoding.
	if err := json.Unmarshal(body, &m); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return errorReply(nil, CodeInvalidRequest, "invalid request: a JSON-RPC message must be a JSON object")
		}
		if strings.Contains(err.Error(), "exceeded max depth") {
			// Too deep for encoding/json, yet perhaps well formed: the
			// request is answered under its own id.
			if id, ok := topLevelID(body); ok {
				return errorReply(id, CodeInvalidRequest, "invalid request: the message nests deeper than 10,000 levels")
			}
		}
		return parseErrorReply(body)
	}
	id, idOK := checkID(m.ID)
	if !idOK {
		return errorReply(nil, CodeInvalidRequest, fmt.Sprintf("invalid request: id %s must be a string or a non-negative integer", clip(string(m.ID), 40)))
	}
	if m.JSONRPC != nil && string(m.JSONRPC) != `"2.0"` {
		return errorReply(id, CodeInvalidRequest, fmt.Sprintf(`invalid request: "jsonrpc" must be "2.0", got %s`, clip(string(m.JSONRPC), 40)))
	}
	if m.Method != nil {
		var method string
		if json.Unmarshal(m.Method, &method) != nil || method == "" {
			return errorReply(id, CodeInvalidRequest, "invalid request: \"method\" must be a non-empty string")
		}
		return nil
	}
	if m.Result == nil && m.Error == nil {
		return errorReply(id, CodeInvalidRequest, "invalid request: a message needs \"method\" (request or notification) or \"result\"/\"error\" (response)")
	}
	if id == nil {
		return errorReply(nil, CodeInvalidRequest, "invalid request: a response needs the id of the request it answers")
	}
	return nil
}

func parseErrorReply(body []byte) []byte {
	var syn *json.SyntaxError
	if err := json.Unmarshal(body, new(any)); errors.As(err, &syn) {
		return errorReply(nil, CodeParseError, fmt.Sprintf("parse error: invalid JSON at byte %d: %v", syn.Offset, syn))
	}
	return errorReply(nil, CodeParseError, "parse error: the message body is not valid JSON")
}

// checkID returns the id to echo in an error reply (nil for none/null).
func checkID(raw json.RawMessage) (json.RawMessage, bool) {
	if raw == nil || string(raw) == "null" {
		return nil, true
	}
	switch raw[0] {
	case '"':
		return raw, true
	case '-':
		return nil, false
	}
	if _, err := strconv.ParseUint(string(raw), 10, 63); err != nil {
		return nil, false
	}
	return raw, true
}

func errorReply(id json.RawMessage, code int64, message string) []byte {
	return errorReplyOf(id, &Error{Code: code, Message: message})
}

// errorReplyOf is errorReply for an error with data.
func errorReplyOf(id json.RawMessage, e *Error) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *Error          `json:"error"`
	}{"2.0", id, e})
	return b
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// topLevelID finds the "id" member of a JSON object without decoding the
// other members, so nesting beyond encoding/json's limit does not hide it.
func topLevelID(body []byte) (json.RawMessage, bool) {
	members, ok := TopLevelMembers(body)
	if !ok {
		return nil, false
	}
	for _, m := range members {
		if m.Key == `"id"` {
			id, ok := checkID(m.Value)
			return id, ok && id != nil
		}
	}
	return nil, false
}
