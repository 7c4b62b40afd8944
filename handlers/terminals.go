package handlers

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/oh-bridge/oh-bridge/rpc"
	"github.com/oh-bridge/oh-bridge/session"
)

const maxWait = 600_000

// termStreams is this connection's view of the session's terminals: the
// streaming of their raw output to the client.
type termStreams struct {
	// stopping silences notifications once shutdown has begun.
	stopping atomic.Bool

	mu sync.Mutex
	// streams hold each terminal's partial UTF-8 character between
	// did_output notifications (streaming only).
	streams map[string]*outputStream
}

// stopTerminals silences terminal notifications; the session kills the
// terminals themselves.
func (h *Handlers) stopTerminals() {
	h.mu.Lock()
	ts := h.terms
	h.mu.Unlock()
	if ts != nil {
		ts.stopping.Store(true)
	}
}

// terminalCapabilities are merged into initialize's result capabilities.
func (h *Handlers) terminalCapabilities(sc session.Capabilities) map[string]any {
	// The shells the bridge supports, not a probe of this machine, so the
	// answer (and recorded sessions) is the same everywhere; terminal/open
	// answers shell_not_found (1018) for one that is not installed.
	return map[string]any{"terminal": map[string]any{
		"open": true, "run": true, "input": true, "interrupt": true, "pty": true,
		"shells": sc.Shells, "maxTerminals": sc.MaxTerminals, "streaming": true,
	}}
}

// millis converts an optional millisecond parameter.
func millis(field string, v *int64) (time.Duration, error) {
	if v == nil {
		return 0, nil
	}
	if *v < 0 || *v > maxWait {
		return 0, rpc.InvalidParams(field, "an integer between 0 and 600000")
	}
	return time.Duration(*v) * time.Millisecond, nil
}

func requireID(id string) error {
	if id == "" {
		return rpc.InvalidParams("terminalId", "a terminal id from terminal/open, terminal/run or terminal/list")
	}
	return nil
}

// ---- terminal/open ----

type terminalOpenParams struct {
	Cwd   string            `json:"cwd"`
	Shell string            `json:"shell"`
	Env   map[string]string `json:"env"`
	Name  string            `json:"name"`
	Cols  int               `json:"cols"`
	Rows  int               `json:"rows"`
}

type terminalOpenResult struct {
	TerminalID string `json:"terminalId"`
	Name       string `json:"name"`
	Shell      string `json:"shell"`
	PID        int    `json:"pid"`
	Mode       string `json:"mode"`
	Cwd        string `json:"cwd"`
}

func (h *Handlers) terminalOpen(ctx context.Context, p *terminalOpenParams) (*terminalOpenResult, error) {
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	switch p.Shell {
	case "", "auto", "bash", "zsh":
	default:
		return nil, rpc.InvalidParams("shell", `"bash", "zsh" or "auto"`)
	}
	for k := range p.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, rpc.InvalidParams("env", "an object of NAME: value strings (names non-empty, without '=')")
		}
	}
	if p.Cols < 0 || p.Cols > 65535 {
		return nil, rpc.InvalidParams("cols", "an integer between 1 and 65535")
	}
	if p.Rows < 0 || p.Rows > 65535 {
		return nil, rpc.InvalidParams("rows", "an integer between 1 and 65535")
	}
	in, err := s.OpenTerminal(ctx, session.TerminalOpen{Cwd: p.Cwd, Shell: p.Shell, Name: p.Name, Env: p.Env, Cols: p.Cols, Rows: p.Rows})
	if err != nil {
		return nil, err
	}
	return &terminalOpenResult{TerminalID: in.ID, Name: in.Name, Shell: in.Shell, PID: in.PID, Mode: string(in.Mode), Cwd: in.Cwd}, nil
}

// ---- terminal/run, terminal/output and the command result ----

type terminalRunParams struct {
	TerminalID        string `json:"terminalId"`
	Command           string `json:"command"`
	Cwd               string `json:"cwd"`
	TimeoutMs         *int64 `json:"timeoutMs"`
	NoOutputTimeoutMs *int64 `json:"noOutputTimeoutMs"`
}

