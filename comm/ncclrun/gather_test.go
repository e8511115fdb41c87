package ncclrun

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/moecast/moecast/internal/rendezvous"
	"github.com/moecast/moecast/internal/unit"
)

// TestGather: three ranks (goroutines over loopback TCP) send their own
// measurements; rank 0 combines them, the others get nothing.
func TestGather(t *testing.T) {
	for _, tt := range []struct {
		name    string
		skip    int // rank 2 leaves out this many points
		wantErr string
	}{{"every point", 0, ""}, {"rank 2 missed a point", 1, "no measurement from rank 2"}} {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			port := ln.Addr().(*net.TCPAddr).Port
			const n = 3
			type out struct {
				res  []Result
				devs []DeviceInfo
				err  error
			}
			outs := make([]out, n)
			var wg sync.WaitGroup
			for r := 0; r < n; r++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					env := rendezvous.Env{Launcher: rendezvous.Torchrun, Rank: r, World: n, LocalRank: r, MasterAddr: "127.0.0.1", MasterPort: port, Token: "g"}
					opt := rendezvous.Options{Timeout: 5 * time.Second}
					if r == 0 {
						opt.Listener = ln
					}
					s, err := rendezvous.Join(env, opt)
					if err != nil {
						outs[r].err = err
						return
					}
					defer s.Close()
					var ms []Measurement
					for i, b := range []int64{1 << 10, 1 << 20} {
						if r == 2 && i < tt.skip {
							continue
						}
						ms = append(ms, Measurement{Rank: r, Collective: AllGather, Mode: Graph, Bytes: b, Count: b / 2, Iters: 20,
							Time: Timing{Median: unit.Seconds(float64(r+1) * 1e-5), Min: 1e-5, Max: unit.Seconds(float64(r+1) * 2e-5)}})
					}
					res, devs, err := Gather(s, ms, DeviceInfo{Host: "h", Ord: r, UUID: "GPU-" + string(rune('a'+r)), Name: "NVIDIA H200"})
					outs[r] = out{res, devs, err}
				}()
			}
			wg.Wait()
			if tt.wantErr != "" {
				assert.ErrorContains(t, outs[0].err, tt.wantErr)
				return
			}
			for r := 1; r < n; r++ {
				require.NoError(t, outs[r].err)
				assert.Nil(t, outs[r].res)
			}
			require.NoError(t, outs[0].err)
			require.Len(t, outs[0].res, 2)
			assert.InDelta(t, 2e-5, float64(outs[0].res[0].Time.Median), 1e-18, "mean of 1, 2, 3 x 10 us")
			assert.InDelta(t, 6e-5, float64(outs[0].res[0].Time.Max), 1e-18)
			assert.Equal(t, n, outs[0].res[0].Ranks)
			require.Len(t, outs[0].devs, n)
			assert.Equal(t, "GPU-c", outs[0].devs[2].UUID)
			assert.Equal(t, 2, outs[0].devs[2].Rank)
		})
	}
}
