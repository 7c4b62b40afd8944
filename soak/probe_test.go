package soak

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/internal/ohtest"
)

// sample is one reading of the bridge's resources. Goroutines is -1 when
// the bridge runs as a separate process (the protocol does not expose it;
// Threads stands in on the plot).
type sample struct {
	At         time.Duration
	Phase      string
	RSSKB      int
	FDs        int
	Threads    int
	Goroutines int
	Children   int
}

// tolerance is how far from the warm baseline "back to baseline" may be.
// RSS gets slack because a Go heap that grew under load is returned to the
// OS in steps; fds get a little because the runtime may hold a spare one
// (epoll, a pidfd) at any moment; children get none.
type tolerance struct {
	RSSKB      int
	FDs        int
	Goroutines int // ignored when the baseline has no goroutine count
}

var defaultTolerance = tolerance{RSSKB: 20 << 10, FDs: 3, Goroutines: 4}

// backToBaseline lists how now differs from base beyond tol; none means
// the bridge is back where it started.
func backToBaseline(base, now sample, tol tolerance) []string {
	var out []string
	if now.RSSKB > base.RSSKB+tol.RSSKB {
		out = append(out, fmt.Sprintf("RSS %d KB, baseline %d KB (+%d KB allowed)", now.RSSKB, base.RSSKB, tol.RSSKB))
	}
	if d := now.FDs - base.FDs; d > tol.FDs || d < -tol.FDs {
		out = append(out, fmt.Sprintf("%d open fds, baseline %d (±%d allowed)", now.FDs, base.FDs, tol.FDs))
	}
	if base.Goroutines >= 0 && now.Goroutines > base.Goroutines+tol.Goroutines {
		out = append(out, fmt.Sprintf("%d goroutines, baseline %d (+%d allowed)", now.Goroutines, base.Goroutines, tol.Goroutines))
	}
	if now.Children > base.Children {
		out = append(out, fmt.Sprintf("%d child processes, baseline %d", now.Children, base.Children))
	}
	return out
}

func TestBackToBaseline(t *testing.T) {
	base := sample{RSSKB: 30000, FDs: 12, Goroutines: 20}
	noG := sample{RSSKB: 30000, FDs: 12, Goroutines: -1}
	cases := []struct {
		name      string
		base, now sample
		want      string // a fragment of the complaint; "" for none
	}{
		{"identical", base, base, ""},
		{"within every tolerance", base, sample{RSSKB: 30000 + 20<<10, FDs: 15, Goroutines: 24}, ""},
		{"less memory is fine", base, sample{RSSKB: 1000, FDs: 12, Goroutines: 20}, ""},
		{"memory grew", base, sample{RSSKB: 30001 + 20<<10, FDs: 12, Goroutines: 20}, "RSS"},
		{"an fd leaked per terminal", base, sample{RSSKB: 30000, FDs: 16, Goroutines: 20}, "open fds"},
		{"fds vanished (the watcher died)", base, sample{RSSKB: 30000, FDs: 8, Goroutines: 20}, "open fds"},
		{"goroutines leaked", base, sample{RSSKB: 30000, FDs: 12, Goroutines: 25}, "goroutines"},
		{"no goroutine count out of process", noG, sample{RSSKB: 30000, FDs: 12, Goroutines: -1}, ""},
		{"one shell left behind", base, sample{RSSKB: 30000, FDs: 12, Goroutines: 20, Children: 1}, "child processes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(backToBaseline(c.base, c.now, defaultTolerance), "; ")
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Fatalf("base %+v, now %+v: got %q, want a complaint about %q", c.base, c.now, got, c.want)
			}
		})
	}
}

// procStatus reads VmRSS and Threads of a process.
func procStatus(pid int) (rssKB, threads int, err error) {
	st, err := ohtest.Status(pid)
	return st["VmRSS"], st["Threads"], err
}

func fdCount(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

type proc = ohtest.Proc

func readProcs() map[int]proc { return ohtest.Procs() }

// shellSessions remembers the session of every shell the bridge started
// (a shell leads its own session), so a job its terminal left behind is
// still counted after it has been reparented away from the bridge.
type shellSessions struct {
	mu  sync.Mutex
	ids map[int]bool
}

func (s *shellSessions) add(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = map[int]bool{}
	}
	s.ids[pid] = true
}

func (s *shellSessions) has(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[id]
}

// children counts the bridge's processes: those whose parent chain leads
// to root, zombies included (an unreaped child is a leak too), plus those
// in a shell's session. git and what it starts are left out: the test runs
// git, and the in-process bridge shares the test's process.
func children(root int, shells *shellSessions) int {
	procs := readProcs()
	n := 0
	for pid, p := range procs {
		if pid == root {
			continue
		}
		if shells.has(p.Session) {
			n++
			continue
		}
		if ohtest.Under(procs, p, root, func(q ohtest.Proc) bool { return q.Comm == "git" }) {
			n++
		}
	}
	return n
}

// writeCSV writes the samples for a spreadsheet or a later comparison.
func writeCSV(path string, samples []sample) error {
	var b strings.Builder
	b.WriteString("seconds,phase,rss_kb,fds,threads,goroutines,children\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "%.1f,%s,%d,%d,%d,%d,%d\n", s.At.Seconds(), s.Phase, s.RSSKB, s.FDs, s.Threads, s.Goroutines, s.Children)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeSVG draws one panel per resource, each a polyline over the run's
// time with the baseline dashed, so a leak shows as a rising line at a
// glance. Hand-written SVG: nothing to install to read it.
func writeSVG(path, title string, samples []sample, base sample) error {
	const w, ph, left, top = 900, 140, 70, 40
	type panel struct {
		name string
		get  func(sample) float64
	}
	panels := []panel{
		{"RSS (MB)", func(s sample) float64 { return float64(s.RSSKB) / 1024 }},
		{"open fds", func(s sample) float64 { return float64(s.FDs) }},
		{"goroutines", func(s sample) float64 { return float64(s.Goroutines) }},
		{"child processes", func(s sample) float64 { return float64(s.Children) }},
	}
	if base.Goroutines < 0 {
		panels[2] = panel{"OS threads", func(s sample) float64 { return float64(s.Threads) }}
	}
	end := samples[len(samples)-1].At.Seconds()
	if end <= 0 {
		end = 1
	}
	var b strings.Builder
	height := top + len(panels)*(ph+30) + 20
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w+left+20, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="20" font-size="15">%s (%.0f s)</text>`+"\n", left, title, end)
	for i, p := range panels {
		y0 := top + i*(ph+30)
		hi := p.get(base)
		for _, s := range samples {
			hi = max(hi, p.get(s))
		}
		hi = max(hi*1.1, 1)
		yOf := func(v float64) float64 { return float64(y0+ph) - v/hi*ph }
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, y0, w, ph)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text><text x="4" y="%d">%.0f</text><text x="4" y="%d">0</text>`+"\n", left+6, y0+14, p.name, y0+12, hi, y0+ph)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#2a2" stroke-dasharray="5,4"/>`+"\n", left, left+w, yOf(p.get(base)), yOf(p.get(base)))
		b.WriteString(`<polyline fill="none" stroke="#c22" stroke-width="1.5" points="`)
		for _, s := range samples {
			fmt.Fprintf(&b, "%.1f,%.1f ", float64(left)+s.At.Seconds()/end*w, yOf(p.get(s)))
		}
		b.WriteString("\"/>\n")
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d">time (s) → %.0f; dashed: the warm baseline</text>`+"\n", left, height-6, end)
	b.WriteString("</svg>\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
