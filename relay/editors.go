package relay

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/oh-bridge/oh-bridge/relay/wire"
)

// EditorHandler serves the editors' side: `…/link`, the WebSocket a
// bridge dials, and `…/windows`, the discovery list. Paths are matched by
// their last element, so the handler works behind a proxy that keeps its
// prefix (`/s/{session}/relay/link`) and behind one that strips it.
func (r *Relay) EditorHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		owner, ok := r.owner(req)
		if !ok {
			// No secret, or the wrong one: nothing is said of what is here.
			http.Error(w, "the relay needs its pairing secret: send Authorization: Bearer <secret> (the person's bridge has it in its relay setting)", http.StatusUnauthorized)
			return
		}
		switch {
		case strings.HasSuffix(req.URL.Path, "/link"):
			r.serveLink(w, req, owner)
		case strings.HasSuffix(req.URL.Path, "/windows") && req.Method == http.MethodGet:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"windows": r.windowsOf(owner), "base": PublicBase(req)})
		default:
			http.Error(w, "no such route on the relay's editor side: a bridge dials …/link; …/windows lists your windows", http.StatusNotFound)
		}
	})
}

// PublicBase is the URL of the editors' side as the client reached it,
// through a proxy: X-Forwarded-Proto and -Host, and the prefix from
// X-Forwarded-Prefix, else X-Forwarded-Path or X-Original-URI (less the
// route), else the request's own path.
func PublicBase(req *http.Request) string {
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	if p := firstValue(req.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
		scheme = p
	}
	host := req.Host
	if h := firstValue(req.Header.Get("X-Forwarded-Host")); h != "" {
		host = h
	}
	path := req.URL.Path
	if p := firstValue(req.Header.Get("X-Forwarded-Prefix")); p != "" {
		path = strings.TrimSuffix(p, "/") + "/" + lastElem(req.URL.Path)
	} else if p := firstValue(req.Header.Get("X-Forwarded-Path")); p != "" {
		path = p
	} else if p := req.Header.Get("X-Original-URI"); p != "" {
		path = p
	}
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	return scheme + "://" + host + strings.TrimSuffix(path, "/"+lastElem(path))
}

func firstValue(h string) string {
	v, _, _ := strings.Cut(h, ",")
	return strings.TrimSpace(v)
}

func lastElem(p string) string { return p[strings.LastIndex(p, "/")+1:] }

var windowID = regexp.MustCompile(`^[A-Za-z0-9_-]{16,64}$`)

// serveLink takes a bridge's WebSocket: its hello registers (or brings
// back) its window, then frames flow until the link drops.
func (r *Relay) serveLink(w http.ResponseWriter, req *http.Request, owner [32]byte) {
	// The default check refuses a browser's page from another origin
	// (its Origin's host must be the Host); a bridge sends no Origin.
	conn, err := websocket.Accept(w, req, nil)
	if err != nil {
		r.log.Info("link refused", "error", err)
		return
	}
	ctx := req.Context()
	link := wire.NewLink(ctx, conn)
	hctx, cancel := context.WithTimeout(ctx, helloTimeout)
	hello, err := link.Receive(hctx)
	cancel()
	if err != nil || hello.T != wire.THello {
		conn.Close(websocket.StatusPolicyViolation, "the first frame must be a hello")
		return
	}
	win, welcome, carry, err := r.register(owner, hello, link)
	if err != nil {
		_ = link.Send(wire.ErrorFrame("", err))
		conn.Close(websocket.StatusPolicyViolation, "refused")
		return
	}
	welcome.Base = PublicBase(req)
	if err := link.Send(welcome); err != nil {
		r.linkDropped(win, link)
		return
	}
	// Only now may an agent's call open a stream on the link: the
	// bridge reads the welcome first.
	r.linkUp(win, link)
	go carry()
	beat, stop := context.WithCancel(ctx)
	defer stop()
	go link.Keepalive(beat, r.opts.heartbeat())
	err = link.Run(ctx, func(f wire.Frame) error { return r.fromBridge(win, link, f) })
	r.log.Info("link dropped", "window", win.info.ID, "error", err)
	r.linkDropped(win, link)
}

