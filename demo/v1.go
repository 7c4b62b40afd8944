package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/oh-bridge/oh-bridge/agentserver/agentservertest"
	"github.com/oh-bridge/oh-bridge/ohevents"
)

// summaryV1 is how a V1 session ended (openhands/status).
type summaryV1 struct {
	State           string
	ConversationID  string
	ExecutionStatus string
	Events          int
	RunningActions  int
}

// sessionV1 is the scripted agent's turns: one tool call of the bridge's
// per LLM response, then finish.
func sessionV1(ws string) map[string]any {
	call := func(tool string, args map[string]any) []map[string]any {
		return []map[string]any{{"tool": tool, "arguments": args}}
	}
	terminal := func(cmd string) []map[string]any { return call("terminal", map[string]any{"command": cmd}) }
	edit := func(args map[string]any) []map[string]any { return call("file_editor", args) }
	calc := filepath.Join(ws, "calc")
	return map[string]any{"turns": [][]map[string]any{
		terminal("mkdir -p calc && cd calc && pwd"),
		edit(map[string]any{"command": "create", "path": filepath.Join(calc, "calc.py"), "file_text": calcPy}),
		edit(map[string]any{"command": "create", "path": filepath.Join(calc, "test_calc.py"), "file_text": testCalcPy}),
		terminal("python3 -m unittest"),
		edit(map[string]any{"command": "str_replace", "path": filepath.Join(calc, "calc.py"), "old_str": "return a - b", "new_str": "return a + b"}),
		terminal("python3 -m unittest -v"),
		{{"finish": finishMessage}},
	}}
}

// runStandIn plays the story with the stand-in agent-server and its
// scripted agent: where the real agent-server cannot be installed.
func runStandIn(bin string, keep bool, out io.Writer) (*summaryV1, error) {
	if err := agentservertest.Available(); err != nil {
		return nil, err
	}
	d, err := newWorkspace(out, keep)
	if err != nil {
		return nil, err
	}
	defer d.close()
	script, err := d.writeScript(sessionV1(d.ws))
	if err != nil {
		return nil, err
	}
	const key = "demo-session-key"
	fmt.Fprintln(out, "== starting the stand-in for OpenHands' agent-server (fixtures/peers/agent_server_standin.py, on Debian's python3-fastapi); its agent follows a script")
	// The stand-in only where the real agent-server is not installed.
	peer, err := agentservertest.Launch("--script", script, "--session-api-key", key)
	if err != nil {
		return nil, err
	}
	defer peer.Stop()
	return d.play(bin, peer.URL, key, map[string]any{"model": "demo/scripted"}, nil)
}

// play starts the bridge, has it dial the agent-server with the task, and
// prints the conversation until the agent finished. broken, when closed,
// says the agent's model failed.
func (d *demo) play(bin, serverURL, key string, llm map[string]any, broken <-chan struct{}) (*summaryV1, error) {
	if err := d.startBridge(bin); err != nil {
		return nil, err
	}
	out := d.out
	// The story ends with the finish tool's observation: the status can
	// say "finished" first, when the socket opens after the agent is done.
	printed := make(chan struct{})
	go func() {
		defer close(printed)
		d.printEvents(nil, describeV1, func(ev ohevents.Event) bool {
			o, ok := ev.(*ohevents.ObservationEvent)
			return ok && o.ToolName == "finish"
		})
	}()
	fmt.Fprintf(out, "== the bridge dials %s on demand (openhands/connect) and serves its tools over MCP\n\n", serverURL)
	var res struct{ ConversationID string }
	if err := d.client.Call(d.ctx, "openhands/connect", map[string]any{
		"serverUrl":     serverURL,
		"sessionApiKey": key,
		"llm":           llm,
		"task":          task,
	}, &res); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	select {
	case <-printed:
	case <-broken:
		return nil, fmt.Errorf("the agent's scripted model got a request it did not expect")
	case <-d.ctx.Done():
		return nil, fmt.Errorf("the agent did not finish: %w", d.ctx.Err())
	}
	if _, err := d.client.AwaitNotification(d.ctx, "openhands/did_change_status", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"executionStatus":"finished"`)
	}); err != nil {
		return nil, err
	}

	var st summaryV1
	d.client.Call(d.ctx, "openhands/status", nil, &st)
	fmt.Fprintf(out, "\n== done: conversation %s, %d events, %d actions running, agent %s, connection %s\n",
		st.ConversationID, st.Events, st.RunningActions, st.ExecutionStatus, st.State)
	return &st, d.close()
}

// describeV1 renders a V1 event in a line or a few.
func describeV1(ev ohevents.Event) string {
	texts := func(items []ohevents.TextContent) string {
		var parts []string
		for _, c := range items {
			parts = append(parts, c.Text)
		}
		return strings.Join(parts, "\n")
	}
	switch e := ev.(type) {
	case *ohevents.MessageEvent:
		who := "agent "
		if e.Source == "user" {
			who = "user  "
		}
		var content ohevents.Texts
		if e.LLMMessage != nil {
			content = e.LLMMessage.Content
		}
		return fmt.Sprintf("%s ▸ %s\n", who, texts(content))
	case *ohevents.SystemPromptEvent:
		var names []string
		for _, t := range e.Tools {
			names = append(names, t.Title)
		}
		return fmt.Sprintf("agent  ▸ starts with the tools %s\n", strings.Join(names, ", "))
	case *ohevents.ActionEvent:
		// The call's arguments, as the tools the demo shows take them.
		var args struct{ Command, Path string }
		var message string
		if e.Action != nil {
			json.Unmarshal(e.Action.Data, &args)
			message = e.Action.Message
		}
		switch e.ToolName {
		case "terminal":
			return fmt.Sprintf("agent  ▸ terminal: %s\n", args.Command)
		case "file_editor":
			return fmt.Sprintf("agent  ▸ file_editor %s %s\n", args.Command, args.Path)
		case "finish":
			return fmt.Sprintf("agent  ▸ finish: %s\n", message)
		default:
			return fmt.Sprintf("agent  ▸ %s\n", e.ToolName)
		}
	case *ohevents.ObservationEvent:
		if e.Observation == nil || e.Observation.Kind != "MCPToolObservation" {
			return ""
		}
		text := texts(e.Observation.Content)
		// The first block is the SDK's "[Tool 'x' executed.]".
		_, text, _ = strings.Cut(text, "\n")
		return fmt.Sprintf("bridge ◂ %s\n%s", e.ToolName, indent(text))
	case *ohevents.ConversationStateUpdateEvent:
		if e.Key == "execution_status" {
			return fmt.Sprintf("         (%s)\n", e.ExecutionStatus())
		}
	}
	return ""
}