// terminalResult is one view of a command: the output not returned before
// and its state. exitCode is null while the command runs.
type terminalResult struct {
	TerminalID     string `json:"terminalId"`
	Seq            int    `json:"seq"`
	Command        string `json:"command"`
	Output         string `json:"output"`
	ExitCode       *int   `json:"exitCode"`
	Running        bool   `json:"running"`
	Cwd            string `json:"cwd"`
	Truncated      bool   `json:"truncated"`
	TruncatedBytes int64  `json:"truncatedBytes,omitempty"`
	TotalBytes     int64  `json:"totalBytes"`
	Reason         string `json:"reason,omitempty"`
	Escalation     string `json:"escalation,omitempty"`
	AltScreen      bool   `json:"altScreen,omitempty"`
	Mode           string `json:"mode"`
}

func (h *Handlers) terminalRun(ctx context.Context, p *terminalRunParams) (*terminalResult, error) {
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Command) == "" {
		return nil, rpc.InvalidParams("command", "a non-empty string")
	}
	timeout, err := millis("timeoutMs", p.TimeoutMs)
	if err != nil {
		return nil, err
	}
	noOutput, err := millis("noOutputTimeoutMs", p.NoOutputTimeoutMs)
	if err != nil {
		return nil, err
	}
	// Cancelled while waiting, the command goes on, and the session keeps
	// the output this call took for terminal/output.
	r, err := s.RunCommand(ctx, session.Run{TerminalID: p.TerminalID, Command: p.Command, Cwd: p.Cwd,
		Timeout: timeout, NoOutputTimeout: noOutput})
	if err != nil {
		return nil, err
	}
	return resultOf(r), nil
}

type terminalOutputParams struct {
	TerminalID string `json:"terminalId"`
	Seq        int    `json:"seq"`
	WaitMs     *int64 `json:"waitMs"`
}

func (h *Handlers) terminalOutput(ctx context.Context, p *terminalOutputParams) (*terminalResult, error) {
	s, err := h.terminalSession(p.TerminalID)
	if err != nil {
		return nil, err
	}
	wait, err := millis("waitMs", p.WaitMs)
	if err != nil {
		return nil, err
	}
	if p.Seq < 0 {
		return nil, rpc.InvalidParams("seq", "a positive integer (a seq from terminal/run), or 0 for the current or last command")
	}
	r, err := s.CommandOutput(ctx, p.TerminalID, p.Seq, wait)
	if err != nil {
		return nil, err
	}
	return resultOf(r), nil
}

// resultOf is a command's result in the wire shape.
func resultOf(r *session.CommandResult) *terminalResult {
	return &terminalResult{
		TerminalID:     r.TerminalID,
		Seq:            r.Seq,
		Command:        r.Command,
		Output:         r.Output,
		ExitCode:       r.ExitCode,
		Running:        r.Running,
		Cwd:            r.Cwd,
		Truncated:      r.TruncatedBytes > 0,
		TruncatedBytes: r.TruncatedBytes,
		TotalBytes:     r.TotalBytes,
		Reason:         r.Reason,
		Escalation:     r.Escalation,
		AltScreen:      r.AltScreen,
		Mode:           string(r.Mode),
	}
}

// terminalSession checks a terminal id param and returns the session.
func (h *Handlers) terminalSession(id string) (*session.Session, error) {
	if err := requireID(id); err != nil {
		return nil, err
	}
	return h.session()
}

// ---- input, interrupt, kill, close, resize, list ----

type terminalIDParams struct {
	TerminalID string `json:"terminalId"`
}

type terminalSendInputParams struct {
	TerminalID    string  `json:"terminalId"`
	Data          *string `json:"data"`
	AppendNewline bool    `json:"appendNewline"`
}

