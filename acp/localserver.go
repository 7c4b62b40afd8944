package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/localserver"
	"github.com/oh-bridge/oh-bridge/session"
	"github.com/oh-bridge/oh-bridge/updates"
)

// Local is how the agent finds an agent-server, or starts one, when none
// is configured: the search VS Code's bridge makes (localserver.Find),
// then, on a prompt, the person is asked through the client's permission
// question to start one.
type Local struct {
	// Find is localserver.Find's options (the config file's server, and
	// the Trust that checks what is found).
	Find localserver.Options
	// Log receives a started server's output (the ACP log).
	Log io.Writer
	// Ways lists how a server can be started here (localserver.Ways with
	// the real PATH when nil).
	Ways func() []localserver.Way
	// StateDir is a started server's state (localserver.StateDir when "").
	StateDir string
}

// localState is what this connection found or started (localserver.Local)
// and what the person answered about it.
type localState struct {
	server *localserver.Local // nil without Config.Local

	mu     sync.Mutex // serializes finding
	always bool
	// untrusted is a server found that is not the person's, to ask them
	// about on a prompt; asked, once they were.
	untrusted *localserver.UntrustedError
	asked     bool
}

// agentServer is the server a session talks to: the configured one, else
// one found on this machine or started for this connection. find says
// whether to look now (it probes loopback ports: only when the person
// asks for a conversation, not when a client lists sessions at startup).
func (a *Agent) agentServer(ctx context.Context, find bool) (AgentServer, bool) {
	if a.cfg.Server.URL != "" {
		return a.cfg.Server, true
	}
	if a.cfg.Local == nil {
		return AgentServer{}, false
	}
	l := &a.local
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.server.Current(); f != nil {
		return a.withServer(f), true
	}
	if !find {
		return AgentServer{}, false
	}
	f, tried, err := l.server.Search(ctx)
	for _, t := range tried {
		a.log.Info("passed over an agent-server", "where", t.Source, "url", t.URL, "why", t.Why)
		if u := t.OtherUsers(); u != nil && l.untrusted == nil {
			l.untrusted = u
		}
	}
	if err != nil {
		return AgentServer{}, false
	}
	a.log.Info("found an agent-server", "which", f.Describe())
	return a.withServer(f), true
}

// withServer is the configured agent settings, on the server f.
func (a *Agent) withServer(f *localserver.Found) AgentServer {
	srv := a.cfg.Server
	srv.URL, srv.SessionAPIKey = f.URL, f.SessionAPIKey
	return srv
}

// errNotStarted: the person declined to start a server, or none can be.
type errNotStarted struct{ why string }

func (e *errNotStarted) Error() string { return e.why }

// offerToStart asks the person, through the client's permission question
// on a tool call of its own, to start an agent-server the best way there
// is, and starts it once they agree (or always agreed). The call's card
// says how it went.
func (a *Agent) offerToStart(ctx context.Context, s *acpSession) (AgentServer, error) {
	ways := localserver.WaysHere(s.sess.Roots())
	if a.cfg.Local.Ways != nil {
		ways = a.cfg.Local.Ways()
	}
	if len(ways) == 0 {
		return AgentServer{}, &errNotStarted{why: "no OpenHands agent-server was found on this machine, and none can be started here: " +
			"install it (`uv tool install openhands-agent-server` puts `agent-server` on PATH), or install uv or Docker for the bridge to start it."}
	}
	way := ways[0]
	command := strings.Join(way.Command(0), " ")
	command = strings.TrimSuffix(command, " 0") + " <a free port>"
	id := "start-agent-server-" + randomID()
	title := "Start " + way.Describe() + ": `" + command + "`"
	input, _ := json.Marshal(map[string]string{"command": command})
	s.update(&updates.ToolCall{SessionUpdate: "tool_call", ToolCallID: id, Title: title, Kind: "execute", Status: "pending", RawInput: input})
	finish := func(status, text string) {
		s.update(&updates.ToolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: status,
			Content: []updates.ToolCallContent{{Type: "content", Content: &updates.ContentBlock{Type: "text", Text: text}}}})
	}
	if !a.alwaysStart() {
		choice, err := s.asker().Choose(ctx, session.PermissionRequest{Title: title, Kind: "execute", RawInput: input}, id)
		if err != nil {
			finish("failed", "The question could not be asked: "+err.Error())
			return AgentServer{}, err
		}
		switch choice {
		case facekit.Always:
			a.rememberAlwaysStart()
		case facekit.Once:
		default:
			finish("failed", "Not started: you declined.")
			return AgentServer{}, &errNotStarted{why: "no OpenHands agent-server is running on this machine, and you chose not to start one."}
		}
	}
	s.update(&updates.ToolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: "in_progress"})
	log := a.cfg.Local.Log
	if log == nil {
		log = io.Discard
	}
	started, fresh, err := a.local.server.Start(ctx, way, localserver.StartOptions{Log: log, StateDir: a.cfg.Local.StateDir, Trust: a.cfg.Trust})
	if err != nil {
		finish("failed", err.Error())
		return AgentServer{}, err
	}
	srv := a.withServer(&started.Found)
	if !fresh {
		// Another session started one meanwhile: it is used.
		finish("completed", "Using the agent-server started for another session.")
		return srv, nil
	}
	a.log.Info("started an agent-server", "which", started.Describe(), "pid", started.PID())
	finish("completed", "Started "+started.Describe()+". It stops when this agent does.")
	return srv, nil
}

