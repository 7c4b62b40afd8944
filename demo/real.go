package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/oh-bridge/oh-bridge/internal/realserver"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
)

// scriptReal is the story as the real agent-server's model plays it: one
// tool call of the bridge's per answer, then the finish tool. (The
// agent-server also asks the model for the conversation's title; the
// scripted model answers that itself.)
func scriptReal(ws string) []scriptedllm.Turn {
	calc := filepath.Join(ws, "calc")
	tools := []string{"file_editor", "task_tracker", "terminal", "finish", "think"}
	turn := func(tool string, args map[string]any) scriptedllm.Turn {
		return scriptedllm.Turn{Tools: tools, ToolCalls: []scriptedllm.ToolCall{scriptedllm.Call(tool, args)}}
	}
	terminal := func(cmd string) scriptedllm.Turn { return turn("terminal", map[string]any{"command": cmd}) }
	return []scriptedllm.Turn{
		terminal("mkdir -p calc && cd calc && pwd"),
		turn("file_editor", map[string]any{"command": "create", "path": filepath.Join(calc, "calc.py"), "file_text": calcPy}),
		turn("file_editor", map[string]any{"command": "create", "path": filepath.Join(calc, "test_calc.py"), "file_text": testCalcPy}),
		terminal("python3 -m unittest"),
		turn("file_editor", map[string]any{"command": "str_replace", "path": filepath.Join(calc, "calc.py"), "old_str": "return a - b", "new_str": "return a + b"}),
		terminal("python3 -m unittest -v"),
		turn("finish", map[string]any{"message": finishMessage}),
	}
}

// runReal plays the story with OpenHands' own agent-server of the lock
// (installed by `task openhands`), its model played by a script.
func runReal(bin, lock string, keep bool, out io.Writer) (*summaryV1, error) {
	venv, err := realserver.Venv(lock)
	if err != nil {
		return nil, err
	}
	d, err := newWorkspace(out, keep)
	if err != nil {
		return nil, err
	}
	defer d.close()
	var mu sync.Mutex
	var failures []string
	model, err := scriptedllm.Serve(func(msg string) { mu.Lock(); failures = append(failures, msg); mu.Unlock() }, scriptReal(d.ws)...)
	if err != nil {
		return nil, err
	}
	defer model.Close()
	fmt.Fprintf(out, "== starting OpenHands' agent-server (%s, installed by `task openhands`) on 127.0.0.1; its LLM is a scripted model at %s\n", lock, model.URL)
	srv, err := realserver.Launch(venv, realserver.Options{})
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	fmt.Fprintf(out, "   (it was ready in %.1f s)\n", srv.Startup.Seconds())
	st, err := d.play(bin, srv.URL, srv.Key, map[string]any{
		"model": "openai/oh-scripted", "base_url": model.URL, "api_key": "sk-demo", "num_retries": 0,
	}, model.Broken())
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) > 0 {
			return nil, fmt.Errorf("%w; the scripted model says: %s\nthe agent-server's log:\n%s", err, strings.Join(failures, "\n"), srv.Log())
		}
		return nil, fmt.Errorf("%w\nthe agent-server's log:\n%s", err, srv.Log())
	}
	return st, nil
}