func (h *Handlers) terminalSendInput(ctx context.Context, p *terminalSendInputParams) (*terminalInfo, error) {
	s, err := h.terminalSession(p.TerminalID)
	if err != nil {
		return nil, err
	}
	if p.Data == nil {
		return nil, rpc.InvalidParams("data", `a string (keystrokes; "\u0003" is Ctrl-C, "\r" is Enter)`)
	}
	data := *p.Data
	if p.AppendNewline {
		data += "\r" // what the Enter key sends; the tty turns it into "\n"
	}
	if data == "" {
		return nil, rpc.InvalidParams("data", "a non-empty string, or appendNewline true")
	}
	in, err := s.SendInput(ctx, p.TerminalID, []byte(data))
	if err != nil {
		return nil, err
	}
	return infoOf(in), nil
}

func (h *Handlers) terminalInterrupt(ctx context.Context, p *terminalIDParams) (*terminalResult, error) {
	s, err := h.terminalSession(p.TerminalID)
	if err != nil {
		return nil, err
	}
	r, err := s.InterruptTerminal(ctx, p.TerminalID)
	if err != nil {
		return nil, err
	}
	return resultOf(r), nil
}

func (h *Handlers) terminalKill(ctx context.Context, p *terminalIDParams) (*terminalResult, error) {
	s, err := h.terminalSession(p.TerminalID)
	if err != nil {
		return nil, err
	}
	r, err := s.KillTerminal(ctx, p.TerminalID)
	if err != nil {
		return nil, err
	}
	return resultOf(r), nil
}

func (h *Handlers) terminalClose(ctx context.Context, p *terminalIDParams) (any, error) {
	s, err := h.terminalSession(p.TerminalID)
	if err != nil {
		return nil, err
	}
	return nil, s.CloseTerminal(p.TerminalID)
}

type terminalResizeParams struct {
	TerminalID string `json:"terminalId"`
	Cols       int    `json:"cols"`
	Rows       int    `json:"rows"`
}

func (h *Handlers) terminalResize(ctx context.Context, p *terminalResizeParams) (any, error) {
	s, err := h.terminalSession(p.TerminalID)
	if err != nil {
		return nil, err
	}
	if p.Cols < 1 || p.Cols > 65535 {
		return nil, rpc.InvalidParams("cols", "an integer between 1 and 65535")
	}
	if p.Rows < 1 || p.Rows > 65535 {
		return nil, rpc.InvalidParams("rows", "an integer between 1 and 65535")
	}
	return nil, s.ResizeTerminal(p.TerminalID, p.Cols, p.Rows)
}

// terminalInfo is one terminal in terminal/list.
type terminalInfo struct {
	TerminalID string `json:"terminalId"`
	Name       string `json:"name"`
	State      string `json:"state"`
	Cwd        string `json:"cwd"`
	Command    string `json:"command,omitempty"`
	Seq        int    `json:"seq,omitempty"`
	PID        int    `json:"pid"`
	Shell      string `json:"shell"`
	Mode       string `json:"mode,omitempty"`
	AltScreen  bool   `json:"altScreen,omitempty"`
	Cols       int    `json:"cols"`
	Rows       int    `json:"rows"`
}

func infoOf(in session.TerminalInfo) *terminalInfo {
	return &terminalInfo{
		TerminalID: in.ID, Name: in.Name, State: string(in.State), Cwd: in.Cwd,
		Command: in.Command, Seq: in.Seq, PID: in.PID, Shell: in.Shell, Mode: string(in.Mode),
		AltScreen: in.AltScreen, Cols: in.Cols, Rows: in.Rows,
	}
}

func (h *Handlers) terminalList(ctx context.Context, _ *noParams) ([]*terminalInfo, error) {
	s, err := h.session()
	if err != nil {
		return nil, err
	}
	out := []*terminalInfo{}
	for _, in := range s.Terminals() {
		out = append(out, infoOf(in))
	}
	return out, nil
}

// ---- streaming (terminal.streaming) ----

type didOutputParams struct {
	TerminalID string `json:"terminalId"`
	Data       string `json:"data"`
	Offset     int64  `json:"offset"`
	Lost       int64  `json:"lost,omitempty"`
}

