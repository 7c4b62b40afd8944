// Command scriptedllm serves a package scriptedllm script read from a JSON
// file, for tests that are not Go (the VS Code end-to-end run,
// extension/e2e) and point a real agent-server's LLM at it. The script:
//
//	{"turns": [
//	  {"tools": ["terminal", "finish", …], "content": "…",
//	   "toolCalls": [{"name": "terminal", "arguments": {"command": "…"}}]},
//	  …
//	]}
//
// (tools, when given, are the tools each request must offer, no more and
// no fewer). It says on stdout, a line each:
//
//	URL http://127.0.0.1:N/v1               once it listens: the LLM's base_url
//	REQUEST n {"toolResults": […], "user": "…"}  request n (from 1) passed its checks: the
//	                                        tool results it carries (those after the last
//	                                        assistant message) and the last user message
//	DONE                                    every turn was answered
//	FAIL <what>                             a request the script does not expect, or one
//	                                        that fails its checks (answered with HTTP 500)
//
// and serves until its standard input closes or it gets SIGTERM or SIGINT;
// then it prints the transcript to stderr when something failed, and exits
// 1 if so. (The SDK's title requests are answered apart, as package
// scriptedllm does: they are not turns.)
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/oh-bridge/oh-bridge/internal/helperstop"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// script is the file's shape.
type script struct {
	Turns []struct {
		Tools     []string `json:"tools"`
		Content   string   `json:"content"`
		ToolCalls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"toolCalls"`
	} `json:"turns"`
}

func main() {
	file := flag.String("script", "", "the script's JSON file")
	flag.Parse()
	if *file == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: scriptedllm -script FILE")
		os.Exit(2)
	}
	turns, err := load(*file)
	if err != nil {
		fmt.Fprintf(os.Stderr, "scriptedllm: %v\n", err)
		os.Exit(2)
	}
	os.Exit(serve(turns, os.Stdin, os.Stdout, os.Stderr))
}

func load(file string) ([]scriptedllm.Turn, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var sc script
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("%s is not a script (%v): see the command's doc comment for its shape", file, err)
	}
	if len(sc.Turns) == 0 {
		return nil, fmt.Errorf("%s has no turns", file)
	}
	var turns []scriptedllm.Turn
	for i, t := range sc.Turns {
		turn := scriptedllm.Turn{Tools: t.Tools, Content: t.Content}
		for j, c := range t.ToolCalls {
			if c.Name == "" {
				return nil, fmt.Errorf("%s: turn %d's tool call %d has no name", file, i+1, j+1)
			}
			// The arguments' JSON goes to the model's answer as it is.
			args := string(c.Arguments)
			if args == "" {
				args = "{}"
			}
			turn.ToolCalls = append(turn.ToolCalls, scriptedllm.ToolCall{Name: c.Name, Arguments: args})
		}
		turns = append(turns, turn)
	}
	return turns, nil
}

// serve runs the script until in closes or a signal comes.
func serve(turns []scriptedllm.Turn, in io.Reader, out, errOut io.Writer) int {
	var mu sync.Mutex
	failed := false
	// One writer at a time: the lines come from the server's handlers.
	printf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	n := 0
	for i := range turns {
		// Check runs as a request arrives, once it passed the turn's own
		// checks, under the server's lock: the lines keep the requests'
		// order.
		turns[i].Check = func(req *scriptedllm.Request) error {
			n++
			line, _ := json.Marshal(map[string]any{"toolResults": toolResults(req), "user": lastUser(req)})
			printf("REQUEST %d %s", n, line)
			return nil
		}
	}
	s, err := scriptedllm.Serve(func(msg string) {
		mu.Lock()
		failed = true
		mu.Unlock()
		// One line: the caller reads lines.
		printf("FAIL %s", strings.ReplaceAll(msg, "\n", " "))
	}, turns...)
	if err != nil {
		fmt.Fprintf(errOut, "scriptedllm: %v\n", err)
		return 1
	}
	defer s.Close()
	printf("URL %s", s.URL)
	go func() {
		<-s.Done()
		printf("DONE")
	}()
	asked, release := helperstop.Asked(in)
	defer release()
	<-asked
	// Not under mu: a handler that fails holds the server's lock, which
	// Transcript takes, while it waits for mu.
	mu.Lock()
	broken := failed
	mu.Unlock()
	if broken {
		fmt.Fprintf(errOut, "the scripted model's transcript:\n%s\n", s.Transcript())
		return 1
	}
	return 0
}

// toolResults are the texts of the request's tool messages after its
// last assistant message: the results of the calls that message asked for.
func toolResults(req *scriptedllm.Request) []string {
	results := []string{}
	for _, m := range req.Messages {
		switch m.Role {
		case "assistant":
			results = results[:0]
		case "tool":
			results = append(results, m.Text())
		}
	}
	return results
}

func lastUser(req *scriptedllm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Text()
		}
	}
	return ""
}
