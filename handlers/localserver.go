package handlers

import (
	"context"
	"strings"

	"github.com/oh-bridge/oh-bridge/internal/sockowner"
	"github.com/oh-bridge/oh-bridge/localserver"
	"github.com/oh-bridge/oh-bridge/rpc"
)

// FoundServer says what openhands/find_server found.
type FoundServer struct {
	ServerURL     string `json:"serverUrl"`
	ServerVersion string `json:"serverVersion"`
	// Source is where it was found: "environment", "config file",
	// "Agent Canvas", "default port" or "started".
	Source string `json:"source"`
	// KeySource names where its key came from ("" when it needs none).
	KeySource string `json:"keySource"`
	// Description says all of it in words, for the person.
	Description string `json:"description"`
}

// TriedServer is a place looked at and passed over, and why.
type TriedServer struct {
	Source    string `json:"source"`
	ServerURL string `json:"serverUrl"`
	Why       string `json:"why"`
}

// StartWay is a way of starting an agent-server here.
type StartWay struct {
	// Kind is "installed", "uvx" or "docker".
	Kind string `json:"kind"`
	// Command is what will run, as the person is shown it.
	Command     string `json:"command"`
	Description string `json:"description"`
}

// UntrustedServer is a server found on this machine that another user
// runs: nothing was sent to it. The person may confirm it
// (openhands/trust_server) after seeing who runs it.
type UntrustedServer struct {
	ServerURL string `json:"serverUrl"`
	Source    string `json:"source"`
	Owner     Owner  `json:"owner"`
	// Description says it all in words: who runs it, why it is not used,
	// how to trust it.
	Description string `json:"description"`
}

// Owner is who runs a server on this machine.
type Owner struct {
	UID  int    `json:"uid"`
	User string `json:"user"`
	// PID, Program and Command are set when the process can be seen.
	PID     int    `json:"pid,omitempty"`
	Program string `json:"program,omitempty"`
	Command string `json:"command,omitempty"`
	// Description names it in words ("user nobody (uid 65534), process
	// 4242 (python3 -m …)").
	Description string `json:"description"`
}

type findServerResult struct {
	// Found is the server to use, when one answered.
	Found *FoundServer  `json:"found,omitempty"`
	Tried []TriedServer `json:"tried"`
	// Untrusted are servers found that other users run, which were asked
	// nothing: each may be confirmed with openhands/trust_server.
	Untrusted []UntrustedServer `json:"untrusted"`
	// Ways are how one can be started here, best first, when none was
	// found; none means the person must install it.
	Ways []StartWay `json:"ways"`
	// Install says in words what to install when there is no way.
	Install string `json:"install,omitempty"`
}

// installHint is what a person with no way to start an agent-server does.
const installHint = "Install OpenHands' agent-server: `uv tool install openhands-agent-server` (then `agent-server` is on PATH), " +
	"or `pip install openhands-agent-server`, or install uv (https://docs.astral.sh/uv/) or Docker and the bridge starts it for you."

