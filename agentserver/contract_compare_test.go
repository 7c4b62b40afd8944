package agentserver_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/jsonshape"
)

// allowance is a difference between the real server and the stand-in
// that is intended, with its reason.
type allowance struct {
	// Where is the exchange's name, or "socket" (an event of the live or
	// replayed streams or the log), or "order" (the streams' order).
	Where string
	// What is the shape path (a prefix when it ends in "…"), for "socket"
	// led by the event's label; for "order" the label of events whose place
	// is not compared, only their number.
	What   string
	Reason string
}

var allowed = []allowance{
	{Where: "order", What: "ConversationStateUpdateEvent(stats)",
		Reason: "the real server sends the stats update of each LLM call from that call's thread through the event loop " +
			"(event_service.py _setup_stats_streaming, _emit_event_from_thread): it lands before the call's actions or " +
			"among them as the threads go (both seen on 1.58.2; after them on 1.49.1)"},
}

// compareContract fails the test on every difference between the real
// server's transcript and the stand-in's that is not allowed.
func compareContract(t *testing.T, lock string, real, standin *transcript) {
	t.Helper()
	var diffs []string
	report := func(where, what, text string) {
		for _, a := range allowed {
			if a.Where == where && matches(a.What, what) {
				return
			}
		}
		diffs = append(diffs, fmt.Sprintf("%s: %s", where, text))
	}
	standinBy := map[string]exchange{}
	for _, ex := range standin.Exchanges {
		standinBy[ex.Name] = ex
	}
	for _, r := range real.Exchanges {
		s, ok := standinBy[r.Name]
		if !ok {
			report(r.Name, "", "the stand-in was not asked")
			continue
		}
		if r.Status != s.Status {
			report(r.Name, "status", fmt.Sprintf("status %d from the real server, %d from the stand-in", r.Status, s.Status))
		}
		if r.Detail != s.Detail {
			report(r.Name, "detail", fmt.Sprintf("detail %s from the real server, %s from the stand-in", r.Detail, s.Detail))
		}
		for _, d := range jsonshape.Compare(r.Shape, s.Shape) {
			report(r.Name, d.Path, shapeDifference(d))
		}
	}
	for _, stream := range []struct {
		name          string
		real, standin []frame
	}{{"live socket", real.Live, standin.Live}, {"replay socket", real.Replay, standin.Replay}, {"events/search", real.Log, standin.Log}} {
		rl, sl := labels(stream.real), labels(stream.standin)
		for _, a := range allowed {
			if a.Where == "order" && count(rl, a.What) != count(sl, a.What) {
				diffs = append(diffs, fmt.Sprintf("%s: %d %s from the real server, %d from the stand-in",
					stream.name, count(rl, a.What), a.What, count(sl, a.What)))
			}
		}
		if rf, sf := withoutAllowed(rl), withoutAllowed(sl); !slices.Equal(rf, sf) {
			var ops []string
			for _, op := range editScript(rf, sf) {
				ops = append(ops, op.String())
			}
			diffs = append(diffs, fmt.Sprintf("%s: the order of events differs (%s):\n  real:     %s\n  stand-in: %s",
				stream.name, strings.Join(ops, "; "), strings.Join(rl, ", "), strings.Join(sl, ", ")))
		}
		rs, ss := byLabel(stream.real), byLabel(stream.standin)
		for _, l := range slices.Sorted(maps.Keys(rs)) {
			if _, ok := ss[l]; !ok {
				continue // an order difference, reported above
			}
			for _, d := range jsonshape.Compare(rs[l], ss[l]) {
				report("socket", l+" "+d.Path, fmt.Sprintf("%s %s: %s", stream.name, l, shapeDifference(d)))
			}
		}
	}
	diffs = slices.Compact(diffs)
	for _, d := range diffs {
		t.Errorf("%s: the stand-in differs from the real server: %s", lock, d)
	}
	if len(diffs) > 0 {
		t.Logf("run with -contract.dump DIR to see both transcripts whole")
	}
}

func shapeDifference(d jsonshape.Difference) string {
	name := d.Path
	if name == "" {
		name = "$"
	}
	switch {
	case d.A == "":
		return fmt.Sprintf("%s (%s) only in the stand-in", name, d.B)
	case d.B == "":
		return fmt.Sprintf("%s (%s) only in the real server", name, d.A)
	}
	return fmt.Sprintf("%s is %s in the real server, %s in the stand-in", name, d.A, d.B)
}

func matches(pattern, what string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "…"); ok {
		return strings.HasPrefix(what, prefix)
	}
	return pattern == what
}

func count(labels []string, label string) int {
	n := 0
	for _, l := range labels {
		if matches(label, l) {
			n++
		}
	}
	return n
}

func labels(fs []frame) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Label)
	}
	return out
}

// withoutAllowed drops the labels an "order" allowance names.
func withoutAllowed(ls []string) []string {
	return slices.DeleteFunc(slices.Clone(ls), func(l string) bool {
		return slices.ContainsFunc(allowed, func(a allowance) bool { return a.Where == "order" && matches(a.What, l) })
	})
}

// byLabel merges the shapes of the events of each label.
func byLabel(fs []frame) map[string]jsonshape.Shape {
	out := map[string]jsonshape.Shape{}
	for _, f := range fs {
		if out[f.Label] == nil {
			out[f.Label] = jsonshape.Shape{}
		}
		out[f.Label].Merge(f.Shape)
	}
	return out
}

// edit is an event one stream has where the other does not.
type edit struct {
	label   string
	at      int
	standin bool // only the stand-in sends it
}

func (e edit) String() string {
	if e.standin {
		return fmt.Sprintf("%s (event %d) only from the stand-in", e.label, e.at+1)
	}
	return fmt.Sprintf("%s (event %d) only from the real server", e.label, e.at+1)
}

// editScript is the shortest list of events to drop from either sequence
// to make them equal (a longest common subsequence).
func editScript(a, b []string) []edit {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []edit
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, edit{label: b[j], at: j, standin: true})
			j++
		default:
			out = append(out, edit{label: a[i], at: i})
			i++
		}
	}
	return out
}
