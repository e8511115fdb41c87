package kernels

// Arch is a GPU architecture as CUDA names its compute capability
// ("sm_90"): the one architecture type of moecast (a preset's GPU.Arch, a
// scenario's hardware.custom_gpu arch).
type Arch string

// The architectures of the presets.
const (
	SM80  Arch = "sm_80"  // Ampere: A100
	SM90  Arch = "sm_90"  // Hopper: H100, H200
	SM100 Arch = "sm_100" // Blackwell: B200, GB200
	SM103 Arch = "sm_103" // Blackwell Ultra: B300, GB300
	SM120 Arch = "sm_120" // Blackwell RTX: RTX PRO 6000
)

// ArchFacts is what moecast knows of an architecture beyond a preset's
// figures: which kernels the engines run on it and the efficiencies
// measured there. An architecture without a row has the zero value (the
// defaults).
type ArchFacts struct {
	// PrefillFA3: prefill attention runs FlashAttention-3 (Hopper only);
	// elsewhere FlashAttention-2's curve stands in (PrefillEfficiency).
	PrefillFA3 bool
	// MLABlockSize is the KV block size vLLM forces for MLA models on the
	// architecture's MLA backend (vllm/platforms/cuda.py,
	// CudaPlatform.check_and_update_config: "Forcing kv cache block size to
	// 64 for FlashMLA backend" on sm_90, "... to 128 for CUTLASS_MLA
	// backend" on sm_100); 0: the engine's default.
	MLABlockSize int
	// efficiency sets the architecture's measured efficiencies over
	// DefaultEfficiency (EfficiencyFor).
	efficiency func(e *Efficiency)
}

// archFacts is the architecture table.
var archFacts = [...]struct {
	arch  Arch
	facts ArchFacts
}{
	{SM90, ArchFacts{PrefillFA3: true, MLABlockSize: 64, efficiency: func(e *Efficiency) {
		e.MemMarlin = EffMemMarlinSM90
		e.ComputeMarlin = EffComputeMarlinSM90
		e.MoEFixedMarlin = MoEFixedMarlinSM90
		e.QuantGEMM = QuantGEMMSM90.WithCompute(QuantGEMMComputeSM90)
		e.ComputeGEMMVLLM = EffComputeGEMMVLLMSM90
	}}},
	{SM100, ArchFacts{MLABlockSize: 128, efficiency: func(e *Efficiency) { e.QuantGEMM = QuantGEMMSM100.WithCompute(QuantGEMMComputeSM100) }}},
	{SM103, ArchFacts{efficiency: func(e *Efficiency) { e.QuantGEMM = QuantGEMMSM103.WithCompute(QuantGEMMComputeSM103) }}},
	{SM120, ArchFacts{efficiency: func(e *Efficiency) {
		e.ComputeAttention = EffComputeAttentionSM120
		e.MemGEMMBatch = EffMemGEMMBatchSM120
		e.ComputeGEMMVLLM = EffComputeGEMMVLLMSM120
	}}},
}

// Facts is a's row of the architecture table (zero when a has none).
func (a Arch) Facts() ArchFacts {
	for i := range archFacts {
		if archFacts[i].arch == a {
			return archFacts[i].facts
		}
	}
	return ArchFacts{}
}
