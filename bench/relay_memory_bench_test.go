//go:build linux

package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/oh-bridge/oh-bridge/internal/netns"
	"github.com/oh-bridge/oh-bridge/internal/ohtest"
	"github.com/oh-bridge/oh-bridge/session"
)

// BenchmarkRelayMemory: the relay process's resident memory (`oh-bridge
// relay`, in the cloud) with 100 windows registered and 100
// conversations bound, each with an agent session that made a call,
// beside the same relay idle. The windows' bridges run in the
// benchmark's process, in the laptop.
func BenchmarkRelayMemory(b *testing.B) {
	needNetns(b)
	for b.Loop() {
		pair := netns.NewPair(b, "cloud", "laptop")
		secretFile := b.TempDir() + "/secret"
		if err := os.WriteFile(secretFile, []byte(benchSecret+"\n"), 0o600); err != nil {
			b.Fatal(err)
		}
		cmd := pair.A.Command(bin, "relay", "--secret-file", secretFile, "--agents", "127.0.0.1:18500",
			"--editors", pair.A.Addr+":18501", "--allow-remote", "--max-windows", "1000")
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			b.Fatal(err)
		}
		editors := "http://" + pair.A.Addr + ":18501"
		idle := rss(b, cmd.Process.Pid)
		for i := range 100 {
			sess, err := session.New(session.Options{Roots: session.Candidates("bench", b.TempDir()), ShellMode: session.ShellNoRC})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { sess.Close(context.Background()) })
			link := benchWindow(b, editors, pair.B, fmt.Sprint("w", i), sess)
			bound, err := link.Bind(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			cs := connectAgent(b, bound.URL, dialing(pair.A, ohtest.Bearer(bound.Token, &http.Transport{DialContext: pair.A.DialContext})))
			timedCall(b, cs, "echo hi", "hi")
		}
		loaded := rss(b, cmd.Process.Pid)
		b.ReportMetric(float64(idle)/(1<<20), "idle-RSS-MB")
		b.ReportMetric(float64(loaded)/(1<<20), "100-windows-RSS-MB")
		b.ReportMetric(float64(loaded-idle)/100/(1<<10), "KB-per-window")
	}
}

// rss is a process's resident set, from /proc.
func rss(b *testing.B, pid int) uint64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb uint64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb << 10
		}
	}
	b.Fatal("no VmRSS")
	return 0
}
