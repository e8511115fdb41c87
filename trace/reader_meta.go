package trace

import (
	"encoding/json"
	"fmt"
)

// Meta holds the top-level fields of a torch.profiler (Kineto) trace other
// than traceEvents (schemaVersion, deviceProperties, distributedInfo, ...,
// as in the traces of testdata; vLLM adds vllm_version from
// vllm-project/vllm `vllm/profiler/wrapper.py` @ 02773ee). Kineto may write them before or after
// traceEvents, so Meta is complete only once ReadEvent has returned io.EOF.
type Meta struct {
	SchemaVersion       int
	DeviceProperties    []DeviceProperties
	Distributed         *DistributedInfo // nil when the trace has no distributedInfo
	TraceName           string
	DisplayTimeUnit     string
	BaseTimeNanoseconds int64
	VLLMVersion         string // "vllm_version", stamped by vLLM's profiler wrapper
	CUPTIVersion        json.Number
	CUDARuntimeVersion  json.Number
	CUDADriverVersion   json.Number
	ROCTracerVersion    json.Number
	HIPRuntimeVersion   json.Number

	// Other keeps the raw value of every other top-level key of at most
	// maxOtherValue bytes (e.g. "vllm_version_tuple", "record_shapes").
	Other map[string]json.RawMessage
	// Warnings lists top-level fields that were present but could not be
	// decoded into the typed fields above; the events are not affected.
	Warnings []string
}

// DeviceProperties is one element of "deviceProperties" (CUDA device
// properties as Kineto records them; ROCm traces fill fewer fields).
type DeviceProperties struct {
	ID                          int    `json:"id"`
	Name                        string `json:"name"`
	TotalGlobalMem              int64  `json:"totalGlobalMem"` // bytes
	ComputeMajor                int    `json:"computeMajor"`
	ComputeMinor                int    `json:"computeMinor"`
	NumSMs                      int    `json:"numSms"`
	WarpSize                    int    `json:"warpSize"`
	MaxThreadsPerBlock          int    `json:"maxThreadsPerBlock"`
	MaxThreadsPerMultiprocessor int    `json:"maxThreadsPerMultiprocessor"`
	RegsPerBlock                int    `json:"regsPerBlock"`
	RegsPerMultiprocessor       int    `json:"regsPerMultiprocessor"`
	SharedMemPerBlock           int64  `json:"sharedMemPerBlock"`      // bytes
	SharedMemPerBlockOptin      int64  `json:"sharedMemPerBlockOptin"` // bytes
	SharedMemPerMultiprocessor  int64  `json:"sharedMemPerMultiprocessor"`
}

// DistributedInfo is "distributedInfo": the rank of the process that wrote
// the trace and its process groups.
type DistributedInfo struct {
	Backend     string          `json:"backend"`
	Rank        int             `json:"rank"`
	WorldSize   int             `json:"world_size"`
	PGCount     int             `json:"pg_count"`
	PGConfig    []ProcessGroup  `json:"pg_config"`
	NCCLVersion string          `json:"nccl_version"`
	Raw         json.RawMessage `json:"-"`
}

// ProcessGroup is one element of distributedInfo.pg_config.
type ProcessGroup struct {
	Name          string `json:"pg_name"`
	Desc          string `json:"pg_desc"`
	BackendConfig string `json:"backend_config"`
	Size          int    `json:"pg_size"`
	Ranks         []int  `json:"ranks"`
}

// maxOtherValue bounds the raw top-level values kept in Meta.Other.
const maxOtherValue = 64 << 10

// setMeta decodes the raw value of top-level key into m. It returns a
// warning text when the value has an unexpected type.
func (m *Meta) set(key string, raw []byte) {
	var err error
	switch key {
	case "schemaVersion":
		err = json.Unmarshal(raw, &m.SchemaVersion)
	case "deviceProperties":
		err = json.Unmarshal(raw, &m.DeviceProperties)
	case "distributedInfo":
		var d DistributedInfo
		if err = json.Unmarshal(raw, &d); err == nil {
			d.Raw = append(json.RawMessage(nil), raw...)
			m.Distributed = &d
		}
	case "traceName":
		err = json.Unmarshal(raw, &m.TraceName)
	case "displayTimeUnit":
		err = json.Unmarshal(raw, &m.DisplayTimeUnit)
	case "baseTimeNanoseconds":
		err = json.Unmarshal(raw, &m.BaseTimeNanoseconds)
	case "vllm_version":
		err = json.Unmarshal(raw, &m.VLLMVersion)
	case "cupti_version":
		err = unmarshalNumber(raw, &m.CUPTIVersion)
	case "cuda_runtime_version":
		err = unmarshalNumber(raw, &m.CUDARuntimeVersion)
	case "cuda_driver_version":
		err = unmarshalNumber(raw, &m.CUDADriverVersion)
	case "roctracer_version":
		err = unmarshalNumber(raw, &m.ROCTracerVersion)
	case "hip_runtime_version":
		err = unmarshalNumber(raw, &m.HIPRuntimeVersion)
	default:
		if len(raw) <= maxOtherValue {
			if m.Other == nil {
				m.Other = map[string]json.RawMessage{}
			}
			m.Other[key] = append(json.RawMessage(nil), raw...)
		}
		return
	}
	if err != nil {
		m.Warnings = append(m.Warnings, fmt.Sprintf("top-level %q: %v", key, err))
	}
}

// unmarshalNumber accepts a JSON number or a string holding one (versions
// are written either way).
func unmarshalNumber(raw []byte, n *json.Number) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case float64:
		*n = json.Number(raw)
	case string:
		*n = json.Number(v)
	case nil:
	default:
		return fmt.Errorf("want a number, got %s", raw)
	}
	return nil
}
