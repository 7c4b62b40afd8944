package scriptedllm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// tb is a testing.TB that keeps the failures the model reports, so that
// these tests can check them without failing.
type tb struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (f *tb) Helper() {}
func (f *tb) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *tb) Failed() bool        { f.mu.Lock(); defer f.mu.Unlock(); return len(f.errs) > 0 }
func (f *tb) Logf(string, ...any) {}
func (f *tb) Cleanup(fn func())   { f.cleanups = append(f.cleanups, fn) }
func (f *tb) errors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.errs...)
}
func (f *tb) close() {
	for _, fn := range f.cleanups {
		fn()
	}
}
func (f *tb) Fatalf(string, ...any) { panic("Fatalf") }
func (f *tb) FailNow()              { panic("FailNow") }
func (f *tb) Fatal(args ...any)     { panic(fmt.Sprint(args...)) }

func post(t *testing.T, url string, body any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url+"/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func tools(names ...string) []any {
	var out []any
	for _, n := range names {
		out = append(out, map[string]any{"type": "function", "function": map[string]any{"name": n, "parameters": map[string]any{}}})
	}
	return out
}

// TestScript: a turn's tool calls come back with ids, the next turn's
// tool results are checked by those ids, and Done closes after the last.
func TestScript(t *testing.T) {
	f := &tb{TB: t}
	defer f.close()
	m := Start(f,
		Turn{Tools: []string{"terminal", "finish"}, ToolCalls: []ToolCall{Call("terminal", map[string]any{"command": "echo hi"})}},
		Turn{ToolResults: []string{"[Tool 'terminal' executed.]\nhi"}, Content: "done"},
	)
	status, body := post(t, m.URL, map[string]any{"model": "oh-scripted", "tools": tools("finish", "terminal"),
		"messages": []any{map[string]any{"role": "user", "content": "say hi"}}})
	if status != 200 || !strings.Contains(body, `"tool_calls":[{"id":"call_1","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"echo hi\"}"}}]`) {
		t.Fatalf("first answer %d %s", status, body)
	}
	status, body = post(t, m.URL, map[string]any{"model": "oh-scripted", "messages": []any{
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": []any{
			map[string]any{"type": "text", "text": "[Tool 'terminal' executed.]"}, map[string]any{"type": "text", "text": "hi"}}},
	}})
	if status != 200 || !strings.Contains(body, `"content":"done"`) || !strings.Contains(body, `"finish_reason":"stop"`) {
		t.Fatalf("second answer %d %s", status, body)
	}
	select {
	case <-m.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done did not close after the last turn")
	}
	if errs := f.errors(); len(errs) != 0 {
		t.Errorf("a script followed to the letter failed: %q", errs)
	}
}

