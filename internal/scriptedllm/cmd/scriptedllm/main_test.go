package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLines: a script read from its file is served, and the lines the e2e
// reads say where, what each request carried, when the script is done,
// and what it did not expect; the command ends when its input closes,
// with status 1 and the transcript after a failure.
func TestLines(t *testing.T) {
	file := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(file, []byte(`{"turns": [
		{"tools": ["terminal"], "toolCalls": [{"name": "terminal", "arguments": {"command": "echo hi"}}]},
		{"content": "Done."}
	]}`), 0o600)
	turns, err := load(file)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errOut strings.Builder
	code := make(chan int, 1)
	go func() { code <- serve(turns, inR, outW, &errOut); outW.Close() }()
	// Read as written: a request's line is written before its answer.
	got := make(chan string, 16)
	go func() {
		lines := bufio.NewScanner(outR)
		for lines.Scan() {
			got <- lines.Text()
		}
		close(got)
	}()
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-got:
			if !ok {
				return "(no more lines)"
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no line in 10 s")
			return ""
		}
	}
	url, ok := strings.CutPrefix(next(), "URL ")
	if !ok || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("the first line is not the URL: %q", url)
	}
	post := func(body string) int {
		t.Helper()
		resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tools := `"tools": [{"type": "function", "function": {"name": "terminal"}}]`
	if st := post(`{"model": "m", "messages": [{"role": "user", "content": "say hi"}], ` + tools + `}`); st != 200 {
		t.Fatalf("turn 1: HTTP %d", st)
	}
	if l := next(); l != `REQUEST 1 {"toolResults":[],"user":"say hi"}` {
		t.Errorf("turn 1's line: %q", l)
	}
	if st := post(`{"model": "m", "messages": [{"role": "user", "content": "say hi"},
		{"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
		{"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "hi"}]}]}`); st != 200 {
		t.Fatalf("turn 2: HTTP %d", st)
	}
	if l := next(); l != `REQUEST 2 {"toolResults":["hi"],"user":"say hi"}` {
		t.Errorf("turn 2's line: %q", l)
	}
	if l := next(); l != "DONE" {
		t.Errorf("after the last turn: %q, want DONE", l)
	}
	if st := post(`{"model": "m", "messages": [{"role": "user", "content": "more"}]}`); st != 500 {
		t.Errorf("a request past the script: HTTP %d, want 500", st)
	}
	if l := next(); !strings.HasPrefix(l, "FAIL scripted model: the script has 2 turns and this is request 3") {
		t.Errorf("a request past the script: %q", l)
	}
	inW.Close()
	select {
	case c := <-code:
		if c != 1 || !strings.Contains(errOut.String(), "the scripted model's transcript:") {
			t.Errorf("after a failure: exit %d, stderr %q; want 1 and the transcript", c, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not end when its input closed")
	}
}

// TestBadScript: a file that is not a script is refused, saying why.
func TestBadScript(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"unknown field": `{"turns": [{"contnet": "typo"}]}`,
		"no turns":      `{"turns": []}`,
		"nameless call": `{"turns": [{"toolCalls": [{"arguments": {}}]}]}`,
	} {
		file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		os.WriteFile(file, []byte(text), 0o600)
		if _, err := load(file); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}
