package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/oh-bridge/oh-bridge/conversation"
	"github.com/oh-bridge/oh-bridge/facekit"
	"github.com/oh-bridge/oh-bridge/mcpserver"
	"github.com/oh-bridge/oh-bridge/relaylink"
	"github.com/oh-bridge/oh-bridge/session"
)

// relayLinks keeps one registration with a relay per session (a window)
// and relay: a face's conversations in one session share it.
type relayLinks struct {
	logger *slog.Logger
	editor string // names the window beside its folder: "VS Code", "ACP"
	extra  []string

	mu    sync.Mutex
	links map[relayKey]*relayUse
}

// relayUse is a registration and how many conversations hold it: the
// window is given up when the last one closes.
type relayUse struct {
	link  *relaylink.Link
	users int

	mu       sync.Mutex
	down     string // why the link is down, "" while it is up
	watchers map[int]func()
	next     int
}

// state is the link's OnState: the conversations bound through it
// re-report their status when it goes down or comes back.
func (u *relayUse) state(url string, up bool, err error) {
	down := ""
	if !up {
		down = fmt.Sprintf("the link to the relay at %s is down (%s): the bridge dials it again, and the agent's calls wait for it", url, relaylink.Why(err))
	}
	u.mu.Lock()
	changed := (down == "") != (u.down == "")
	u.down = down
	var tell []func()
	if changed {
		for _, w := range u.watchers {
			tell = append(tell, w)
		}
	}
	u.mu.Unlock()
	for _, w := range tell {
		w()
	}
}

func (u *relayUse) downWords() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.down
}

func (u *relayUse) watch(changed func()) (stop func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	id := u.next
	u.next++
	u.watchers[id] = changed
	return func() {
		u.mu.Lock()
		delete(u.watchers, id)
		u.mu.Unlock()
	}
}

type relayKey struct {
	sess *session.Session
	url  string
}

// startRelay is the StartRelay the faces get: the session registers with
// the relay (dialing out) the first time, serving its tools with an MCP
// server of its own, and each conversation is bound there.
func startRelay(logger *slog.Logger, editor string, extraTools []string) facekit.StartRelay {
	r := &relayLinks{logger: logger, editor: editor, extra: extraTools, links: map[relayKey]*relayUse{}}
	return r.bind
}

func (r *relayLinks) bind(ctx context.Context, sess *session.Session, relay facekit.Relay) (conversation.Endpoint, error) {
	key := relayKey{sess, relay.URL}
	use, err := r.link(ctx, key, relay)
	if err != nil {
		return conversation.Endpoint{}, err
	}
	link := use.link
	release := func(context.Context) error { r.release(key); return nil }
	b, err := link.Bind(ctx)
	if err != nil {
		_ = release(ctx)
		return conversation.Endpoint{}, err
	}
	return conversation.Endpoint{URL: b.URL, Token: b.Token, Close: release,
		Via: fmt.Sprintf("the relay at %s, as window %q", relay.URL, link.Name()), Down: use.downWords, Watch: use.watch}, nil
}

// link returns the session's registration with the relay, making it and
// waiting for its first link (15 s at most) the first time.
func (r *relayLinks) link(ctx context.Context, key relayKey, relay facekit.Relay) (*relayUse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u := r.links[key]; u != nil {
		u.users++
		return u, nil
	}
	sess := key.sess
	roots := sess.ChosenRoots()
	srv := mcpserver.New(sess, mcpserver.Options{Version: version, Logger: r.logger, ExtraTools: r.extra})
	u := &relayUse{users: 1, watchers: map[int]func(){}}
	l, err := relaylink.Dial(ctx, relaylink.Options{
		URL: relay.URL, Secret: relay.Secret, Name: filepath.Base(roots[0]) + " — " + r.editor, Roots: roots,
		Version: version, Host: srv, Logger: r.logger,
		OnState: func(up bool, err error) { u.state(relay.URL, up, err) },
	}, 15*time.Second)
	if err != nil {
		return nil, err
	}
	u.link = l
	r.links[key] = u
	return u, nil
}

// release is a conversation's end: the last one gives the window up.
func (r *relayLinks) release(key relayKey) {
	r.mu.Lock()
	u := r.links[key]
	if u == nil {
		r.mu.Unlock()
		return
	}
	u.users--
	if u.users > 0 {
		r.mu.Unlock()
		return
	}
	delete(r.links, key)
	r.mu.Unlock()
	u.link.Close()
}
