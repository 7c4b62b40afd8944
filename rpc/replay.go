package rpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Normalizer rewrites volatile values so that two runs of the same session
// compare equal. The rules, applied to every string and object field of a
// message (documented in docs/protocol.md, "Recording and replay"):
//   - an object field whose name is in Keys gets the placeholder Keys[name]
//     (pids, uptimes, timestamps, mtimes, in-flight counts);
//   - a "version" field holding a release version (1.2.3…) becomes $VERSION;
//   - every occurrence of a path in Paths (longest first) becomes its
//     placeholder, so the recorded and the replayed workspace both read
//     $WORKSPACE;
//   - any other absolute path under the temp directory becomes $TMP/…
type Normalizer struct {
	Keys  map[string]string
	Paths map[string]string
	// TempDir is the system temp directory ("/tmp").
	TempDir string

	// Prepared once from Paths and TempDir, not per string.
	prepare sync.Once
	byLen   []string       // Paths' keys, longest first
	tempRE  *regexp.Regexp // a path under TempDir
}

// DefaultVolatileKeys are fields whose values differ on every run.
var DefaultVolatileKeys = map[string]string{
	"pid":       "$PID",
	"uptimeMs":  "$UPTIME",
	"inFlight":  "$INFLIGHT",
	"mtime":     "$MTIME",
	"timestamp": "$TIMESTAMP",
	"processId": "$PID",
	"waitedMs":  "$MS",
}

var releaseVersion = regexp.MustCompile(`^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$`)

// Normalize returns msg with the volatile values replaced.
func (n *Normalizer) Normalize(msg json.RawMessage) any {
	var v any
	d := json.NewDecoder(bytes.NewReader(msg))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return string(msg)
	}
	return n.value("", v)
}

func (n *Normalizer) value(key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if ph, ok := n.Keys[k]; ok && e != nil {
				x[k] = ph
				continue
			}
			x[k] = n.value(k, e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = n.value(key, e)
		}
		return x
	case string:
		if key == "version" && releaseVersion.MatchString(x) {
			return "$VERSION"
		}
		return n.str(x)
	}
	return v
}

func (n *Normalizer) str(s string) string {
	n.prepare.Do(func() {
		for p := range n.Paths {
			if p != "" {
				n.byLen = append(n.byLen, p)
			}
		}
		sort.Slice(n.byLen, func(i, j int) bool { return len(n.byLen[i]) > len(n.byLen[j]) })
		if n.TempDir != "" {
			n.tempRE = regexp.MustCompile(regexp.QuoteMeta(n.TempDir) + `/[^\s"'/:]+`)
		}
	})
	for _, p := range n.byLen {
		s = strings.ReplaceAll(s, p, n.Paths[p])
	}
	if n.tempRE != nil && strings.Contains(s, n.TempDir+"/") {
		s = n.tempRE.ReplaceAllString(s, "$$TMP")
	}
	return s
}

// ReplayOptions configure Replay.
type ReplayOptions struct {
	// Rewrite adapts a recorded client message before it is sent (for
	// example, the recorded workspace path becomes the replay workspace).
	Rewrite func(json.RawMessage) json.RawMessage
	// Expected and Actual normalize the recorded and the live messages.
	Expected, Actual *Normalizer
	// Skip drops messages from the comparison (log and trace traffic).
	Skip func(method string) bool
	// Wait bounds how long to wait for each expected message (default 10 s).
	Wait time.Duration
	// Transcript, when not nil, receives a readable log of the session.
	Transcript io.Writer
	// Framing is the recording's: FramingContentLength ("" too) or
	// FramingLines.
	Framing string
	// Observe, when not nil, sees every bridge message as it arrives,
	// before the client messages recorded after it are sent, so Rewrite
	// can use what the live bridge chose (a session id, say).
	Observe func(json.RawMessage)
}

// Mismatch is one difference between a recording and its replay.
type Mismatch struct {
	Key      string // "response #3", "notification $/progress (2nd)", ...
	Expected any    // nil when the message was not expected
	Actual   any    // nil when the bridge never sent it
}

// ReplayResult is the outcome of a replay.
type ReplayResult struct {
	Mismatches []Mismatch
	Compared   int
	// Updated is the recording with every bridge message replaced by what
	// the bridge sent this time (messages it no longer sends are dropped,
	// new ones are appended), for `replay --update`.
	Updated []Record
}

