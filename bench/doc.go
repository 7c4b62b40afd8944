// Package bench measures the compiled oh-bridge binary over real pipes:
// round-trip latency, pipelined throughput, start-up time and idle memory.
// Each figure is reported beside a baseline measured in the same run (a
// plain `cat` pipe echo, spawning /bin/true), so ratios stay meaningful on
// any machine. Run with `task bench` or
// `go test -run '^$' -bench . ./bench/`.
package bench
