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
	Body json.RawMessage
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

	t      testing.TB
	srv    *http.Server
	mu     sync.Mutex
	turns  []Turn
	next   int
	calls  []ToolCall // the last answer's, with their ids
	log    []string   // the transcript
	reqs   []*Request
	done   chan struct{}
	broken chan struct{} // closed when the script failed the test
	ids    int
	title  string // the answer to a title request, "" when the script must hold them
}

// Start serves the script on 127.0.0.1 until the test ends. A failing
// test prints the transcript.
func Start(t testing.TB, turns ...Turn) *Server {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1", t: t, turns: turns, done: make(chan struct{}), broken: make(chan struct{})}
	if len(turns) == 0 {
		close(s.done)
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	t.Cleanup(func() {
		s.srv.Close()
		if t.Failed() {
			t.Logf("the scripted model's transcript:\n%s", s.Transcript())
		}
	})
	return s
}

// titlePrompt begins the system message of OpenHands' request for a
// conversation's title (openhands/sdk/conversation/title_utils.py
// generate_title_with_llm, 1.49.1 and 1.58.2).
const titlePrompt = "You are a helpful assistant that generates concise, descriptive titles"

// AnswerTitles has the model answer OpenHands' title requests with title,
// beside the script: a conversation started with autotitle on (the
// default, and what the bridge sends) asks the agent's model for a title
// once its first message is in, at a moment the script cannot know.
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
	defer s.mu.Unlock()
	s.log = append(s.log, fmt.Sprintf("→ %s %s %s", r.Method, r.URL.Path, body))
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		s.fail(w, fmt.Sprintf("the scripted model has no %s %s", r.Method, r.URL.Path))
		return
	}
	req := &Request{Path: r.URL.Path, Body: body}
	if err := json.Unmarshal(body, req); err != nil {
		s.fail(w, "the request is not the JSON of a chat completion: "+err.Error())
		return
	}
	if s.title != "" && len(req.Messages) > 0 && req.Messages[0].Role == "system" && strings.HasPrefix(req.Messages[0].Text(), titlePrompt) {
		calls := s.calls // the next turn's ToolResults answer these
		answer := s.answer(req, Turn{Content: s.title})
		s.calls = calls
		s.log = append(s.log, "← (title) "+string(answer))
		s.write(w, req, answer)
		return
	}
	s.reqs = append(s.reqs, req)
	if s.next >= len(s.turns) {
		s.fail(w, fmt.Sprintf("the script has %d turns and this is request %d", len(s.turns), s.next+1))
		return
	}
	turn := s.turns[s.next]
	if err := s.check(req, turn); err != nil {
		s.fail(w, fmt.Sprintf("turn %d: %v", s.next+1, err))
		return
	}
	s.next++
	answer := s.answer(req, turn)
	s.log = append(s.log, "← "+string(answer))
	s.write(w, req, answer)
	if s.next == len(s.turns) {
		close(s.done)
	}
}

func (s *Server) write(w http.ResponseWriter, req *Request, answer []byte) {
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(streamed(answer))
	} else {
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}
}

// fail fails the test with the request (last in the log) and answers 500.
func (s *Server) fail(w http.ResponseWriter, msg string) {
	select {
	case <-s.broken:
	default:
		close(s.broken)
	}
	s.t.Errorf("scripted model: %s\nthe request: %s", msg, s.log[len(s.log)-1])
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

// answer is the chat completion for the turn; it remembers the calls'
// ids for the next turn's ToolResults.
func (s *Server) answer(req *Request, turn Turn) []byte {
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
	s.calls = nil
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
		s.calls = append(s.calls, c)
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
