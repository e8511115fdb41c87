package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// configLayout is one parallel layout of the configs part on 8 GPUs.
type configLayout struct {
	name        string
	tp, dp, ep  int
	dpAttention bool
	sglangOnly  bool
}

var configLayouts = []configLayout{
	{name: "tp8", tp: 8, dp: 1, ep: 1},
	{name: "tp8-ep8", tp: 8, dp: 1, ep: 8},
	{name: "tp1-dp8-dpa-ep8", tp: 1, dp: 8, ep: 8, dpAttention: true, sglangOnly: true},
}

// configSweep runs every model config of src x engine x layout on 8x
// h200-sxm at 1k/1k C=64 and lists the skip reasons by class.
func configSweep(w io.Writer, bin, dir, src string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	names, err := filepath.Glob(filepath.Join(src, "*config.json"))
	if err != nil {
		return err
	}
	var man bytes.Buffer
	man.WriteString("[[source]]\nname = \"h200sweep\"\norigin = \"bench/h200sweep\"\nlicense = \"n/a\"\nmapping = \"synthetic rows\"\n")
	n := 0
	models := 0
	for _, p := range names {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		base := filepath.Base(p)
		if err := writeFile(filepath.Join(dir, "cfg", base), data); err != nil {
			return err
		}
		if strings.HasSuffix(base, "hf_quant_config.json") {
			continue
		}
		models++
		model := strings.TrimSuffix(base, "_config.json")
		for _, engine := range []string{"vllm", "sglang"} {
			for _, l := range configLayouts {
				if l.sglangOnly && engine != "sglang" {
					continue
				}
				name := fmt.Sprintf("%s/%s/%s", model, engine, l.name)
				sc := fmt.Sprintf("name = %q\n\n[model]\nconfig = \"../cfg/%s\"\n\n[hardware]\ngpu = \"h200-sxm\"\ngpus = 8\ncalibration = \"embedded\"\n\n"+
					"[parallel]\ntp = %d\ndp = %d\nep = %d\ndp_attention = %v\n\n[runtime]\nengine = %q\n",
					name, base, l.tp, l.dp, l.ep, l.dpAttention, engine)
				scPath := fmt.Sprintf("sc/%d.toml", n)
				resPath := fmt.Sprintf("results/%d.csv", n)
				dp := 1
				if l.dpAttention {
					dp = l.dp
				}
				row := fmt.Sprintf("id,silicon_data_source,backend,model_path,system,mode,isl,osl,batch_size,tp_size,pp_size,attention_dp_size,moe_tp_size,moe_ep_size,silicon_ttft_ms,silicon_tpot_ms\n"+
					"h200sweep_cfg_%d,silicon_concurrency=64,%s,%s,h200_sxm,agg,1024,1024,%d,%d,1,%d,1,%d,%d,%d\n",
					n, engine, model, 64/dp, l.tp, dp, l.ep, 1000000+n, 100000+n)
				if err := writeFile(filepath.Join(dir, scPath), []byte(sc)); err != nil {
					return err
				}
				if err := writeFile(filepath.Join(dir, resPath), []byte(row)); err != nil {
					return err
				}
				fmt.Fprintf(&man, "\n[[entry]]\nname = %q\nsource = \"h200sweep\"\nscenario = %q\nresults = [%q]\nformat = \"aiconfigurator\"\ngpu = \"h200_sxm\"\nmodel = %q\nengine = %q\n",
					name, scPath, resPath, model, engine)
				n++
			}
		}
	}
	if err := writeFile(filepath.Join(dir, "manifest.toml"), man.Bytes()); err != nil {
		return err
	}
	rows, err := runCorpus(bin, dir)
	if err != nil {
		return err
	}
	byReason := map[string][]string{}
	clean := 0
	for _, r := range rows {
		c := ""
		switch ttft, tpot := r.mean("ttft"), r.mean("tpot"); {
		case r.Skip != "":
			c = reasonClass(r.Skip)
		case !(ttft > 0 && tpot > 0) || math.IsInf(ttft, 0) || math.IsInf(tpot, 0):
			c = fmt.Sprintf("non-finite or zero prediction (ttft %v, tpot %v)", ttft, tpot)
		default:
			clean++
			continue
		}
		byReason[c] = append(byReason[c], r.Entry)
	}
	fmt.Fprintf(w, "\n# configs on 8x h200-sxm: %d models, %d scenarios (1k/1k C=64), %d simulated\n", models, n, clean)
	classes := sortedKeys(byReason)
	sort.SliceStable(classes, func(a, b int) bool { return len(byReason[classes[a]]) > len(byReason[classes[b]]) })
	for _, c := range classes {
		list := byReason[c]
		sort.Strings(list)
		fmt.Fprintf(w, "\n## %s: %d\n", c, len(list))
		for i, e := range list {
			if i == 20 {
				fmt.Fprintf(w, "  ... %d more\n", len(list)-i)
				break
			}
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	return nil
}
