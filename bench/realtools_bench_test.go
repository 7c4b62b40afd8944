package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/agentserver"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/internal/scriptedllm"
	"github.com/oh-bridge/oh-bridge/session"
)

// BenchmarkRealServerTools: the same scripted task run by the real
// agent-server's agent (1.58.2) twice in the same run, once with
// OpenHands' own tools (the agent's tools [terminal, file_editor], the
// names the SDK registers them under) and once with the bridge's over MCP
// (tools [] and mcp_config naming the compiled bridge's HTTP endpoint).
// A step is one LLM turn with one tool call and its observation; the
// steps cycle through terminal `echo hi`, file_editor view of a small
// file, `echo hi` again and a file_editor str_replace in it. The two
// conversations take their steps in turn (the scripted model holds each
// answer until the bench lets it go), so that the host's load, which
// varies, falls on both alike. Reported:
//   - step: from the model's answer leaving to the agent's next request
//     arriving, i.e. the server's orchestration and the tool, per step
//     and by tool (mean over all steps; medians by tool), and the ratio
//     bridge/built-in (goal ≤ 1.0);
//   - leg: the server's own time of the tool call, from the ActionEvent's
//     timestamp to the ObservationEvent's;
//   - wire: the bridge's time for each tools/call, as a proxy in front of
//     its endpoint times it (request out to the answer's last byte);
//   - in-process: the same calls on a session.Agent in this process (the
//     tools, the session and the engine the binary runs, without MCP,
//     HTTP or a process boundary), three per step, interleaved;
//   - direct: the same calls straight to the bridge's endpoint (no proxy,
//     no client library, an MCP session of its own), three per step;
//   - bridge-added: for each wire call, its time minus the in-process
//     median of the same op; their median (goal ≤ 2 ms).
func BenchmarkRealServerTools(b *testing.B) {
	srv := realServer(b)
	const steps, warm = 48, 4 // the first cycle starts tmux, the shell, the MCP session
	p, bridgeDir := startOpenHandsBridge(b)
	epURL, token := mcpHTTP(b, p)
	wire := startWireTimer(b, epURL)

	builtin := &toolRun{name: "built-in", dir: realDir(b),
		tools: []string{"file_editor", "terminal", "finish", "think"},
		agent: map[string]any{"kind": "Agent", "tools": []any{
			map[string]any{"name": "terminal"}, map[string]any{"name": "file_editor"}}}}
	bridge := &toolRun{name: "bridge", dir: bridgeDir,
		tools: []string{"file_editor", "task_tracker", "terminal", "finish", "think"},
		agent: map[string]any{"kind": "Agent", "tools": []any{},
			"mcp_config": map[string]any{"oh-bridge": map[string]any{"transport": "http", "url": wire.URL,
				"headers": map[string]string{"Authorization": "Bearer " + token}}}}}
	runs := []*toolRun{builtin, bridge}
	client, err := agentserver.NewClient(srv.URL, srv.Key, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range runs {
		r.start(b, client, steps)
	}
	baselines := []*baseline{inProcess(b), directMCP(b, epURL, token, bridgeDir)}

	b.ResetTimer()
	var wireWarm map[string][]time.Duration
	base := map[string]map[string][]time.Duration{} // by baseline, by op
	for k := 0; k <= steps; k++ {
		order := runs
		if k%2 == 1 {
			order = []*toolRun{bridge, builtin}
		}
		for _, r := range order {
			r.step(b, k, steps)
		}
		if k == warm-1 {
			wireWarm, _ = wire.snapshot()
		}
		if k >= warm && k < steps {
			for _, bl := range baselines {
				if base[bl.name] == nil {
					base[bl.name] = map[string][]time.Duration{}
				}
				op := benchOp(k, bl.file)
				for range 3 {
					base[bl.name][op.key] = append(base[bl.name][op.key], bl.run(b, op))
				}
			}
		}
	}
	b.StopTimer()

	for _, r := range runs {
		r.awaitFinished(b, client)
		r.calls = orderedCalls(b, serverEvents(b, srv, r.id), steps)
	}
	wireCalls, methods := wire.snapshot()
	for op, d := range wireCalls {
		wireCalls[op] = d[len(wireWarm[op]):]
	}

	// Each step after the warm-up, by tool, and its three parts: the
	// model's answer to the server's ActionEvent (the LLM call's end, the
	// action made), the ActionEvent to the ObservationEvent (the tool), the
	// ObservationEvent to the next request (the event handled and stored,
	// the next LLM request built).
	kind := func(k int) string { return strings.Fields(benchOp(k, "").key)[0] } // terminal, file_editor
	type parts struct{ step, pre, leg, post []time.Duration }
	fig := map[*toolRun]map[string]*parts{}
	all := map[*toolRun][]time.Duration{}
	for _, r := range runs {
		fig[r] = map[string]*parts{"terminal": {}, "file_editor": {}}
		for k := warm; k < steps; k++ {
			f, c := fig[r][kind(k)], r.calls[k]
			f.step = append(f.step, r.arrived[k+1].Sub(r.released[k]))
			f.pre = append(f.pre, c.action.Sub(r.released[k]))
			f.leg = append(f.leg, c.observation.Sub(c.action))
			f.post = append(f.post, r.arrived[k+1].Sub(c.observation))
			all[r] = append(all[r], r.arrived[k+1].Sub(r.released[k]))
		}
	}
	mean := func(d []time.Duration) time.Duration {
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		return sum / time.Duration(len(d))
	}
	med := func(d []time.Duration) time.Duration { return percentile(d, 0.5) }
	b.ReportMetric(msOf(mean(all[builtin])), "builtin-step-mean-ms")
	b.ReportMetric(msOf(mean(all[bridge])), "bridge-step-mean-ms")
	b.ReportMetric(float64(mean(all[bridge]))/float64(mean(all[builtin])), "step-ratio")
	table := "p50 ms        step = answer→action + action→observation + observation→request"
	for _, tool := range []string{"terminal", "file_editor"} {
		fb, fr := fig[builtin][tool], fig[bridge][tool]
		b.ReportMetric(msOf(med(fb.step)), "builtin-"+tool+"-step-p50-ms")
		b.ReportMetric(msOf(med(fr.step)), "bridge-"+tool+"-step-p50-ms")
		b.ReportMetric(float64(med(fr.step))/float64(med(fb.step)), tool+"-step-ratio")
		b.ReportMetric(msOf(med(fb.leg)), "builtin-"+tool+"-leg-p50-ms")
		b.ReportMetric(msOf(med(fr.leg)), "bridge-"+tool+"-leg-p50-ms")
		for _, r := range runs {
			f := fig[r][tool]
			table += fmt.Sprintf("\n%-8s %-11s %6.1f   %6.1f   %6.1f   %6.1f", r.name, tool,
				msOf(med(f.step)), msOf(med(f.pre)), msOf(med(f.leg)), msOf(med(f.post)))
		}
	}
	b.Log(table)
	var added []time.Duration
	for _, op := range []string{"terminal", "file_editor view", "file_editor str_replace"} {
		w, l := wireCalls[op], base["in-process"][op]
		if want := (steps - warm) / 4 * map[bool]int{true: 2, false: 1}[op == "terminal"]; len(w) != want {
			b.Fatalf("the proxy timed %d %s calls, want %d; it counted %s", len(w), op, want, describeCounts(methods))
		}
		name := strings.ReplaceAll(op, "file_editor ", "")
		b.ReportMetric(msOf(med(w)), "wire-"+name+"-p50-ms")
		b.ReportMetric(msOf(med(base["direct"][op])), "direct-"+name+"-p50-ms")
		b.ReportMetric(msOf(med(l)), "inproc-"+name+"-p50-ms")
		for _, d := range w {
			added = append(added, d-med(l))
		}
	}
	b.ReportMetric(msOf(med(added)), "bridge-added-p50-ms")
	b.ReportMetric(msOf(percentile(added, 0.9)), "bridge-added-p90-ms")
	calls := 0
	for _, d := range wireCalls {
		calls += len(d)
	}
	b.Logf("steps %d (after %d to warm up); the agent-server's MCP client sent, over %d timed calls: %s", steps-warm, warm, calls, describeCounts(methods))
}

// toolRun is one of the two conversations.
type toolRun struct {
	name  string
	dir   string
	tools []string       // what the model must be offered
	agent map[string]any // the agent spec, without its llm

	model             *scriptedllm.Server
	id                string
	release           []chan struct{}
	arrived, released []time.Time
	calls             []serverCall
}

// benchStep is one op of the cycle.
type benchStep struct {
	key  string // "terminal", "file_editor view", "file_editor str_replace"
	tool string
	args map[string]any
	want []string // in the observation's text
}

// benchOp is step k's op on file.
func benchOp(k int, file string) benchStep {
	switch k % 4 {
	case 1:
		return benchStep{"file_editor view", "file_editor", map[string]any{"command": "view", "path": file, "summary": "look"}, []string{"MARKER_"}}
	case 3:
		from, to := "MARKER_A", "MARKER_B"
		if (k/4)%2 == 1 {
			from, to = to, from
		}
		return benchStep{"file_editor str_replace", "file_editor", map[string]any{"command": "str_replace", "path": file,
			"old_str": from, "new_str": to, "summary": "swap"}, []string{"has been edited", to}}
	default:
		return benchStep{"terminal", "terminal", map[string]any{"command": "echo hi", "summary": "say hi"}, []string{"hi\n", "exit code 0"}}
	}
}

const smallFile = "alpha\nMARKER_A\nomega\n"

// realDir is a fresh directory by its real path, with the small file.
func realDir(b *testing.B) string {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return dir
}

// start writes the run's file, scripts its model (each answer held until
// step lets it go, each request checked for the previous call's result)
// and starts its conversation.
func (r *toolRun) start(b *testing.B, client *agentserver.Client, steps int) {
	file := filepath.Join(r.dir, "small.txt")
	if err := os.WriteFile(file, []byte(smallFile), 0o644); err != nil {
		b.Fatal(err)
	}
	r.arrived = make([]time.Time, steps+1)
	r.released = make([]time.Time, steps+1)
	var turns []scriptedllm.Turn
	for k := 0; k <= steps; k++ {
		release := make(chan struct{})
		r.release = append(r.release, release)
		turn := scriptedllm.Turn{Hold: release, Check: func(req *scriptedllm.Request) error {
			r.arrived[k] = time.Now()
			if k == 0 {
				if got, want := req.ToolNames(), slices.Sorted(slices.Values(r.tools)); !slices.Equal(got, want) {
					return fmt.Errorf("%s: the tools offered are %q, want %q", r.name, got, want)
				}
				return nil
			}
			prev := benchOp(k-1, file)
			text, ok := req.ToolResult(fmt.Sprint("call_", k-1))
			if !ok {
				return fmt.Errorf("%s: no result for step %d (%s)", r.name, k-1, prev.key)
			}
			for _, w := range prev.want {
				if !strings.Contains(text, w) {
					return fmt.Errorf("%s: step %d (%s) answered %q, without %q", r.name, k-1, prev.key, text, w)
				}
			}
			return nil
		}}
		if k < steps {
			op := benchOp(k, file)
			turn.ToolCalls = []scriptedllm.ToolCall{{ID: fmt.Sprint("call_", k), Name: op.tool, Arguments: op.args}}
		} else {
			turn.ToolCalls = []scriptedllm.ToolCall{scriptedllm.Call("finish", map[string]any{"message": "done"})}
		}
		turns = append(turns, turn)
	}
	r.model = scriptedllm.Start(b, turns...)
	agent := map[string]any{"llm": scriptedLLM(r.model)}
	for k, v := range r.agent {
		agent[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conv, err := client.StartConversation(ctx, map[string]any{
		"agent":     agent,
		"workspace": map[string]any{"kind": "LocalWorkspace", "working_dir": r.dir},
		"autotitle": false,
		"initial_message": map[string]any{"role": "user", "run": true,
			"content": []map[string]any{{"type": "text", "text": "Run the benchmark's steps."}}},
	})
	if err != nil {
		b.Fatalf("%s: %v", r.name, err)
	}
	r.id = conv.ID
}

// step lets the model's answer k go and waits for the agent's next
// request (or, after the last answer, for the script's end).
func (r *toolRun) step(b *testing.B, k, steps int) {
	r.await(b, r.model.Reached(k), fmt.Sprintf("request %d", k))
	r.released[k] = time.Now()
	close(r.release[k])
	if k < steps {
		r.await(b, r.model.Reached(k+1), fmt.Sprintf("request %d", k+1))
	} else {
		r.await(b, r.model.Done(), "the script's end")
	}
}

func (r *toolRun) await(b *testing.B, ch <-chan struct{}, what string) {
	select {
	case <-ch:
	case <-r.model.Broken():
		b.Fatalf("%s: the scripted model failed the run", r.name)
	case <-time.After(2 * time.Minute):
		b.Fatalf("%s: no %s from the agent in 2 minutes", r.name, what)
	}
}

// awaitFinished waits for the conversation's "finished" state, after its
// finish call: its events are all stored then.
func (r *toolRun) awaitFinished(b *testing.B, client *agentserver.Client) {
	// The server's state, which sends no event for this here: poll.
	ohtest.Poll(b, time.Minute, r.name+": the conversation to finish after its finish call", func() (string, bool) {
		info, err := client.Conversation(context.Background(), r.id)
		if err != nil {
			b.Fatal(err)
		}
		return info.ExecutionStatus, info.ExecutionStatus == "finished"
	})
}

// serverCall is a tool call as the server's events time it.
type serverCall struct{ action, observation time.Time }

// orderedCalls are the steps' tool calls in order (the finish call left
// out), by their ActionEvent's and ObservationEvent's timestamps.
func orderedCalls(b *testing.B, events []serverEvent, steps int) []serverCall {
	actions := map[string]time.Time{}
	var calls []serverCall
	for _, e := range events {
		t, ok := e.stamp()
		if !ok || e.ToolName == "finish" {
			continue
		}
		switch e.Kind {
		case "ActionEvent":
			actions[e.ID] = t
		case "ObservationEvent":
			if a, ok := actions[e.ActionID]; ok {
				calls = append(calls, serverCall{a, t})
			}
		}
	}
	if len(calls) != steps {
		b.Fatalf("the server's events have %d tool calls with their observations, want %d", len(calls), steps)
	}
	return calls
}

// baseline runs the steps' ops outside the agent-server, on a file of
// its own: a str_replace swaps whichever marker the file holds.
type baseline struct {
	name   string
	file   string
	marker string
	call   func(tool string, args []byte) (text string, isError bool, err error)
}

func newBaseline(b *testing.B, name, dir string, call func(string, []byte) (string, bool, error)) *baseline {
	file := filepath.Join(dir, name+".txt")
	if err := os.WriteFile(file, []byte(smallFile), 0o644); err != nil {
		b.Fatal(err)
	}
	bl := &baseline{name: name, file: file, marker: "MARKER_A", call: call}
	for k := range 4 { // the shell started, the file read once
		bl.run(b, benchOp(k, file))
	}
	return bl
}

// inProcess runs the ops on a session.Agent in this process: the tools,
// the session and the engine the binary runs, without MCP, HTTP or a
// process boundary.
func inProcess(b *testing.B) *baseline {
	dir := realDir(b)
	sess, err := session.New(session.Options{Roots: session.Candidates("test", dir)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sess.Close(context.Background()) })
	a, err := sess.NewAgent(session.AgentOptions{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	return newBaseline(b, "in-process", dir, func(tool string, args []byte) (string, bool, error) {
		obs, err := a.Call(context.Background(), tool, args, nil)
		if err != nil {
			return "", false, err
		}
		return obs.Text(), obs.IsError, nil
	})
}

// directMCP runs the ops as tools/call on the bridge's endpoint, in an MCP
// session of its own, with no proxy and no client library (as rawHTTP).
func directMCP(b *testing.B, url, token, dir string) *baseline {
	post, err := rawSession(url, token, "bench-direct")
	if err != nil {
		b.Fatal(err)
	}
	return newBaseline(b, "direct", dir, func(tool string, args []byte) (string, bool, error) {
		answer, err := post(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + string(args) + `}}`)
		if err != nil {
			return "", false, err
		}
		_, data, _ := strings.Cut(answer, "data: ")
		var res struct {
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(data), &res); err != nil {
			return "", false, fmt.Errorf("the answer %q: %v", answer, err)
		}
		var texts []string
		for _, c := range res.Result.Content {
			texts = append(texts, c.Text)
		}
		return strings.Join(texts, "\n"), res.Result.IsError, nil
	})
}

// run times one op.
func (bl *baseline) run(b *testing.B, op benchStep) time.Duration {
	if op.key == "file_editor str_replace" {
		to := map[string]string{"MARKER_A": "MARKER_B", "MARKER_B": "MARKER_A"}[bl.marker]
		op.args = map[string]any{"command": "str_replace", "path": bl.file, "old_str": bl.marker, "new_str": to}
		op.want = []string{"has been edited", to}
		bl.marker = to
	} else if op.key == "file_editor view" {
		op.args = map[string]any{"command": "view", "path": bl.file}
	}
	args, _ := json.Marshal(op.args)
	t := time.Now()
	text, isError, err := bl.call(op.tool, args)
	d := time.Since(t)
	if err != nil {
		b.Fatalf("%s: %s: %v", bl.name, op.key, err)
	}
	for _, w := range op.want {
		if isError || !strings.Contains(text, w) {
			b.Fatalf("%s: %s answered %q, without %q", bl.name, op.key, text, w)
		}
	}
	return d
}
