package bench

import (
	"io"
	"net"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/oh-bridge/oh-bridge/localserver"
)

// BenchmarkCheckedConnection: what checking that a server on loopback is
// the person's costs (issue 29, localserver.Trust): a new connection with
// the owner check (the kernel's socket table read and searched) beside a
// plain one to the same local HTTP server, in process, each a fresh
// connection and one GET; and a request on a kept-alive checked connection,
// which pays nothing more. Reported as medians and the ratio.
func BenchmarkCheckedConnection(b *testing.B) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "{}") })}
	go srv.Serve(l)
	b.Cleanup(func() { srv.Close() })
	url := "http://" + l.Addr().String() + "/server_info"

	plainTr := &http.Transport{DisableKeepAlives: true, Proxy: nil}
	plain := &http.Client{Transport: plainTr}
	checkedTr := &http.Transport{DisableKeepAlives: true, Proxy: nil, DialContext: (&localserver.Trust{}).DialContext()}
	checked := &http.Client{Transport: checkedTr}
	kept := (&localserver.Trust{}).HTTPClient(0)

	get := func(c *http.Client) time.Duration {
		start := time.Now()
		resp, err := c.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	n := max(b.N, 300)
	var p, c, k []time.Duration
	b.ResetTimer()
	for range n {
		p = append(p, get(plain))
		c = append(c, get(checked))
		k = append(k, get(kept))
	}
	b.StopTimer()
	med := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	mp, mc, mk := med(p), med(c), med(k)
	b.ReportMetric(float64(mp.Microseconds()), "plain-conn-µs")
	b.ReportMetric(float64(mc.Microseconds()), "checked-conn-µs")
	b.ReportMetric(float64(mk.Microseconds()), "kept-alive-µs")
	b.ReportMetric(float64(mc)/float64(mp), "checked/plain")
}
