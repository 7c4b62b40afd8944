// Package scriptedllm is a scripted model behind an OpenAI-compatible
// chat completions API (POST /v1/chat/completions) on 127.0.0.1, for tests
// that point a real agent (OpenHands' agent-server, through LiteLLM) at it.
// The test plays the model: a script says, for each request the agent is
// expected to make, what to check in it (the tools offered, the tool
// results it carries) and what to answer (text, tool calls). A request the
// script does not expect, or one that fails a check, fails the test with
// the request printed, and the agent gets an HTTP 500 (its LLM call fails
// instead of going on with a made-up answer). Every request and answer is
// kept in a transcript that a failing test prints.
//
// OpenHands' SDK calls the model through LiteLLM's OpenAI path when the
// model is "openai/<name>" with base_url this server's URL (which ends in
// /v1); it sends stream: false unless the LLM's stream is set, and both are
// served.
package scriptedllm

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Turn is one expected request and its answer.
type Turn struct {
	// Tools, when not nil, are the names of the tools the request must
	// offer, in any order, and no others.
	Tools []string
	// ToolResults, when not nil, are the exact texts of the tool messages
	// that answer the previous turn's tool calls, in the order of those
	// calls (as Message.Text reads them).
	ToolResults []string
	// Check, when set, checks anything else of the request; its error
	// fails the test.
	Check func(*Request) error

	// Hold, when not nil, keeps the answer back until it is closed (or
	// the agent gives up on the request): the agent stays in its run,
	// waiting on its model, for as long as the test needs. Reached says
	// when the request is there.
	Hold <-chan struct{}

	// Content is the assistant message's text.
	Content string
	// ToolCalls are the tool calls the assistant asks for.
	ToolCalls []ToolCall
}

// ToolCall is a tool call of the assistant's. ID is made up when empty.
type ToolCall struct {
	ID        string
	Name      string
	Arguments any // marshalled to the JSON text of function.arguments
}

// Call is a ToolCall with these arguments.
func Call(name string, args any) ToolCall { return ToolCall{Name: name, Arguments: args} }

// Request is one request as the model received it.
type Request struct {
	Path string
	// Header is the request's (Authorization carries the agent's key).
	Header http.Header
	Body   json.RawMessage
	// Decoded parts of the body.
	Model    string    `json:"model"`
	Stream   bool      `json:"stream"`
	Messages []Message `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// Message is a chat message of a request.
type Message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"` // a string, or a list of parts
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// Text is the message's text: its content string, or its text parts
// joined by newlines (OpenHands sends an MCP tool's result as the part
// "[Tool 'x' executed.]" and then the tool's own text parts).
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(m.Content, &parts)
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// ToolNames are the names of the tools the request offers, sorted.
func (r *Request) ToolNames() []string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Function.Name)
	}
	slices.Sort(names)
	return names
}

// ToolResult is the text of the tool message answering the call id, and
// whether there is one.
func (r *Request) ToolResult(id string) (string, bool) {
	for _, m := range r.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			return m.Text(), true
		}
	}
	return "", false
}

// Server is a running scripted model.
type Server struct {
	// URL is the base URL to give the agent's LLM, ending in /v1.
	URL string

	t      testing.TB // nil outside a test (Serve)
	report func(string)
	srv    *http.Server
	mu     sync.Mutex
	turns  []Turn
	next   int
	// answered counts the turns answered (held ones once let go).
	answered int
	calls    []ToolCall // the last answer's, with their ids
	log      []string   // the transcript
	reqs     []*Request
	done     chan struct{}
	broken   chan struct{} // closed when the script failed the test
	ids      int
	// reached are closed as each turn's request arrives and passes its
	// checks.
	reached []chan struct{}
	// title, when set, answers OpenHands' title requests (AnswerTitles);
	// otherwise the first line of the message they quote does.
	title string
}

// Start serves the script on 127.0.0.1 until the test ends. A failing
// test prints the transcript.
func Start(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	return StartOn(t, nil, turns...)
}

// StartOn is Start on a listener of the test's (one in a network
// namespace of its own); nil listens on 127.0.0.1.
func StartOn(t testing.TB, ln net.Listener, turns ...Turn) *Server {
	t.Helper()
	s, err := serve(func(msg string) { t.Errorf("%s", msg) }, turns, ln)
	if err != nil {
		t.Fatal(err)
	}
	s.t = t
	t.Cleanup(func() {
		s.Close()
		if t.Failed() {
			t.Logf("the scripted model's transcript:\n%s", s.Transcript())
		}
	})
	return s
}