// Replay sends the client side of records to a fresh bridge over conn and
// compares what the bridge sends back with the recorded bridge side.
// Responses are matched by request id; notifications and bridge→client
// requests by method and occurrence. Each client message is sent only after
// every bridge message recorded before it has arrived, which reproduces the
// recorded causality (a client answers a request only after receiving it).
func Replay(records []Record, conn io.ReadWriteCloser, opts ReplayOptions) (*ReplayResult, error) {
	if opts.Wait == 0 {
		opts.Wait = 10 * time.Second
	}
	if opts.Skip == nil {
		opts.Skip = func(string) bool { return false }
	}
	if opts.Expected == nil {
		opts.Expected = &Normalizer{}
	}
	if opts.Actual == nil {
		opts.Actual = &Normalizer{}
	}
	tr := opts.Transcript
	if tr == nil {
		tr = io.Discard
	}

	// Key every recorded bridge message; remember recorded ids of bridge
	// requests so client answers can be renumbered.
	expKeys := make([]string, len(records))
	expCount := map[string]int{}
	recordedReqKey := map[string]string{} // recorded bridge request id → key
	for i, r := range records {
		if r.Dir != "out" || r.Msg == nil {
			continue
		}
		k, method, id := keyOf(r.Msg, expCount)
		if opts.Skip(method) {
			continue
		}
		expKeys[i] = k
		if strings.HasPrefix(k, "request ") {
			recordedReqKey[id] = k
		}
	}

	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		actual   = map[string]json.RawMessage{}
		order    []string
		actualID = map[string]json.RawMessage{} // key of a bridge request → its live id
		closed   bool
	)
	read := ReadFrame
	if opts.Framing == FramingLines {
		read = readLine
	}
	go func() {
		r := bufio.NewReader(conn)
		count := map[string]int{}
		for {
			body, err := read(r)
			if err == nil && opts.Observe != nil {
				opts.Observe(body)
			}
			mu.Lock()
			if err != nil {
				closed = true
				cond.Broadcast()
				mu.Unlock()
				return
			}
			k, method, _ := keyOf(body, count)
			fmt.Fprintf(tr, "  bridge → %s\n", summarize(body))
			if !opts.Skip(method) {
				actual[k] = body
				order = append(order, k)
				if strings.HasPrefix(k, "request ") {
					var m struct {
						ID json.RawMessage `json:"id"`
					}
					json.Unmarshal(body, &m)
					actualID[k] = m.ID
				}
			}
			cond.Broadcast()
			mu.Unlock()
		}
	}()
	// Wakes waiters at their deadline; a Cond has no timed wait.
	waitFor := func(key string) bool {
		deadline := time.Now().Add(opts.Wait)
		timer := time.AfterFunc(opts.Wait, func() { mu.Lock(); cond.Broadcast(); mu.Unlock() })
		defer timer.Stop()
		for {
			if _, ok := actual[key]; ok {
				return true
			}
			if closed || time.Now().After(deadline) {
				return false
			}
			cond.Wait()
		}
	}

	w := bufio.NewWriter(conn)
	res := &ReplayResult{}
	for i, r := range records {
		if r.Dir == "out" {
			continue
		}
		// Barrier: the bridge messages recorded before this one must be here.
		mu.Lock()
		for j := 0; j < i; j++ {
			if expKeys[j] != "" {
				waitFor(expKeys[j])
			}
		}
		body := []byte(nil)
		if r.Raw != nil {
			body = []byte(*r.Raw)
		} else {
			body = renumberAnswer(r.Msg, recordedReqKey, actualID)
			if opts.Rewrite != nil {
				body = opts.Rewrite(body)
			}
		}
		mu.Unlock()
		fmt.Fprintf(tr, "  client → %s\n", summarize(body))
		if opts.Framing == FramingLines {
			w.Write(body)
			w.WriteByte('\n')
		} else {
			fmt.Fprintf(w, "Content-Length: %d\r\n\r\n", len(body))
			w.Write(body)
		}
		if err := w.Flush(); err != nil {
			// The bridge may legitimately have exited (after exit).
			break
		}
	}

	mu.Lock()
	defer mu.Unlock()
	for i, k := range expKeys {
		if k == "" {
			continue
		}
		res.Compared++
		want := opts.Expected.Normalize(records[i].Msg)
		if !waitFor(k) {
			res.Mismatches = append(res.Mismatches, Mismatch{Key: k, Expected: want})
			continue
		}
		got := opts.Actual.Normalize(actual[k])
		if !jsonEqual(want, got) {
			res.Mismatches = append(res.Mismatches, Mismatch{Key: k, Expected: want, Actual: got})
		}
	}
	// Give the bridge a moment to end, then report what it sent unasked.
	conn.Close()
	expected := map[string]bool{}
	for _, k := range expKeys {
		expected[k] = true
	}
	for i, r := range records {
		if r.Dir == "out" && expKeys[i] != "" {
			if msg, ok := actual[expKeys[i]]; ok {
				r.Msg = msg
			} else {
				continue
			}
		}
		res.Updated = append(res.Updated, r)
	}
	for _, k := range order {
		if !expected[k] {
			res.Mismatches = append(res.Mismatches, Mismatch{Key: k, Actual: opts.Actual.Normalize(actual[k])})
			res.Updated = append(res.Updated, Record{T: records[len(records)-1].T, Dir: "out", Msg: actual[k]})
		}
	}
	return res, nil
}