type didChangeStateParams struct {
	TerminalID string `json:"terminalId"`
	Name       string `json:"name,omitempty"`
	State      string `json:"state"`
	Seq        int    `json:"seq,omitempty"`
	Command    string `json:"command,omitempty"`
	ExitCode   *int   `json:"exitCode,omitempty"`
	Cwd        string `json:"cwd,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Mode       string `json:"mode,omitempty"`
}

// streamEvent sends one terminal event as a notification. The session
// calls it on a goroutine of the terminal's own, in order, so a slow client
// delays only this terminal's notifications (and past the terminal's buffer
// costs output, reported as lost), never the PTY reader.
func (h *Handlers) streamEvent(ts *termStreams, ev session.TerminalEvent) {
	if ts.stopping.Load() {
		return
	}
	ctx := context.Background()
	ts.mu.Lock()
	st := ts.streams[ev.TerminalID]
	if st == nil {
		st = &outputStream{}
		ts.streams[ev.TerminalID] = st
	}
	if ev.State != nil && ev.State.State == session.TerminalDead {
		delete(ts.streams, ev.TerminalID)
	}
	ts.mu.Unlock()
	switch {
	case ev.Output != nil:
		off, data, lost := st.next(ev.Output)
		if data == "" && lost == 0 {
			return
		}
		h.notify(ctx, "terminal/did_output", &didOutputParams{TerminalID: ev.TerminalID, Data: data, Offset: off, Lost: lost})
	case ev.State != nil:
		if ev.State.State == session.TerminalDead {
			if off, data, ok := st.flush(); ok {
				h.notify(ctx, "terminal/did_output", &didOutputParams{TerminalID: ev.TerminalID, Data: data, Offset: off})
			}
		}
		e := ev.State
		h.notify(ctx, "terminal/did_change_state", &didChangeStateParams{
			TerminalID: ev.TerminalID, Name: e.Name, State: string(e.State), Seq: e.Seq, Command: e.Command,
			ExitCode: e.ExitCode, Cwd: e.Cwd, Reason: e.Reason, Mode: string(e.Mode),
		})
	}
}

func (h *Handlers) notify(ctx context.Context, method string, params any) {
	if err := h.conn.Notify(ctx, method, params); err != nil && !errors.Is(err, context.Canceled) {
		h.log.Debug("notification not sent", "method", method, "error", err)
	}
}

// outputStream turns one terminal's raw byte stream into valid UTF-8
// text. A character cut by a PTY read is held back and sent whole with the
// next chunk, so offsets stay offsets into the raw stream; bytes that are
// not UTF-8 at all become U+FFFD.
type outputStream struct {
	carry    []byte // an incomplete UTF-8 sequence at the end of the last chunk
	carryOff int64  // its offset in the raw stream
}

// next returns the text of an output event, the raw offset of its first
// byte, and the bytes lost right before it.
func (st *outputStream) next(o *session.TerminalOutput) (offset int64, data string, lost int64) {
	buf, offset, lost := o.Data, o.Offset, o.Lost
	if len(st.carry) > 0 {
		if lost > 0 {
			lost += int64(len(st.carry)) // the carried bytes go with the gap
		} else {
			buf = append(st.carry, buf...)
			offset = st.carryOff
		}
		st.carry = nil
	}
	cut := completePrefix(buf)
	if cut < len(buf) {
		st.carry = append([]byte(nil), buf[cut:]...)
		st.carryOff = offset + int64(cut)
	}
	return offset, validUTF8(buf[:cut]), lost
}

// flush returns a carried incomplete sequence when the stream ends.
func (st *outputStream) flush() (int64, string, bool) {
	if len(st.carry) == 0 {
		return 0, "", false
	}
	off, data := st.carryOff, validUTF8(st.carry)
	st.carry = nil
	return off, data, true
}

// completePrefix returns the length of b without a trailing incomplete
// (but so far valid) UTF-8 sequence.
func completePrefix(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if !utf8.RuneStart(b[i]) {
			continue
		}
		if !utf8.FullRune(b[i:]) {
			return i
		}
		break
	}
	return len(b)
}

func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