func (a *Agent) choices() *localserver.Choices {
	if a.cfg.Trust == nil {
		return nil
	}
	return a.cfg.Trust.Choices
}

func (a *Agent) alwaysStart() bool {
	a.local.mu.Lock()
	always := a.local.always
	a.local.mu.Unlock()
	if always {
		return true
	}
	always, err := a.choices().AlwaysStart()
	if err != nil {
		a.log.Warn("the choices file is not used", "error", err)
	}
	return always
}

func (a *Agent) rememberAlwaysStart() {
	a.local.mu.Lock()
	a.local.always = true
	a.local.mu.Unlock()
	if err := a.choices().SetAlwaysStart(); err != nil {
		a.log.Warn("could not keep the choice to always start a server", "error", err)
	}
}

// offerToTrust asks the person, on a tool call of its own, whether to use
// a server found on this machine that another user runs (u): who runs
// it, its process and program. It is asked once a connection. ok is
// false when they declined, or it is gone; the prompt then goes on to
// start one of theirs.
func (a *Agent) offerToTrust(ctx context.Context, s *acpSession, u *localserver.UntrustedError) (AgentServer, bool, error) {
	a.local.mu.Lock()
	asked := a.local.asked
	a.local.asked = true
	a.local.mu.Unlock()
	if asked || a.cfg.Trust == nil {
		return AgentServer{}, false, nil
	}
	id := "trust-agent-server-" + randomID()
	title := fmt.Sprintf("Use the agent-server on %s? It is run by %s, not by you", strings.TrimPrefix(u.URL, "http://"), u.Owner.Describe())
	input, _ := json.Marshal(map[string]any{"serverUrl": u.URL, "owner": localserver.OwnerData(u.Owner)})
	s.update(&updates.ToolCall{SessionUpdate: "tool_call", ToolCallID: id, Title: title, Kind: "other", Status: "pending", RawInput: input,
		Content: []updates.ToolCallContent{{Type: "content", Content: &updates.ContentBlock{Type: "text", Text: "Your keys, and the tools of this workspace (its terminal and files), go to the server you use. " +
			"Allow it only if you know this user's server is meant for you."}}}})
	finish := func(status, text string) {
		s.update(&updates.ToolCall{SessionUpdate: "tool_call_update", ToolCallID: id, Status: status,
			Content: []updates.ToolCallContent{{Type: "content", Content: &updates.ContentBlock{Type: "text", Text: text}}}})
	}
	choice, err := s.asker().Choose(ctx, session.PermissionRequest{Title: title, Kind: "other", RawInput: input}, id)
	if err != nil {
		finish("failed", "The question could not be asked: "+err.Error())
		return AgentServer{}, false, err
	}
	switch choice {
	case facekit.Always:
		err = a.cfg.Trust.Confirm(u.URL, u.Owner.UID)
	case facekit.Once:
		err = a.cfg.Trust.ConfirmOnce(u.URL, u.Owner.UID)
	default:
		finish("failed", "Not used: you declined. Nothing was sent to it.")
		return AgentServer{}, false, nil
	}
	if err != nil {
		finish("failed", "Not used: "+err.Error())
		return AgentServer{}, false, nil
	}
	srv, ok := a.agentServer(ctx, true)
	if !ok {
		finish("failed", "It did not answer as an agent-server once confirmed.")
		return AgentServer{}, false, nil
	}
	finish("completed", "Using the agent-server at "+srv.URL+".")
	return srv, true, nil
}

// stopLocal stops the server started for this connection.
func (a *Agent) stopLocal() {
	if a.local.server == nil {
		return
	}
	if s := a.local.server.Stop(); s != nil {
		a.log.Info("stopped the agent-server it started", "pid", s.PID())
	}
}

// noServerText answers a prompt that found no server to go to.
func (a *Agent) noServerText(err error) string {
	var ns *errNotStarted
	if errors.As(err, &ns) {
		return ns.why + "\n\n" + a.cfg.HowToConfigure
	}
	return fmt.Sprintf("The agent-server could not be started: %v\n\n%s", err, a.cfg.HowToConfigure)
}

// connectLate gives a session opened with no server its conversation, on
// its first prompt: a server found now, else one the person agrees to
// start. The session keeps its id.
func (a *Agent) connectLate(ctx context.Context, s *acpSession) error {
	srv, ok := a.agentServer(ctx, true)
	if !ok {
		if a.cfg.Local == nil {
			return &errNotStarted{why: "no OpenHands agent-server is configured."}
		}
		a.local.mu.Lock()
		u := a.local.untrusted
		a.local.mu.Unlock()
		var err error
		if u != nil {
			if srv, ok, err = a.offerToTrust(ctx, s, u); err != nil {
				return err
			}
		}
		if !ok {
			if srv, err = a.offerToStart(ctx, s); err != nil {
				return err
			}
		}
	}
	conv, err := a.follow(ctx, s, srv, "", followOptions{})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.conv = conv
	s.mu.Unlock()
	a.log.Info("the session follows a conversation", "session", s.sessionID(), "conversation", conv.ConversationID())
	return nil
}
