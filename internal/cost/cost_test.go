package cost

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDescribe(t *testing.T) {
	tests := []struct {
		name string
		src  Source
		want string
	}{
		{"roofline with efficiency", Source{Kind: Roofline, Formula: "bytes/(BW*eff)", Efficiency: 0.8, Bound: "memory"},
			"roofline bytes/(BW*eff), eff 0.80, memory-bound"},
		{"roofline without efficiency", Source{Kind: Roofline, Formula: "alpha + bytes/busBW", Bound: "latency+bandwidth", Note: "eager floor"},
			"roofline alpha + bytes/busBW, latency+bandwidth-bound (eager floor)"},
		{"table", Source{Kind: Table, Table: "f.toml#t", RowLo: 2, RowHi: 3, Note: "clamped"}, "table f.toml#t rows 2-3 (clamped)"},
		{"fixed", Source{Kind: Fixed, Formula: "0 on one rank"}, "fixed: 0 on one rank"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.src.Describe())
		})
	}
}
