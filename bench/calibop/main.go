// Command calibop runs ops of `moecast calib gpu` and writes the
// calibration file, in a binary small enough to carry to a lent device
// machine with the rest of a payload (moecast itself is 61 MB). It prints
// the device, each op's lines and report, and the elapsed time.
//
// Usage: calibop [-quick] -ops moe_fp8[,...]|all -out FILE
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/moecast/moecast/calib/campaign"
	"github.com/moecast/moecast/report"
)

func main() {
	quick := flag.Bool("quick", false, "fewer points")
	ops := flag.String("ops", "", "ops, comma separated, or all (the campaign's default)")
	out := flag.String("out", "", "calibration file to write")
	flag.Parse()
	if *ops == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "calibop: -ops and -out are required")
		os.Exit(2)
	}
	cmd := "calibop"
	if *quick {
		cmd += " -quick"
	}
	var list []string
	if *ops != "all" {
		list = strings.Split(*ops, ",")
	}
	o := campaign.Options{Quick: *quick, Ops: list, Command: cmd + " -ops " + *ops, Version: "calibop", Progress: os.Stderr}
	plan, err := campaign.NewPlan(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "calibop:", err)
		os.Exit(2)
	}
	res, err := campaign.Run(plan, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "calibop:", err)
		os.Exit(1)
	}
	fmt.Printf("%s (%s), driver %s, CUDA %s; %.1f s\n", res.Device.Name, res.Device.UUID, res.Versions.Driver, res.Versions.CUDA, res.Elapsed.Seconds())
	for _, op := range res.Outputs {
		fmt.Printf("op %s: %.1f s\n", op.Op, op.Elapsed.Seconds())
	}
	for _, op := range res.Outputs {
		for _, l := range op.Lines {
			fmt.Println(l)
		}
		if op.Report != nil {
			if err := op.Report.Render(os.Stdout, report.Text); err != nil {
				fmt.Fprintln(os.Stderr, "calibop:", err)
				os.Exit(1)
			}
		}
	}
	f, err := res.File(o, time.Now())
	if err != nil {
		fmt.Fprintln(os.Stderr, "calibop:", err)
		os.Exit(1)
	}
	if err := f.Write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "calibop:", err)
		os.Exit(1)
	}
}
