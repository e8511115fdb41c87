// Package rendezvous finds this process's rank among the processes of a
// multi-process job and lets them exchange small blobs: rank 0 hands an
// opaque blob (the 128-byte NCCL unique id) to every rank, all ranks meet at
// a barrier, and rank 0 gathers one small blob from each rank (its GPU UUID,
// its results), so that rank 0 alone writes the job's file.
//
// Ranks come from the environment the launcher sets (FromEnv): torchrun
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, the
// master from SLURM_STEP_NODELIST or SLURM_NODELIST), mpirun (Open MPI's
// OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE; the master from
// MOECAST_MASTER_ADDR), or none of them: a single process.
//
// The exchange runs over TCP (rank 0 listens on MASTER_ADDR:MASTER_PORT,
// the others connect with retries; frames carry a magic, a version, the
// world size and a job token, so that a stranger is refused) or, when
// MOECAST_RENDEZVOUS_DIR names a directory that every rank sees, over files
// there (rank 0 writes atomically, the others poll). Every wait has a
// timeout; a rank that never comes or dies makes the others fail with one
// line naming the missing rank(s) and the timeout.
//
// The package uses the standard library only and runs without a GPU: its
// tests use goroutines and child processes as ranks over loopback TCP and
// temporary directories.
package rendezvous

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Launcher names what started the process.
type Launcher string

// The launchers FromEnv recognises.
const (
	Single   Launcher = "single"   // no launcher: one process, rank 0 of 1
	Torchrun Launcher = "torchrun" // torchrun / torch.distributed.run (and anything that sets RANK, WORLD_SIZE)
	Srun     Launcher = "srun"     // Slurm
	Mpirun   Launcher = "mpirun"   // Open MPI
)

// DefaultPort is rank 0's port when the environment names none (torchrun's
// default MASTER_PORT).
const DefaultPort = 29500

// Env is this process's place in the job.
type Env struct {
	Launcher Launcher
	// Rank is this process's rank in [0, World).
	Rank, World int
	// LocalRank is the rank among the processes of this node (the GPU it
	// drives), in [0, LocalWorld); LocalWorld is 0 when the launcher does
	// not say.
	LocalRank, LocalWorld int
	// MasterAddr and MasterPort are where rank 0 listens (TCP). Empty
	// MasterAddr with Dir set: the file rendezvous needs no address.
	MasterAddr string
	MasterPort int
	// Dir is a directory every rank sees (MOECAST_RENDEZVOUS_DIR): when
	// set, the exchange goes through files there instead of TCP.
	Dir string
	// Token identifies the job: ranks of another job (or another program
	// on the port) are refused. MOECAST_JOB_TOKEN, else the launcher's job
	// id (TORCHELASTIC_RUN_ID, SLURM_JOB_ID.SLURM_STEP_ID, OMPI's job id),
	// else the master address, port and world size.
	Token string
}

// Multi reports whether the job has more than one process.
func (e Env) Multi() bool { return e.World > 1 }

// String is "rank 2 of 4 (torchrun, local rank 2)".
func (e Env) String() string {
	return fmt.Sprintf("rank %d of %d (%s, local rank %d)", e.Rank, e.World, e.Launcher, e.LocalRank)
}

// Addr is rank 0's TCP address, host:port.
func (e Env) Addr() string { return joinHostPort(e.MasterAddr, e.MasterPort) }

func joinHostPort(h string, p int) string {
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		return "[" + h + "]:" + strconv.Itoa(p)
	}
	return h + ":" + strconv.Itoa(p)
}

// EnvError is an inconsistent or incomplete launcher environment.
type EnvError struct {
	Launcher Launcher
	Msg      string
}

func (e *EnvError) Error() string {
	return fmt.Sprintf("rendezvous: %s environment: %s", e.Launcher, e.Msg)
}

type envReader struct {
	get func(string) string
	l   Launcher
	err error
}

func (r *envReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = &EnvError{Launcher: r.l, Msg: fmt.Sprintf(format, args...)}
	}
}

// int reads a non-negative integer variable; def when unset (required:
// an error).
func (r *envReader) int(name string, required bool, def int) int {
	v := strings.TrimSpace(r.get(name))
	if v == "" {
		if required {
			r.fail("%s is not set", name)
		}
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		r.fail("%s=%q is not a non-negative integer", name, v)
		return def
	}
	return n
}

// first returns the first set variable of names and its name.
func (r *envReader) first(names ...string) (string, string) {
	for _, n := range names {
		if v := strings.TrimSpace(r.get(n)); v != "" {
			return v, n
		}
	}
	return "", ""
}