// keyOf names a bridge message for matching and counts occurrences.
func keyOf(msg json.RawMessage, count map[string]int) (key, method, id string) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(msg, &m)
	id = string(m.ID)
	switch {
	case m.Method == "":
		// Ids can repeat (id null for unparseable input, or a client
		// reusing ids), so responses count occurrences too.
		count["a "+id]++
		if n := count["a "+id]; n > 1 {
			return fmt.Sprintf("response %s (#%d)", id, n), "", id
		}
		return "response " + id, "", id
	case id == "" || id == "null":
		count["n "+m.Method]++
		return fmt.Sprintf("notification %s #%d", m.Method, count["n "+m.Method]), m.Method, ""
	default:
		count["r "+m.Method]++
		return fmt.Sprintf("request %s #%d", m.Method, count["r "+m.Method]), m.Method, id
	}
}

// renumberAnswer gives a recorded client answer the id of the live bridge
// request it answers (the bridge numbers its own requests).
func renumberAnswer(msg json.RawMessage, recorded map[string]string, live map[string]json.RawMessage) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return msg
	}
	if _, isReq := m["method"]; isReq {
		return msg
	}
	k, ok := recorded[string(m["id"])]
	if !ok {
		return msg
	}
	if id, ok := live[k]; ok {
		m["id"] = id
		b, _ := json.Marshal(m)
		return b
	}
	return msg
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// summarize is one readable line for a transcript:
// "request #1 initialize {…}", "result #1 {…}", "error #3 -32800 …".
func summarize(body []byte) string {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		Result json.RawMessage `json:"result"`
		Error  *Error          `json:"error"`
	}
	if json.Unmarshal(body, &m) != nil {
		return "raw " + clip(strconv.Quote(string(body)), 120)
	}
	id := string(m.ID)
	switch {
	case m.Method != "" && (id == "" || id == "null"):
		return fmt.Sprintf("notification %s %s", m.Method, clip(string(m.Params), 140))
	case m.Method != "":
		return fmt.Sprintf("request #%s %s %s", id, m.Method, clip(string(m.Params), 140))
	case m.Error != nil:
		return fmt.Sprintf("error #%s %d %s", id, m.Error.Code, m.Error.Message)
	}
	return fmt.Sprintf("result #%s %s", id, clip(string(m.Result), 160))
}

// Pretty renders a normalized value as indented JSON.
func Pretty(v any) string {
	if v == nil {
		return "(nothing)"
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Report writes a readable account of the mismatches, with a line diff of
// each differing message.
func (r *ReplayResult) Report(w io.Writer) {
	if len(r.Mismatches) == 0 {
		fmt.Fprintf(w, "replay matches: %d bridge messages compared\n", r.Compared)
		return
	}
	fmt.Fprintf(w, "replay differs: %d of %d bridge messages\n", len(r.Mismatches), r.Compared)
	for _, m := range r.Mismatches {
		switch {
		case m.Actual == nil:
			fmt.Fprintf(w, "\n== %s: recorded, but the bridge never sent it\n%s\n", m.Key, indent(Pretty(m.Expected), "- "))
		case m.Expected == nil:
			fmt.Fprintf(w, "\n== %s: sent by the bridge, but not in the recording\n%s\n", m.Key, indent(Pretty(m.Actual), "+ "))
		default:
			fmt.Fprintf(w, "\n== %s: differs (- recorded, + replayed)\n%s", m.Key, lineDiff(Pretty(m.Expected), Pretty(m.Actual)))
		}
	}
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// lineDiff is a plain LCS line diff; messages are small.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			sb.WriteString("  " + x[i] + "\n")
			i++
			j++
		case j < len(y) && (i == len(x) || lcs[i][j+1] >= lcs[i+1][j]):
			sb.WriteString("+ " + y[j] + "\n")
			j++
		default:
			sb.WriteString("- " + x[i] + "\n")
			i++
		}
	}
	return sb.String()
}