// Serve serves the script outside a test (the demo) until Close. report
// gets each failure a test would fail with; the agent still gets its 500.
// Wait needs a test: use Done.
func Serve(report func(msg string), turns ...Turn) (*Server, error) {
	return serve(report, turns, nil)
}

func serve(report func(string), turns []Turn, ln net.Listener) (*Server, error) {
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
			return nil, err
		}
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1", report: report, turns: turns, done: make(chan struct{}), broken: make(chan struct{})}
	for range turns {
		s.reached = append(s.reached, make(chan struct{}))
	}
	if len(turns) == 0 {
		close(s.done)
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops serving.
func (s *Server) Close() { s.srv.Close() }

// Broken is closed once a request failed the script.
func (s *Server) Broken() <-chan struct{} { return s.broken }

// Reached is closed once the request of turn i (from 0) has arrived and
// passed its checks; a held turn is then waiting for its Hold.
func (s *Server) Reached(i int) <-chan struct{} { return s.reached[i] }

// AnswerTitles has the model answer OpenHands' title requests with
// title instead of the first line of the person's message: a test that
// checks the conversation's title names the one it wants.
func (s *Server) AnswerTitles(title string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.title = title
}

// Done is closed once every turn of the script was answered.
func (s *Server) Done() <-chan struct{} { return s.done }

// Wait waits until every turn was answered. It ends the test at once when
// the script failed it, and fails it after timeout with how far the
// script got. Call it from the test's goroutine.
func (s *Server) Wait(timeout time.Duration) {
	s.t.Helper()
	select {
	case <-s.done:
	case <-s.broken:
		s.t.FailNow()
	case <-time.After(timeout):
		s.mu.Lock()
		n := s.next
		s.mu.Unlock()
		s.t.Fatalf("the scripted model answered %d of its %d turns in %v", n, len(s.turns), timeout)
	}
}

// Requests are the requests received so far.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Transcript is every request and answer so far, in order.
func (s *Server) Transcript() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.log, "\n")
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf("→ %s %s %s", r.Method, r.URL.Path, body))
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		s.fail(w, fmt.Sprintf("the scripted model has no %s %s", r.Method, r.URL.Path))
		s.mu.Unlock()
		return
	}
	req := &Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	if err := json.Unmarshal(body, req); err != nil {
		s.fail(w, "the request is not the JSON of a chat completion: "+err.Error())
		s.mu.Unlock()
		return
	}
	if message, ok := titleRequest(req); ok {
		t := title(message)
		if s.title != "" {
			t = s.title
		}
		answer := s.answer(req, Turn{Content: t}, false)
		s.log = append(s.log, "← (a title, not a turn of the script) "+string(answer))
		s.mu.Unlock()
		s.write(w, req, answer)
		return
	}
	s.reqs = append(s.reqs, req)
	if s.next >= len(s.turns) {
		s.fail(w, fmt.Sprintf("the script has %d turns and this is request %d", len(s.turns), s.next+1))
		s.mu.Unlock()
		return
	}
	i := s.next
	turn := s.turns[i]
	if err := s.check(req, turn); err != nil {
		s.fail(w, fmt.Sprintf("turn %d: %v", i+1, err))
		s.mu.Unlock()
		return
	}
	s.next++
	answer := s.answer(req, turn, true)
	close(s.reached[i])
	s.mu.Unlock()

	// The lock is not held while the turn waits: a request the agent
	// makes meanwhile (one the script does not expect) still fails.
	if turn.Hold != nil {
		select {
		case <-turn.Hold:
		case <-r.Context().Done():
			s.mu.Lock()
			s.log = append(s.log, fmt.Sprintf("← (turn %d was held; the agent gave up on it)", i+1))
			s.mu.Unlock()
			return
		}
	}
	s.mu.Lock()
	s.log = append(s.log, "← "+string(answer))
	s.answered++
	last := s.answered == len(s.turns)
	s.mu.Unlock()
	s.write(w, req, answer)
	if last {
		close(s.done)
	}
}

// write sends the answer, streamed when the request asked.
func (s *Server) write(w http.ResponseWriter, req *Request, answer []byte) {
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(streamed(answer))
	} else {
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}
}

// The SDK's title request (openhands/sdk/conversation/title_utils.py,
// 1.49.1 and 1.58.2): its system message says what it is for, and its user
// message quotes the person's between these two.
const (
	titleSystem = "generates concise, descriptive titles for conversations with OpenHands"
	titleBefore = "starts with this message:\n\n"
	titleAfter  = ".Also make sure to include"
)

