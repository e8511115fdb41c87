package comm

import "github.com/moecast/moecast/internal/unit"

// Link is a point-to-point path one GPU's data crosses to another
// instance: a KV-cache transfer between disaggregated prefill and decode
// instances. BW is per GPU and direction (each GPU of the sending
// instance sends its own share over its own link); Latency is the fixed
// cost of one transfer.
type Link struct {
	Name    string
	BW      unit.BytesPerSecond
	Latency unit.Seconds
	Source  string
}

// nics are the network presets, one NIC per GPU as on HGX H100/H200/B200
// nodes (8 ConnectX-7 or ConnectX-8 per node). BW is the nominal line
// rate (200/400/800 Gb/s = 25/50/100 GB/s); Latency is an RDMA transfer's
// setup and one switch hop, taken as 5 us for InfiniBand and 10 us for
// RoCE: an assumption, not a measurement (no table here).
var nics = []Link{
	{Name: "ib-200", BW: 25 * unit.GBps, Latency: 5 * unit.Microsecond, Source: "InfiniBand HDR 200 Gb/s line rate; latency assumed"},
	{Name: "ib-400", BW: 50 * unit.GBps, Latency: 5 * unit.Microsecond, Source: "InfiniBand NDR 400 Gb/s line rate; latency assumed"},
	{Name: "ib-800", BW: 100 * unit.GBps, Latency: 5 * unit.Microsecond, Source: "InfiniBand XDR 800 Gb/s line rate; latency assumed"},
	{Name: "roce-200", BW: 25 * unit.GBps, Latency: 10 * unit.Microsecond, Source: "RoCE 200 Gb/s line rate; latency assumed"},
	{Name: "roce-400", BW: 50 * unit.GBps, Latency: 10 * unit.Microsecond, Source: "RoCE 400 Gb/s line rate; latency assumed"},
	{Name: "roce-800", BW: 100 * unit.GBps, Latency: 10 * unit.Microsecond, Source: "RoCE 800 Gb/s line rate; latency assumed"},
}

// LookupLink returns the link called name: a NIC preset, or a fabric
// preset (inside one node: its per-GPU bandwidth and hop latency).
func LookupLink(name string) (Link, bool) {
	for _, l := range nics {
		if l.Name == name {
			return l, true
		}
	}
	if f, ok := LookupFabric(name); ok {
		return Link{Name: f.Name, BW: f.BW, Latency: f.Latency, Source: "fabric preset " + f.Name + " (per GPU, one direction)"}, true
	}
	return Link{}, false
}

// LinkNames lists the fabric presets, then the NIC presets.
func LinkNames() []string {
	names := FabricNames()
	for _, l := range nics {
		names = append(names, l.Name)
	}
	return names
}

// LookupNIC returns the NIC preset called name.
func LookupNIC(name string) (Link, bool) {
	for _, l := range nics {
		if l.Name == name {
			return l, true
		}
	}
	return Link{}, false
}

// NICNames lists the NIC presets.
func NICNames() []string {
	names := make([]string, len(nics))
	for i, l := range nics {
		names[i] = l.Name
	}
	return names
}
