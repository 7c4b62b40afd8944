package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/oh-bridge/oh-bridge/rpc"
)

// acpCommand names `oh-bridge acp` in a recording's header; replay runs it.
const acpCommand = "oh-bridge acp"

// askServer are the ACP methods answered by the agent-server when one is
// configured (without one, the bridge answers them alone).
var askServer = map[string]bool{"session/new": true, "session/load": true, "session/resume": true, "session/list": true}

// acpRecordingMeta is what replaying an ACP recording needs to know
// beyond the messages.
type acpRecordingMeta struct {
	// Config is the --config path: the answer to a prompt without a
	// server names it, so replay maps it to $CONFIG on both sides.
	Config string `json:"config"`
	// AgentServer says a server was configured. Whether, not which: the
	// URL may carry credentials.
	AgentServer bool `json:"agentServer"`
	// FindServer says the bridge would look for a server on this machine
	// (none was configured): what it found, or offered to start, depends
	// on the machine.
	FindServer bool `json:"findServer,omitempty"`
}

// findsServer are the ACP methods that make a bridge with no server look
// for one (and a prompt offer to start one).
var findsServer = map[string]bool{"session/new": true, "session/load": true, "session/resume": true, "session/prompt": true}

// openACPRecorder is the recorder for the ACP connection: the --record
// file, the debug log of every message, both, or neither (nil).
func openACPRecorder(path string, logger *slog.Logger, meta acpRecordingMeta) (*rpc.Recorder, error) {
	var sink io.Writer
	if path != "" {
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("cannot create the recording file: %w; give --record a writable path", err)
		}
		sink = f
	}
	if logger.Enabled(context.Background(), slog.LevelDebug) {
		sink = newWireLog(logger, sink)
	}
	if sink == nil {
		return nil, nil
	}
	rec := rpc.NewRecorder(sink)
	if path != "" {
		m, _ := json.Marshal(meta)
		if err := rec.WriteHeader(rpc.Header{Framing: rpc.FramingLines, Command: acpCommand, Version: version, Meta: m}); err != nil {
			rec.Close()
			return nil, fmt.Errorf("cannot write the recording file %s: %w", path, err)
		}
	}
	return rec, nil
}

// acpReplay is how `oh-bridge replay` runs an ACP recording. The fresh
// agent has no agent-server: a conversation (the model's turns, the
// server's conversation ids, when command output arrives) cannot be
// reproduced, so a recording in which the client asked a server anything
// (askServer) is refused. Everything else is the bridge's own and
// replays: initialize, authenticate, sessions and prompts without a
// server (the how-to-configure answer), session/load, resume, list and
// close without one, and every error.
type acpReplay struct {
	args   []string
	env    []string
	cfgDir string // holds the (absent) config file the agent is given
	// recordedSession maps the id of a recorded response to the session
	// id it carried: the live response to the same request id gives the
	// replay's own.
	recordedSession map[string]string
	configPath      string // recorded
}