// register adds a window, or gives a known one its new link. It answers
// with the welcome: the relay's name for the window and what it has
// received of each of the window's streams the bridge still has; and
// with carry, which puts the window's streams on the new link, to run
// once the welcome went, while the link reads. The link is the window's
// only after linkUp.
//
// Each stream the relay has for the window is, by the hello: one the
// bridge has (held on the link now, what the bridge lacks resent by
// carry); one the bridge ended (its close was lost with the old link: it
// ends here too); or one the bridge never heard of (its open was lost
// with the old link: carry opens it again, from its first message).
func (r *Relay) register(owner [32]byte, hello wire.Frame, link *wire.Link) (*window, wire.Frame, func(), error) {
	info := *hello.Window
	if !windowID.MatchString(info.ID) {
		return nil, wire.Frame{}, nil, errorf("bad_window", "a window id is 16 to 64 letters, digits, - or _ (the bridge makes a random one)")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	win := r.windows[info.ID]
	switch {
	case win != nil && win.owner != owner:
		return nil, wire.Frame{}, nil, errorf(KindUnauthorized, "window id %s is registered under another pairing secret", info.ID)
	case win == nil:
		if len(r.windows) >= r.opts.MaxWindows {
			return nil, wire.Frame{}, nil, errorf(KindRelayFull, "the relay has %d windows, its cap (--max-windows): close a window or raise the cap", r.opts.MaxWindows)
		}
		win = &window{owner: owner, streams: map[string]*carried{}, back: make(chan struct{})}
		r.windows[info.ID] = win
	}
	if win.away != nil {
		win.away.Stop()
		win.away = nil
	}
	if old := win.link; old != nil && old != link {
		// A reconnect that came before the old link was seen to drop:
		// new calls wait for this link's welcome.
		_ = old.Close("replaced by a new link")
		win.link = nil
		win.back = make(chan struct{})
	}
	win.info = info
	win.name = r.uniqueName(owner, info.ID, info.Name)
	win.pending = link
	// The bridge's conversations: a relay that restarted binds them
	// again; one bound to another window stays with it.
	rebound := false
	for _, b := range info.Conversations {
		if c := r.conversations[b.Conversation]; c == nil && len(r.conversations) < r.opts.MaxConversations && conversationKey.MatchString(b.Conversation) {
			r.conversations[b.Conversation] = r.newConversation(b.Conversation, b.Token, info.ID, owner)
			rebound = true
		}
	}
	if rebound {
		r.boundLocked()
	}
	ended := map[string]bool{}
	for _, id := range hello.Ended {
		ended[id] = true
	}
	streams := map[string]uint64{}
	var resend []wire.Resend
	var reopen []*carried
	for id, c := range win.streams {
		got, has := hello.Streams[id]
		switch {
		case has:
			link.Hold(c.s)
			streams[id] = c.s.Received()
			resend = append(resend, wire.Resend{Stream: c.s, Received: got})
		case ended[id] || c.s.Err() != nil:
			c.s.Shut(errorf(KindWindowGone, "the editor window %q ended this session while its link was down; the call's outcome is unknown: check the workspace before running it again", win.name))
			delete(win.streams, id)
		default:
			reopen = append(reopen, c)
		}
	}
	carry := func() {
		for _, c := range reopen {
			if link.Send(wire.Frame{T: wire.TOpen, S: c.s.ID(), Conversation: c.conversation}) != nil || link.Carry(c.s, 0) != nil {
				return // the link is going; the next one carries them
			}
		}
		link.CarryAll(resend)
	}
	return win, wire.Frame{T: wire.TWelcome, Window: &wire.Window{ID: info.ID, Name: win.name}, Streams: streams}, carry, nil
}

// linkUp makes link the window's, its welcome sent, and lets the calls
// that wait for the window go; a link that a newer one replaced
// meanwhile is left to drop.
func (r *Relay) linkUp(win *window, link *wire.Link) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if win.pending != link {
		return
	}
	win.pending = nil
	win.link = link
	select {
	case <-win.back:
	default:
		close(win.back)
	}
}

// linkDropped starts the window's grace: its streams wait, then end.
func (r *Relay) linkDropped(win *window, link *wire.Link) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case win.link == link:
		win.link = nil
		win.back = make(chan struct{})
	case win.pending == link:
		win.pending = nil // dropped before its welcome went: calls still wait
	default:
		return // a newer link took the window
	}
	if win.away != nil {
		win.away.Stop()
	}
	win.away = time.AfterFunc(r.opts.Grace, func() { r.reap(win) })
}

// reap removes a window whose link did not come back in time.
func (r *Relay) reap(win *window) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if win.link != nil || win.pending != nil || r.windows[win.info.ID] != win {
		return
	}
	delete(r.windows, win.info.ID)
	for _, c := range win.streams {
		c.s.Shut(errorf(KindWindowGone, "the editor window %q went away during the call (its link dropped and did not come back within %s); the call's outcome is unknown: check the workspace before running it again", win.name, r.opts.Grace))
	}
	win.streams = nil
}

// fromBridge handles a bridge's frames other than its streams'.
func (r *Relay) fromBridge(win *window, link *wire.Link, f wire.Frame) error {
	switch f.T {
	case wire.TBind:
		b, err := r.bind(win)
		if err != nil {
			return err
		}
		return link.Send(wire.Frame{T: wire.TBound, ID: f.ID, Bound: &b})
	case wire.TError:
		r.log.Info("the bridge refused a frame", "why", f.Why, "kind", f.Kind)
		return nil
	}
	return errorf("bad_frame", "a bridge does not send %q frames", f.T)
}

// waitBack waits for the window's link, up to the grace or ctx.
func (r *Relay) waitBack(ctx context.Context, win *window) error {
	r.mu.Lock()
	back, name := win.back, win.name
	r.mu.Unlock()
	t := time.NewTimer(r.opts.Grace)
	defer t.Stop()
	select {
	case <-back:
		return nil
	case <-t.C:
		return errorf(KindWindowGone, "the editor window %q is not connected (its link dropped %s ago or more)", name, r.opts.Grace)
	case <-ctx.Done():
		return ctx.Err()
	}
}
