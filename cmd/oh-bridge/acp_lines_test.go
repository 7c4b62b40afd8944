//go:build linux

package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// acpLines is a client's end of `oh-bridge acp`'s stdio, for the tests'
// own ACP clients: it sends a message a line and hands each answer to the
// request that waits for it.
type acpLines struct {
	stdin   io.WriteCloser
	mu      sync.Mutex // guards stdin's writes, nextID and answers
	nextID  int
	answers map[string]chan map[string]any
}

func newACPLines(stdin io.WriteCloser) *acpLines {
	return &acpLines{stdin: stdin, answers: map[string]chan map[string]any{}}
}

func (l *acpLines) send(m map[string]any) {
	b, _ := json.Marshal(m)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stdin.Write(append(b, '\n'))
}

// request sends a request and returns where its answer will arrive.
func (l *acpLines) request(method string, params any) <-chan map[string]any {
	l.mu.Lock()
	l.nextID++
	id := strconv.Itoa(l.nextID)
	ch := make(chan map[string]any, 1)
	l.answers[id] = ch
	l.mu.Unlock()
	l.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return ch
}

// read reads the bridge's messages until its stdout ends: an answer goes
// to its request, the bridge's requests and notifications to handle, in
// order.
func (l *acpLines) read(stdout io.Reader, handle func(m map[string]any)) {
	r := bufio.NewReaderSize(stdout, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		var m map[string]any
		if json.Unmarshal(bytes.TrimSpace(line), &m) == nil {
			if method, _ := m["method"].(string); method != "" {
				handle(m)
			} else if m["id"] != nil {
				id := fmt.Sprint(m["id"])
				l.mu.Lock()
				ch := l.answers[id]
				delete(l.answers, id)
				l.mu.Unlock()
				if ch != nil {
					ch <- m
				}
			}
		}
		if err != nil {
			return
		}
	}
}