func newACPReplay(h *rpc.Header, records []rpc.Record) (*acpReplay, error) {
	var meta acpRecordingMeta
	if len(h.Meta) > 0 {
		if err := json.Unmarshal(h.Meta, &meta); err != nil {
			return nil, fmt.Errorf("the recording's header has meta %s, not {\"config\", \"agentServer\"}: %v", h.Meta, err)
		}
	}
	if m := firstAsked(records, askServer); meta.AgentServer && m != "" {
		return nil, fmt.Errorf("the client asked the OpenHands agent-server (%s); what a server answers (its conversations, the model's turns, their ids and timing) cannot be replayed. "+
			"Record with no server configured (oh-bridge acp --config \"\" and no OH_BRIDGE_SERVER_URL) for a session replay can check", m)
	}
	if m := firstAsked(records, findsServer); meta.FindServer && m != "" {
		return nil, fmt.Errorf("the bridge looked for an OpenHands agent-server on the recording machine (%s, with none configured); what it found there cannot be replayed. "+
			"Record with oh-bridge acp --find-server=false for a session replay can check", m)
	}
	a := &acpReplay{configPath: meta.Config, recordedSession: map[string]string{}}
	for _, r := range records {
		if id, sid := sessionIDOf(r.Msg); r.Dir == "out" && sid != "" {
			a.recordedSession[id] = sid
		}
	}
	config := ""
	if meta.Config != "" {
		dir, err := os.MkdirTemp("", "oh-bridge-replay-config-")
		if err != nil {
			return nil, err
		}
		a.cfgDir, config = dir, filepath.Join(dir, "config.json")
	}
	// The log comes on stderr, where replay shows it after a difference.
	a.args = []string{"acp", "--config", config, "--find-server=false", "--log-file", "-", "--log-level", "debug"}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "OH_BRIDGE_SERVER_URL", "OH_BRIDGE_SESSION_API_KEY", "OH_BRIDGE_CONFIRMATION_POLICY", "LLM_MODEL", "LLM_API_KEY", "LLM_BASE_URL":
			continue
		}
		a.env = append(a.env, kv)
	}
	return a, nil
}

// firstAsked is the first method of methods the client sent in records,
// or "".
func firstAsked(records []rpc.Record, methods map[string]bool) string {
	for _, r := range records {
		var m struct {
			Method string `json:"method"`
		}
		if r.Dir == "in" && json.Unmarshal(r.Msg, &m) == nil && methods[m.Method] {
			return m.Method
		}
	}
	return ""
}

// sessionIDOf is a response's id and the sessionId its result carries.
func sessionIDOf(msg json.RawMessage) (id, sessionID string) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if msg == nil || json.Unmarshal(msg, &m) != nil || m.Method != "" {
		return "", ""
	}
	return string(m.ID), m.Result.SessionID
}

// configure adds the ACP rules to a replay: session ids are the bridge's
// choice each run, so they are not compared, and client messages get the
// live ones; the config path reads $CONFIG on both sides.
func (a *acpReplay) configure(opts *rpc.ReplayOptions, subs *substitutions) {
	for _, n := range []*rpc.Normalizer{opts.Expected, opts.Actual} {
		n.Keys = maps.Clone(n.Keys)
		n.Keys["sessionId"] = "$SESSION_ID"
	}
	if a.configPath != "" {
		live := filepath.Join(a.cfgDir, "config.json")
		opts.Expected.Paths[a.configPath] = "$CONFIG"
		opts.Actual.Paths[live] = "$CONFIG"
		subs.add(a.configPath, live)
	}
	opts.Observe = func(msg json.RawMessage) {
		id, live := sessionIDOf(msg)
		if recorded := a.recordedSession[id]; recorded != "" && live != "" && recorded != live {
			subs.add(`"`+recorded+`"`, `"`+live+`"`)
		}
	}
}

func (a *acpReplay) close() {
	if a.cfgDir != "" {
		os.RemoveAll(a.cfgDir)
	}
}

// substitutions are recorded values and what the replay has instead (the
// workspace path, session ids): client messages get the live value, and
// --update puts the recorded one back.
type substitutions struct {
	mu    sync.Mutex
	pairs [][2]string // recorded, live
}

func (s *substitutions) add(recorded, live string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pairs = append(s.pairs, [2]string{recorded, live})
}

// toLive rewrites a recorded client message for the live bridge.
func (s *substitutions) toLive(msg json.RawMessage) json.RawMessage {
	return s.replace(msg, 0, 1)
}

// toRecorded rewrites a live message as the recording had it.
func (s *substitutions) toRecorded(msg json.RawMessage) json.RawMessage {
	return s.replace(msg, 1, 0)
}

func (s *substitutions) replace(msg json.RawMessage, from, to int) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := string(msg)
	for _, p := range s.pairs {
		out = strings.ReplaceAll(out, p[from], p[to])
	}
	return json.RawMessage(out)
}
