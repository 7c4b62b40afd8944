package ohactions

import (
	"reflect"
	"testing"
)

func TestReadLines(t *testing.T) {
	all := []string{"0\n", "1\n", "2\n", "3\n"}
	cases := []struct {
		start, end int
		want       []string
	}{
		{0, -1, all}, {1, 3, all[1:3]}, {2, -1, all[2:]}, {3, 3, all[2:3]}, {0, 99, all}, {-5, 1, all[0:1]},
	}
	for _, c := range cases {
		if got := readLines(all, c.start, c.end); !reflect.DeepEqual(got, c.want) {
			t.Errorf("readLines(%d, %d) = %q, want %q", c.start, c.end, got, c.want)
		}
	}
}
