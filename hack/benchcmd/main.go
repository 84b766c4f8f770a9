// Command benchcmd runs a command several times and reports its wall time,
// its CPU time (user + system) and peak resident memory (from the kernel's
// rusage), for `make bench`.
//
//	go run ./hack/benchcmd -n 5 -name "validate large" -- bin/opm validate /tmp/bench-large
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 5, "runs")
	name := flag.String("name", "", "label for the report line")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: benchcmd [-n runs] [-name label] -- command args...")
		os.Exit(2)
	}
	if *name == "" {
		*name = fmt.Sprint(args)
	}
	var walls, cpus []time.Duration
	var rss []int64
	for i := 0; i < *n; i++ {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdout = io.Discard
		cmd.Stderr = os.Stderr
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", *name, err)
			os.Exit(1)
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			fmt.Fprintln(os.Stderr, "no rusage on this platform")
			os.Exit(1)
		}
		walls = append(walls, wall)
		cpus = append(cpus, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
		rss = append(rss, ru.Maxrss) // KiB on Linux
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	slices.Sort(rss)
	fmt.Printf("%-40s wall best %6.3fs median %6.3fs   CPU best %6.3fs median %6.3fs   peak RSS best %4d MB median %4d MB   (%d runs)\n",
		*name, walls[0].Seconds(), walls[len(walls)/2].Seconds(), cpus[0].Seconds(), cpus[len(cpus)/2].Seconds(),
		rss[0]/1024, rss[len(rss)/2]/1024, *n)
}
