package plan

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSweepProductOrderAndSkips(t *testing.T) {
	axes := []Axis{{Name: "a", Values: []string{"1", "2", "3"}}, {Name: "b", Values: []string{"x", "y"}}}
	apply := func(set []Setting) (string, error) {
		if set[0].Value == "2" && set[1].Value == "y" {
			return "", errors.New("a=2 does not go with b=y")
		}
		if set[0].Value == "3" {
			return "", errors.New("a=3 is out of range")
		}
		return set[0].Name + set[0].Value + set[1].Name + set[1].Value, nil
	}
	r, err := Sweep(axes, apply, 2)
	require.NoError(t, err)
	var got []string
	for _, p := range r.Points {
		got = append(got, fmt.Sprintf("%d %s", p.Index, p.Value))
	}
	assert.Equal(t, []string{"0 a1bx", "1 a1by", "2 a2bx"}, got)
	assert.Equal(t, []Skip{{3, "a=2 does not go with b=y"}, {4, "a=3 is out of range"}, {5, "a=3 is out of range"}}, r.Skipped)
	assert.Equal(t, []ReasonCount{{"a=2 does not go with b=y", 1}, {"a=3 is out of range", 2}}, r.Reasons)
	assert.Equal(t, []Setting{{"a", "3"}, {"b", "y"}}, r.Settings(5))
}

func TestSweepSameForAnyWorkers(t *testing.T) {
	axes := []Axis{{Name: "i", Values: make([]string, 97)}, {Name: "j", Values: make([]string, 53)}}
	for a := range axes {
		for k := range axes[a].Values {
			axes[a].Values[k] = strconv.Itoa(k)
		}
	}
	apply := func(set []Setting) (int, error) {
		i, _ := strconv.Atoi(set[0].Value)
		j, _ := strconv.Atoi(set[1].Value)
		if (i*j)%7 == 3 {
			return 0, fmt.Errorf("i*j = %d mod 7 = 3", i*j)
		}
		return i*1000 + j, nil
	}
	var prev *SweepResult[int]
	for _, w := range []int{1, 2, 6} {
		r, err := Sweep(axes, apply, w)
		require.NoError(t, err)
		require.Equal(t, 97*53, len(r.Points)+len(r.Skipped))
		for _, p := range r.Points {
			require.Equal(t, p.Index/53*1000+p.Index%53, p.Value, "point %d", p.Index)
		}
		if prev != nil {
			assert.Equal(t, prev, r, "workers %d", w)
		}
		prev = r
	}
}

func TestSweepErrors(t *testing.T) {
	big := make([]string, 1<<13)
	for _, tt := range []struct {
		name string
		axes []Axis
		want string
	}{
		{"no values", []Axis{{Name: "a"}}, `axis "a" has no values`},
		{"no name", []Axis{{Values: []string{"1"}}}, "has no name"},
		{"twice", []Axis{{Name: "a", Values: []string{"1"}}, {Name: "a", Values: []string{"2"}}}, `axis "a" given twice`},
		{"too many", []Axis{{Name: "a", Values: big}, {Name: "b", Values: big}}, "more than 1048576 combinations"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Sweep(tt.axes, func([]Setting) (int, error) { return 0, nil }, 1)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	r, err := Sweep(nil, func(set []Setting) (string, error) { return strings.Repeat("x", len(set)+1), nil }, 1)
	require.NoError(t, err)
	assert.Equal(t, []SweepPoint[string]{{0, "x"}}, r.Points, "no axes: one combination")
}
