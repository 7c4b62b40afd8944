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
	link, err := r.link(ctx, key, relay)
	if err != nil {
		return conversation.Endpoint{}, err
	}
	release := func(context.Context) error { r.release(key); return nil }
	b, err := link.Bind(ctx)
	if err != nil {
		_ = release(ctx)
		return conversation.Endpoint{}, err
	}
	return conversation.Endpoint{URL: b.URL, Token: b.Token, Close: release,
		Via: fmt.Sprintf("the relay at %s, as window %q", relay.URL, link.Name())}, nil
}

// link returns the session's registration with the relay, making it and
// waiting for its first link (15 s at most) the first time.
func (r *relayLinks) link(ctx context.Context, key relayKey, relay facekit.Relay) (*relaylink.Link, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if u := r.links[key]; u != nil {
		u.users++
		return u.link, nil
	}
	sess := key.sess
	roots := sess.ChosenRoots()
	srv := mcpserver.New(sess, mcpserver.Options{Version: version, Logger: r.logger, ExtraTools: r.extra})
	l, err := relaylink.Dial(ctx, relaylink.Options{
		URL: relay.URL, Secret: relay.Secret, Name: filepath.Base(roots[0]) + " — " + r.editor, Roots: roots,
		Version: version, Host: srv, Logger: r.logger,
	}, 15*time.Second)
	if err != nil {
		return nil, err
	}
	r.links[key] = &relayUse{link: l, users: 1}
	return l, nil
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
