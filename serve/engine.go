package serve

import "fmt"

// Engine is the serving engine whose scheduler is simulated: an index
// into engines.
type Engine uint8

const (
	VLLM   Engine = iota // vLLM V1 (vllm/v1/core/sched/scheduler.py @ b4622cf)
	SGLang               // SGLang (python/sglang/srt/managers/scheduler.py)
)

// engineRow is everything engine-specific about one engine. Adding an
// engine is one row here and one scheduler file.
type engineRow struct {
	name string // as written in scenarios and on the command line
	// scheduler makes the engine's scheduler for a validated c.
	scheduler func(c *Config) scheduler
}

// engines is the engine table, indexed by Engine.
var engines = [...]engineRow{
	VLLM:   {name: "vllm", scheduler: newVLLMScheduler},
	SGLang: {name: "sglang", scheduler: newSGLangScheduler},
}

func (e Engine) valid() bool { return int(e) < len(engines) }

func (e Engine) String() string {
	if e.valid() {
		return engines[e].name
	}
	return fmt.Sprintf("engine(%d)", uint8(e))
}

// ParseEngine maps an engine's name ("vllm", "sglang") to the Engine.
func ParseEngine(s string) (Engine, bool) {
	for i := range engines {
		if engines[i].name == s {
			return Engine(i), true
		}
	}
	return 0, false
}