// TestScriptFailures: a request off the script fails the test, with the
// request printed, and gets a 500.
func TestScriptFailures(t *testing.T) {
	for _, c := range []struct {
		name string
		turn Turn
		body map[string]any
		path string
		want string
	}{
		{"other tools", Turn{Tools: []string{"terminal"}}, map[string]any{"tools": tools("terminal", "browser")}, "", `the tools offered are ["browser" "terminal"], want ["terminal"]`},
		{"no turn left", Turn{}, nil, "", "the script has 1 turns and this is request 2"},
		{"other path", Turn{}, map[string]any{}, "/responses", "the scripted model has no POST /v1/responses"},
		{"check", Turn{Check: func(r *Request) error {
			if r.Model != "oh-scripted" {
				return fmt.Errorf("model %q", r.Model)
			}
			return nil
		}}, map[string]any{"model": "gpt"}, "", `model "gpt"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &tb{TB: t}
			defer f.close()
			m := Start(f, c.turn)
			body := c.body
			if c.name == "no turn left" {
				post(t, m.URL, map[string]any{})
				body = map[string]any{"model": "x"}
			}
			b, _ := json.Marshal(body)
			resp, err := http.Post(m.URL+firstNonEmpty(c.path, "/chat/completions"), "application/json", bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			errs := f.errors()
			if resp.StatusCode != 500 || len(errs) != 1 || !strings.Contains(errs[0], c.want) || !strings.Contains(errs[0], "the request: → POST") {
				t.Errorf("got HTTP %d and failures %q; want 500 and one failure saying %q with the request", resp.StatusCode, errs, c.want)
			}
			if !strings.Contains(m.Transcript(), "← 500 ") {
				t.Errorf("the transcript lacks the failure:\n%s", m.Transcript())
			}
		})
	}
}

// TestStreamed: a request with stream: true gets the answer as
// server-sent chunks, tool calls indexed, then [DONE].
func TestStreamed(t *testing.T) {
	f := &tb{TB: t}
	defer f.close()
	m := Start(f, Turn{ToolCalls: []ToolCall{Call("finish", map[string]any{"message": "ok"})}})
	status, body := post(t, m.URL, map[string]any{"model": "m", "stream": true})
	if status != 200 || !strings.HasPrefix(body, "data: {") || !strings.Contains(body, `"index":0,"type":"function"`) ||
		!strings.Contains(body, `"finish_reason":"tool_calls"`) || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Errorf("streamed answer %d:\n%s", status, body)
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestHold: a held turn's request is Reached and gets no answer until
// the test lets it go; a request that comes meanwhile is still held to
// the script.
func TestHold(t *testing.T) {
	f := &tb{TB: t}
	defer f.close()
	release := make(chan struct{})
	m := Start(f, Turn{Hold: release, Content: "held"}, Turn{Content: "second"})
	answered := make(chan string, 1)
	go func() {
		_, body := post(t, m.URL, map[string]any{"model": "m"})
		answered <- body
	}()
	select {
	case <-m.Reached(0):
	case <-time.After(5 * time.Second):
		t.Fatal("the held turn's request was never Reached")
	}
	select {
	case body := <-answered:
		t.Fatalf("a held turn was answered before its release: %s", body)
	default:
	}
	// Another request meanwhile is the script's second turn.
	if status, body := post(t, m.URL, map[string]any{"model": "m"}); status != 200 || !strings.Contains(body, `"content":"second"`) {
		t.Errorf("a request while the first was held: %d %s", status, body)
	}
	close(release)
	if body := <-answered; !strings.Contains(body, `"content":"held"`) {
		t.Errorf("the released answer: %s", body)
	}
	if errs := f.errors(); len(errs) != 0 {
		t.Errorf("failures: %q", errs)
	}
}

// TestTitles: the SDK's title request, wherever it comes between the
// turns, is answered with the person's message as the title and leaves
// the script where it was (its calls' ids too). Serve reports a failure
// instead of failing a test.
func TestTitles(t *testing.T) {
	var mu sync.Mutex
	var reported []string
	m, err := Serve(func(msg string) { mu.Lock(); reported = append(reported, msg); mu.Unlock() },
		Turn{ToolCalls: []ToolCall{Call("terminal", map[string]any{"command": "echo hi"})}},
		Turn{ToolResults: []string{"hi"}, Content: "done"},
	)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ask := func() (int, string) {
		return post(t, m.URL, map[string]any{"model": "m", "messages": []any{
			map[string]any{"role": "system", "content": []any{map[string]any{"type": "text", "text": "You are a helpful assistant that generates concise, descriptive titles for conversations with OpenHands. Return only the title."}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Generate a title (maximum 50 characters) for a conversation that starts with this message:\n\nFix the notes.\nThen say done..Also make sure to include ONE most relevant emoji at the start of the title."}}},
		}})
	}
	post(t, m.URL, map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "go"}}})
	if status, body := ask(); status != 200 || !strings.Contains(body, `"content":"Fix the notes."`) {
		t.Errorf("the title request got %d %s", status, body)
	}
	status, body := post(t, m.URL, map[string]any{"model": "m", "messages": []any{
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "hi"}}})
	if status != 200 || !strings.Contains(body, `"content":"done"`) {
		t.Errorf("the turn after the title got %d %s", status, body)
	}
	select {
	case <-m.Done():
	default:
		t.Error("the title counted as a turn: Done did not close after the script's two")
	}
	post(t, m.URL, map[string]any{"model": "m"})
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || !strings.Contains(reported[0], "the script has 2 turns and this is request 3") {
		t.Errorf("Serve reported %q, want the request off the script", reported)
	}
	select {
	case <-m.Broken():
	default:
		t.Error("Broken did not close")
	}
}

// TestAnswerTitles: a title request between two turns is answered with
// the title AnswerTitles names, and the turn after it still checks the
// results of the calls asked for before it.
func TestAnswerTitles(t *testing.T) {
	title := map[string]any{"model": "oh-scripted", "messages": []any{
		map[string]any{"role": "system", "content": []any{map[string]any{"type": "text", "text": "You are a helpful assistant that generates concise, descriptive titles for conversations with OpenHands."}}},
		map[string]any{"role": "user", "content": "Generate a title"}}}
	f := &tb{TB: t}
	defer f.close()
	m := Start(f,
		Turn{ToolCalls: []ToolCall{Call("terminal", map[string]any{"command": "echo hi"})}},
		Turn{ToolResults: []string{"hi"}, Content: "done"},
	)
	m.AnswerTitles("✨ Saying hi")
	post(t, m.URL, map[string]any{"model": "oh-scripted", "messages": []any{map[string]any{"role": "user", "content": "say hi"}}})
	if status, body := post(t, m.URL, title); status != 200 || !strings.Contains(body, `"content":"✨ Saying hi"`) {
		t.Fatalf("title answer %d %s", status, body)
	}
	status, body := post(t, m.URL, map[string]any{"model": "oh-scripted", "messages": []any{
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "hi"}}})
	if status != 200 || len(f.errors()) > 0 {
		t.Fatalf("the turn after the title: %d %s %q", status, body, f.errors())
	}
}