// titleRequest says whether req asks for a title, and gives the person's
// message it quotes.
func titleRequest(req *Request) (string, bool) {
	if len(req.Tools) > 0 || len(req.Messages) != 2 || req.Messages[0].Role != "system" ||
		!strings.Contains(req.Messages[0].Text(), titleSystem) {
		return "", false
	}
	text := req.Messages[1].Text()
	if _, rest, ok := strings.Cut(text, titleBefore); ok {
		if i := strings.LastIndex(rest, titleAfter); i >= 0 {
			return rest[:i], true
		}
	}
	return text, true
}

// title is the message's first line.
func title(message string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(message), "\n")
	return line
}

// fail fails the test with the request (last in the log) and answers 500.
func (s *Server) fail(w http.ResponseWriter, msg string) {
	select {
	case <-s.broken:
	default:
		close(s.broken)
	}
	s.report(fmt.Sprintf("scripted model: %s\nthe request: %s", msg, s.log[len(s.log)-1]))
	s.log = append(s.log, "← 500 "+msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": "scripted model: " + msg, "type": "server_error"}})
	w.Write(b)
}

// check holds the request to the turn's expectations.
func (s *Server) check(req *Request, turn Turn) error {
	if turn.Tools != nil {
		want := slices.Sorted(slices.Values(turn.Tools))
		if got := req.ToolNames(); !slices.Equal(got, want) {
			return fmt.Errorf("the tools offered are %q, want %q", got, want)
		}
	}
	if turn.ToolResults != nil {
		if len(turn.ToolResults) != len(s.calls) {
			return fmt.Errorf("the script expects %d tool results, and the turn before asked for %d calls", len(turn.ToolResults), len(s.calls))
		}
		for i, c := range s.calls {
			got, ok := req.ToolResult(c.ID)
			if !ok {
				return fmt.Errorf("no tool message answers call %s (%s)", c.ID, c.Name)
			}
			if got != turn.ToolResults[i] {
				return fmt.Errorf("the result of %s (call %s) is\n%q\nwant\n%q", c.Name, c.ID, got, turn.ToolResults[i])
			}
		}
	}
	if turn.Check != nil {
		return turn.Check(req)
	}
	return nil
}

// answer is the chat completion for the turn; when remember, it keeps the
// calls' ids for the next turn's ToolResults.
func (s *Server) answer(req *Request, turn Turn, remember bool) []byte {
	type function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type toolCall struct {
		ID       string   `json:"id"`
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	msg := map[string]any{"role": "assistant", "content": turn.Content}
	if remember {
		s.calls = nil
	}
	var calls []toolCall
	for _, c := range turn.ToolCalls {
		if c.ID == "" {
			s.ids++
			c.ID = fmt.Sprintf("call_%d", s.ids)
		}
		args, ok := c.Arguments.(string)
		if !ok {
			b, _ := json.Marshal(c.Arguments)
			args = string(b)
		}
		calls = append(calls, toolCall{c.ID, "function", function{c.Name, args}})
		if remember {
			s.calls = append(s.calls, c)
		}
	}
	finish := "stop"
	if len(calls) > 0 {
		msg["tool_calls"] = calls
		finish = "tool_calls"
	}
	s.ids++
	b, _ := json.Marshal(map[string]any{
		"id":      fmt.Sprintf("chatcmpl-%d", s.ids),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
	})
	return b
}

// streamed is a chat completion as server-sent chunks: the whole message
// in one delta, then the finish reason with the usage, then [DONE].
func streamed(answer []byte) []byte {
	var c struct {
		ID      string `json:"id"`
		Created int64  `json:"created"`
		Model   string `json:"model"`
		Choices []struct {
			Message      map[string]any `json:"message"`
			FinishReason string         `json:"finish_reason"`
		} `json:"choices"`
		Usage any `json:"usage"`
	}
	json.Unmarshal(answer, &c)
	delta := c.Choices[0].Message
	if calls, ok := delta["tool_calls"].([]any); ok {
		for i, call := range calls {
			call.(map[string]any)["index"] = i
		}
	}
	chunk := func(choice map[string]any, usage any) string {
		m := map[string]any{"id": c.ID, "object": "chat.completion.chunk", "created": c.Created, "model": c.Model,
			"choices": []any{choice}}
		if usage != nil {
			m["usage"] = usage
		}
		b, _ := json.Marshal(m)
		return "data: " + string(b) + "\n\n"
	}
	out := chunk(map[string]any{"index": 0, "delta": delta, "finish_reason": nil}, nil) +
		chunk(map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": c.Choices[0].FinishReason}, c.Usage) +
		"data: [DONE]\n\n"
	return []byte(out)
}