// findServer looks for the agent-server the person runs here
// (localserver.Find), for a conversation asked for with no server
// configured. It probes loopback ports: the editor calls it only when the
// person starts a conversation.
func (h *Handlers) findServer(ctx context.Context, _ *noParams) (*findServerResult, error) {
	if s := h.local.Running(); s != nil {
		return &findServerResult{Found: foundOf(&s.Found), Tried: []TriedServer{}, Untrusted: []UntrustedServer{}, Ways: []StartWay{}}, nil
	}
	found, tried, err := h.local.Search(ctx)
	out := &findServerResult{Tried: make([]TriedServer, 0, len(tried)+1), Untrusted: []UntrustedServer{}, Ways: []StartWay{}}
	if err := h.cfg.ConfigError; err != nil {
		out.Tried = append(out.Tried, TriedServer{Source: string(localserver.FromConfig), Why: err.Error()})
	}
	for _, t := range tried {
		out.Tried = append(out.Tried, TriedServer{Source: string(t.Source), ServerURL: t.URL, Why: t.Why})
		if u := t.OtherUsers(); u != nil {
			out.Untrusted = append(out.Untrusted, UntrustedServer{ServerURL: u.URL, Source: string(t.Source), Owner: ownerOf(u.Owner), Description: u.Error()})
		}
	}
	if err == nil {
		out.Found = foundOf(found)
		h.log.Info("found an agent-server", "url", found.URL, "source", found.Source, "key", found.KeySource, "version", found.Version)
		return out, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	for _, w := range h.ways() {
		out.Ways = append(out.Ways, StartWay{Kind: w.Kind, Command: strings.Join(w.Command(0), " "), Description: w.Describe()})
	}
	if len(out.Ways) == 0 {
		out.Install = installHint
	}
	return out, nil
}

// ways are how a server can be started here: programs found on PATH,
// never in the workspace.
func (h *Handlers) ways() []localserver.Way {
	return localserver.WaysHere(h.Roots())
}

func ownerOf(o sockowner.Owner) Owner {
	o = o.Resolve()
	return Owner{UID: o.UID, User: o.UserName(), PID: o.PID, Program: o.Program, Command: o.Command, Description: o.Describe()}
}

type trustServerParams struct {
	// ServerURL is an untrusted server openhands/find_server named.
	ServerURL string `json:"serverUrl"`
	// UID is the owner the person was shown: if another user holds the
	// port now, nothing is confirmed.
	UID int `json:"uid"`
	// Always keeps the confirmation in the bridge's choices file;
	// otherwise it lasts as long as this connection.
	Always bool `json:"always"`
}

// trustServer confirms, for the person, a server on this machine that
// another user runs, then looks for a server again: the confirmed one is
// found if it answers.
func (h *Handlers) trustServer(ctx context.Context, p *trustServerParams) (*findServerResult, error) {
	if err := checkServerURL(p.ServerURL); err != nil {
		return nil, err
	}
	trust := h.cfg.Trust
	if trust == nil {
		return nil, rpc.NewError(rpc.CodeInvalidRequest, "this bridge keeps no confirmations of other users' servers", nil)
	}
	var err error
	if p.Always {
		err = trust.Confirm(p.ServerURL, p.UID)
	} else {
		err = trust.ConfirmOnce(p.ServerURL, p.UID)
	}
	if err != nil {
		return nil, rpc.InvalidParams("serverUrl", err.Error())
	}
	h.log.Info("the person confirmed another user's agent-server", "url", p.ServerURL, "uid", p.UID, "always", p.Always)
	return h.findServer(ctx, nil)
}

func foundOf(f *localserver.Found) *FoundServer {
	return &FoundServer{ServerURL: f.URL, ServerVersion: f.Version, Source: string(f.Source), KeySource: f.KeySource, Description: f.Describe()}
}

type startServerParams struct {
	// Kind is the way to start it, one of openhands/find_server's ways.
	Kind string `json:"kind"`
}

// startServer starts an agent-server the way the person chose, on
// 127.0.0.1 with a fresh key, its output going to the editor as
// openhands/server_output; it stops with the connection.
func (h *Handlers) startServer(ctx context.Context, p *startServerParams) (*FoundServer, error) {
	if s := h.local.Running(); s != nil {
		return foundOf(&s.Found), nil
	}
	var way *localserver.Way
	for _, w := range h.ways() {
		if w.Kind == p.Kind {
			way = &w
			break
		}
	}
	if way == nil {
		return nil, rpc.InvalidParams("kind", "a way openhands/find_server offered (installed, uvx or docker) that is there: "+installHint)
	}
	h.log.Info("starting an agent-server", "how", way.Describe(), "command", strings.Join(way.Command(0), " "))
	s, fresh, err := h.local.Start(ctx, *way, localserver.StartOptions{Log: serverOutput{h}})
	if err != nil {
		return nil, err
	}
	if !fresh {
		return foundOf(&s.Found), nil
	}
	h.log.Info("started an agent-server", "url", s.URL, "version", s.Version, "pid", s.PID())
	return foundOf(&s.Found), nil
}

// serverOutput sends the started server's output to the editor.
type serverOutput struct{ h *Handlers }

func (o serverOutput) Write(p []byte) (int, error) {
	o.h.notify(context.Background(), "openhands/server_output", &serverOutputParams{Data: string(p)})
	return len(p), nil
}

// serverOutputParams is a piece of the output of the agent-server the
// bridge started.
type serverOutputParams struct {
	Data string `json:"data"`
}

// stopLocal stops the server the bridge started.
func (h *Handlers) stopLocal() {
	if s := h.local.Stop(); s != nil {
		h.log.Info("stopped the agent-server it started", "url", s.URL, "pid", s.PID())
	}
}