// FromEnv reads this process's rank from the environment (getenv is
// os.Getenv outside tests). torchrun's RANK wins over Open MPI's and
// Slurm's variables (torchrun may run under srun); Open MPI's over Slurm's
// (mpirun inside an allocation). MOECAST_MASTER_ADDR and
// MOECAST_MASTER_PORT override the master address and port of every
// launcher; under torchrun, when its agent's store already holds
// MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True), rank 0 listens on
// MASTER_PORT+1. Inconsistent values (a rank not below the world size, a
// missing master address with several ranks, a malformed number) are an
// *EnvError naming the variables.
func FromEnv(getenv func(string) string) (Env, error) {
	r := &envReader{get: getenv}
	e := Env{Launcher: Single, World: 1}
	switch {
	case strings.TrimSpace(r.get("RANK")) != "" || strings.TrimSpace(r.get("WORLD_SIZE")) != "":
		r.l, e.Launcher = Torchrun, Torchrun
		e.Rank = r.int("RANK", true, 0)
		e.World = r.int("WORLD_SIZE", true, 1)
		e.LocalWorld = r.int("LOCAL_WORLD_SIZE", false, 0)
		def := e.Rank
		if e.LocalWorld > 0 {
			def = e.Rank % e.LocalWorld
		}
		e.LocalRank = r.int("LOCAL_RANK", false, def)
		e.MasterAddr, _ = r.first("MOECAST_MASTER_ADDR", "MASTER_ADDR")
		e.MasterPort = r.int(portVar(r, "MASTER_PORT"), false, DefaultPort)
		// torchrun's agent may share its own TCPStore with the workers on
		// MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True): rank 0 then
		// listens on the next port.
		if r.get("MOECAST_MASTER_PORT") == "" && strings.EqualFold(r.get("TORCHELASTIC_USE_AGENT_STORE"), "true") {
			e.MasterPort++
		}
		e.Token, _ = r.first("MOECAST_JOB_TOKEN", "TORCHELASTIC_RUN_ID")
	case r.get("OMPI_COMM_WORLD_RANK") != "" || r.get("OMPI_COMM_WORLD_SIZE") != "":
		r.l, e.Launcher = Mpirun, Mpirun
		e.Rank = r.int("OMPI_COMM_WORLD_RANK", true, 0)
		e.World = r.int("OMPI_COMM_WORLD_SIZE", true, 1)
		e.LocalRank = r.int("OMPI_COMM_WORLD_LOCAL_RANK", false, 0)
		e.LocalWorld = r.int("OMPI_COMM_WORLD_LOCAL_SIZE", false, 0)
		e.MasterAddr, _ = r.first("MOECAST_MASTER_ADDR", "MASTER_ADDR")
		e.MasterPort = r.int(portVar(r, "MASTER_PORT"), false, DefaultPort)
		e.Token, _ = r.first("MOECAST_JOB_TOKEN", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid")
	case r.get("SLURM_PROCID") != "":
		r.l, e.Launcher = Srun, Srun
		e.Rank = r.int("SLURM_PROCID", true, 0)
		ntasks, _ := r.first("SLURM_NTASKS", "SLURM_NPROCS")
		if ntasks == "" {
			r.fail("SLURM_PROCID is set but SLURM_NTASKS is not")
		} else {
			e.World = r.int(firstSet(r, "SLURM_NTASKS", "SLURM_NPROCS"), true, 1)
		}
		e.LocalRank = r.int("SLURM_LOCALID", false, 0)
		node := -1
		if id, err := strconv.Atoi(strings.TrimSpace(r.get("SLURM_NODEID"))); err == nil {
			node = id
		}
		if n := perNode(r.get("SLURM_TASKS_PER_NODE"), node); n > 0 {
			e.LocalWorld = n
		}
		e.MasterAddr, _ = r.first("MOECAST_MASTER_ADDR", "MASTER_ADDR")
		if e.MasterAddr == "" {
			list, name := r.first("SLURM_STEP_NODELIST", "SLURM_NODELIST", "SLURM_JOB_NODELIST")
			if list != "" {
				h, err := FirstHost(list)
				if err != nil {
					r.fail("%s: %v", name, err)
				}
				e.MasterAddr = h
			}
		}
		job := r.get("SLURM_JOB_ID")
		step := r.get("SLURM_STEP_ID")
		// The port: MASTER_PORT, else one derived from the job and step
		// ids, so that two jobs on a node do not meet.
		def := DefaultPort
		if id, err := strconv.Atoi(job); err == nil {
			s, _ := strconv.Atoi(step)
			def = 20000 + (id*7+s)%20000
		}
		e.MasterPort = r.int(portVar(r, "MASTER_PORT"), false, def)
		e.Token, _ = r.first("MOECAST_JOB_TOKEN")
		if e.Token == "" && job != "" {
			e.Token = "slurm-" + job + "." + step
		}
	default:
		return Env{Launcher: Single, World: 1, LocalWorld: 1}, nil
	}
	e.Dir, _ = r.first("MOECAST_RENDEZVOUS_DIR")
	if r.err != nil {
		return Env{}, r.err
	}
	if err := e.check(); err != nil {
		return Env{}, err
	}
	if e.Token == "" {
		e.Token = fmt.Sprintf("%s-%s-%d", e.MasterAddr, strconv.Itoa(e.MasterPort), e.World)
	}
	return e, nil
}

// portVar is MOECAST_MASTER_PORT when set, else name.
func portVar(r *envReader, name string) string {
	if r.get("MOECAST_MASTER_PORT") != "" {
		return "MOECAST_MASTER_PORT"
	}
	return name
}

func firstSet(r *envReader, names ...string) string {
	_, n := r.first(names...)
	return n
}

// perNode reads SLURM_TASKS_PER_NODE ("2(x3),1": three nodes of 2 tasks,
// then one of 1) for node (SLURM_NODEID): its count, or the most of any
// node when node is out of range; 0 when the list does not parse.
func perNode(s string, node int) int {
	var counts []int
	for _, item := range strings.Split(strings.TrimSpace(s), ",") {
		n, rep := item, "1"
		if i := strings.IndexByte(item, '('); i >= 0 {
			n, rep = item[:i], strings.TrimSuffix(strings.TrimPrefix(item[i:], "(x"), ")")
		}
		c, err := strconv.Atoi(n)
		k, kerr := strconv.Atoi(rep)
		if err != nil || kerr != nil || c <= 0 || k <= 0 || k > 1<<16 {
			return 0
		}
		for ; k > 0; k-- {
			counts = append(counts, c)
		}
	}
	if node >= 0 && node < len(counts) {
		return counts[node]
	}
	return slices.Max(counts)
}

func (e Env) check() error {
	bad := func(format string, args ...any) error {
		return &EnvError{Launcher: e.Launcher, Msg: fmt.Sprintf(format, args...)}
	}
	names := map[Launcher][2]string{
		Torchrun: {"RANK", "WORLD_SIZE"}, Srun: {"SLURM_PROCID", "SLURM_NTASKS"},
		Mpirun: {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
	}[e.Launcher]
	switch {
	case e.World < 1:
		return bad("%s=%d: want at least 1", names[1], e.World)
	case e.Rank >= e.World:
		return bad("%s=%d is not below %s=%d", names[0], e.Rank, names[1], e.World)
	case e.LocalWorld > 0 && e.LocalRank >= e.LocalWorld:
		return bad("local rank %d is not below the local world size %d", e.LocalRank, e.LocalWorld)
	case e.MasterPort < 1 || e.MasterPort > 65535:
		return bad("master port %d: want 1-65535", e.MasterPort)
	case e.World > 1 && e.MasterAddr == "" && e.Dir == "":
		switch e.Launcher {
		case Mpirun:
			return bad("%d ranks but rank 0's address is unknown: set MOECAST_MASTER_ADDR (or MASTER_ADDR) to rank 0's host, or MOECAST_RENDEZVOUS_DIR to a shared directory", e.World)
		case Srun:
			return bad("%d ranks but no SLURM_STEP_NODELIST, SLURM_NODELIST or MASTER_ADDR names rank 0's host (or set MOECAST_RENDEZVOUS_DIR)", e.World)
		default:
			return bad("%d ranks but MASTER_ADDR is not set (or set MOECAST_RENDEZVOUS_DIR)", e.World)
		}
	}
	return nil
}

// FirstHost returns the first host of a Slurm node list, compressed or
// not: "gpu[01-04,07]" -> "gpu01", "a1,a2" -> "a1", "rack[1-2]-n[3-4]" ->
// "rack1-n3".
func FirstHost(list string) (string, error) {
	list = strings.TrimSpace(list)
	if list == "" {
		return "", fmt.Errorf("empty node list")
	}
	// The first top-level item: up to a comma outside brackets.
	depth, end := 0, len(list)
	for i, c := range list {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
			if depth < 0 {
				return "", fmt.Errorf("node list %q: unbalanced ']'", list)
			}
		case ',':
			if depth == 0 && end == len(list) {
				end = i
			}
		}
	}
	if depth != 0 {
		return "", fmt.Errorf("node list %q: unbalanced '['", list)
	}
	item := list[:end]
	var b strings.Builder
	for item != "" {
		i := strings.IndexByte(item, '[')
		if i < 0 {
			b.WriteString(item)
			break
		}
		b.WriteString(item[:i])
		j := strings.IndexByte(item[i:], ']')
		inner := item[i+1 : i+j]
		first := inner
		if k := strings.IndexByte(first, ','); k >= 0 {
			first = first[:k]
		}
		if k := strings.IndexByte(first, '-'); k >= 0 {
			first = first[:k]
		}
		if first == "" || strings.Trim(first, "0123456789") != "" {
			return "", fmt.Errorf("node list %q: range %q is not numeric", list, inner)
		}
		b.WriteString(first)
		item = item[i+j+1:]
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("node list %q: no host", list)
	}
	return b.String(), nil
}
