package rendezvous

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func getenv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want Env
	}{
		{"nothing: one process", map[string]string{}, Env{Launcher: Single, World: 1, LocalWorld: 1}},
		{"torchrun", map[string]string{"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "3", "LOCAL_WORLD_SIZE": "4",
			"MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29501", "TORCHELASTIC_RUN_ID": "abc"},
			Env{Launcher: Torchrun, Rank: 3, World: 8, LocalRank: 3, LocalWorld: 4, MasterAddr: "10.0.0.1", MasterPort: 29501, Token: "abc"}},
		{"torchrun: LOCAL_RANK from LOCAL_WORLD_SIZE, default port, derived token", map[string]string{"RANK": "5", "WORLD_SIZE": "8",
			"LOCAL_WORLD_SIZE": "4", "MASTER_ADDR": "h"},
			Env{Launcher: Torchrun, Rank: 5, World: 8, LocalRank: 1, LocalWorld: 4, MasterAddr: "h", MasterPort: 29500, Token: "h-29500-8"}},
		{"torchrun sharing its agent's store on MASTER_PORT", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0",
			"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "41000", "TORCHELASTIC_USE_AGENT_STORE": "True", "TORCHELASTIC_RUN_ID": "x"},
			Env{Launcher: Torchrun, Rank: 0, World: 2, MasterAddr: "127.0.0.1", MasterPort: 41001, Token: "x"}},
		{"torchrun under srun: RANK wins", map[string]string{"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1", "MASTER_ADDR": "a",
			"SLURM_PROCID": "0", "SLURM_NTASKS": "1", "MOECAST_JOB_TOKEN": "t"},
			Env{Launcher: Torchrun, Rank: 1, World: 2, LocalRank: 1, MasterAddr: "a", MasterPort: 29500, Token: "t"}},
		{"srun: compressed node list", map[string]string{"SLURM_PROCID": "6", "SLURM_NTASKS": "16", "SLURM_LOCALID": "2",
			"SLURM_TASKS_PER_NODE": "4(x4)", "SLURM_STEP_NODELIST": "gpu[01-04,07]", "SLURM_NODELIST": "other1", "SLURM_JOB_ID": "1234", "SLURM_STEP_ID": "0"},
			Env{Launcher: Srun, Rank: 6, World: 16, LocalRank: 2, LocalWorld: 4, MasterAddr: "gpu01", MasterPort: 20000 + 1234*7%20000, Token: "slurm-1234.0"}},
		{"srun: tasks per node differ (this node's count by SLURM_NODEID)", map[string]string{"SLURM_PROCID": "3", "SLURM_NTASKS": "4",
			"SLURM_LOCALID": "2", "SLURM_NODEID": "1", "SLURM_TASKS_PER_NODE": "1,3", "SLURM_STEP_NODELIST": "g[1-2]", "MOECAST_JOB_TOKEN": "t"},
			Env{Launcher: Srun, Rank: 3, World: 4, LocalRank: 2, LocalWorld: 3, MasterAddr: "g1", MasterPort: 29500, Token: "t"}},
		{"srun: tasks per node differ, repeat counts", map[string]string{"SLURM_PROCID": "5", "SLURM_NTASKS": "6",
			"SLURM_LOCALID": "1", "SLURM_NODEID": "2", "SLURM_TASKS_PER_NODE": "1(x2),4", "SLURM_STEP_NODELIST": "g[1-3]", "MOECAST_JOB_TOKEN": "t"},
			Env{Launcher: Srun, Rank: 5, World: 6, LocalRank: 1, LocalWorld: 4, MasterAddr: "g1", MasterPort: 29500, Token: "t"}},
		{"srun: tasks per node differ, no SLURM_NODEID: the most", map[string]string{"SLURM_PROCID": "3", "SLURM_NTASKS": "4",
			"SLURM_LOCALID": "2", "SLURM_TASKS_PER_NODE": "1,3", "SLURM_STEP_NODELIST": "g[1-2]", "MOECAST_JOB_TOKEN": "t"},
			Env{Launcher: Srun, Rank: 3, World: 4, LocalRank: 2, LocalWorld: 3, MasterAddr: "g1", MasterPort: 29500, Token: "t"}},
		{"srun: job node list, MASTER_PORT", map[string]string{"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_NODELIST": "n7,n8", "MASTER_PORT": "4000"},
			Env{Launcher: Srun, Rank: 0, World: 2, MasterAddr: "n7", MasterPort: 4000, Token: "n7-4000-2"}},
		{"mpirun with MOECAST_MASTER_ADDR", map[string]string{"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "4",
			"OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "4", "MOECAST_MASTER_ADDR": "m0", "MOECAST_MASTER_PORT": "5000", "MASTER_PORT": "1"},
			Env{Launcher: Mpirun, Rank: 1, World: 4, LocalRank: 1, LocalWorld: 4, MasterAddr: "m0", MasterPort: 5000, Token: "m0-5000-4"}},
		{"mpirun over a shared directory", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2",
			"MOECAST_RENDEZVOUS_DIR": "/shared/rdv", "MOECAST_JOB_TOKEN": "j"},
			Env{Launcher: Mpirun, Rank: 0, World: 2, MasterPort: 29500, Dir: "/shared/rdv", Token: "j"}},
		{"torchrun, one rank", map[string]string{"RANK": "0", "WORLD_SIZE": "1"},
			Env{Launcher: Torchrun, World: 1, MasterPort: 29500, Token: "-29500-1"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromEnv(getenv(tt.env))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got, "%v", tt.env)
		})
	}
}

