package relay

import "testing"

// TestProgressToken: the tokens agents send, as the SDK takes them again;
// the agent-server's MCP client sends numbers.
func TestProgressToken(t *testing.T) {
	for _, c := range []struct {
		in   any
		want any
		ok   bool
	}{
		{"p1", "p1", true}, {float64(2), int64(2), true}, {int64(7), int64(7), true},
		{float64(2.5), nil, false}, {nil, nil, false}, {true, nil, false},
	} {
		got, ok := progressToken(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("progressToken(%#v) = %#v, %v; want %#v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