func TestFromEnvErrors(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"rank not below world", map[string]string{"RANK": "4", "WORLD_SIZE": "4", "MASTER_ADDR": "a"},
			"rendezvous: torchrun environment: RANK=4 is not below WORLD_SIZE=4"},
		{"world without rank", map[string]string{"WORLD_SIZE": "4", "MASTER_ADDR": "a"}, "torchrun environment: RANK is not set"},
		{"rank not a number", map[string]string{"RANK": "x", "WORLD_SIZE": "2", "MASTER_ADDR": "a"}, `RANK="x" is not a non-negative integer`},
		{"torchrun without master", map[string]string{"RANK": "0", "WORLD_SIZE": "2"}, "2 ranks but MASTER_ADDR is not set"},
		{"world 0", map[string]string{"RANK": "0", "WORLD_SIZE": "0"}, "WORLD_SIZE=0: want at least 1"},
		{"local rank over local world", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "a"},
			"local rank 2 is not below the local world size 2"},
		{"bad port", map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "a", "MASTER_PORT": "70000"}, "master port 70000: want 1-65535"},
		{"mpirun without master", map[string]string{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2"},
			"mpirun environment: 2 ranks but rank 0's address is unknown: set MOECAST_MASTER_ADDR"},
		{"mpirun rank over size", map[string]string{"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "2", "MOECAST_MASTER_ADDR": "a"},
			"OMPI_COMM_WORLD_RANK=2 is not below OMPI_COMM_WORLD_SIZE=2"},
		{"srun without ntasks", map[string]string{"SLURM_PROCID": "0"}, "SLURM_PROCID is set but SLURM_NTASKS is not"},
		{"srun without node list", map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "2"}, "no SLURM_STEP_NODELIST, SLURM_NODELIST or MASTER_ADDR"},
		{"srun bad node list", map[string]string{"SLURM_PROCID": "1", "SLURM_NTASKS": "2", "SLURM_NODELIST": "gpu[01-04"}, `SLURM_NODELIST: node list "gpu[01-04": unbalanced '['`},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromEnv(getenv(tt.env))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			var ee *EnvError
			assert.ErrorAs(t, err, &ee)
		})
	}
}

func TestFirstHost(t *testing.T) {
	for in, want := range map[string]string{
		"gpu[01-04,07]":           "gpu01",
		"gpu[07,01-04]":           "gpu07",
		"node1":                   "node1",
		"a1,a2,b[3-4]":            "a1",
		"rack[1-2]-n[003-004]":    "rack1-n003",
		"x[5]":                    "x5",
		" h100-[2-3],h100-9 ":     "h100-2",
		"c[10-11]-ib,c[12-13]-ib": "c10-ib",
	} {
		got, err := FirstHost(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "a[1-2", "a]1", "a[x-y]", "[]"} {
		_, err := FirstHost(in)
		assert.Error(t, err, "%q", in)
	}
}
