// Command benchstart measures what starting opm costs in memory: the
// resident set of `opm serve` once it answers SERVING, and the largest
// resident set `opm validate` and `opm version` reach, split into RssAnon
// (heap, stacks: the process's own pages) and RssFile (the binary's pages,
// clean and shared with every other opm process), for several binaries in
// the same run, their runs interleaved.
//
//	go run ./hack/benchstart -opm old=/tmp/opm-1122,new=bin/opm -catalog testdata/example
//
// serve is started on -catalog (no cache) and read from /proc/PID/status
// at its first SERVING; validate and version are sampled every 0.2 ms
// while they run (the largest RssAnon and RssFile seen, which may come
// from different samples) and their peak (ru_maxrss) is the kernel's.
// Each binary is read whole before each run, so that all its pages are in
// the page cache.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/fastopm/fastopm/internal/procstat"
)

func main() {
	var (
		opms    = flag.String("opm", "bin/opm", "opm binaries, comma-separated, each optionally as LABEL=PATH")
		catalog = flag.String("catalog", "testdata/example", "catalog directory that serve and validate read")
		runs    = flag.Int("runs", 5, "runs per command and binary")
		cmds    = flag.String("commands", "serve,validate,version", "commands to measure")
	)
	flag.Parse()
	if err := run(strings.Split(*opms, ","), *catalog, *runs, strings.Split(*cmds, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "benchstart:", err)
		os.Exit(1)
	}
}

type binary struct{ label, path string }

// sample is one run's memory, KiB.
type sample struct{ anon, file, rss, hwm int64 }

func run(opms []string, catalog string, runs int, cmds []string) error {
	var bins []binary
	for _, o := range opms {
		label, p, ok := strings.Cut(o, "=")
		if !ok {
			label, p = filepath.Base(o), o
		}
		p, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		bins = append(bins, binary{label, p})
	}
	res := map[[2]string][]sample{}
	for range runs {
		for _, c := range cmds {
			for _, b := range bins {
				var s sample
				// The binary read whole first, so that all its pages are in
				// the page cache, as on a node where opm ran before: how many
				// of them the kernel maps into the process (RssFile) depends
				// on which are cached, and other work evicts some.
				if err := readWhole(b.path); err != nil {
					return err
				}
				var err error
				switch c {
				case "serve":
					s, err = serve(b.path, catalog)
				case "validate":
					s, err = sampled(b.path, "validate", catalog)
				case "version":
					s, err = sampled(b.path, "version")
				default:
					return fmt.Errorf("unknown command %q", c)
				}
				if err != nil {
					return fmt.Errorf("%s %s: %w", b.label, c, err)
				}
				res[[2]string{b.label, c}] = append(res[[2]string{b.label, c}], s)
			}
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "command\topm\truns\tRssAnon MiB min–max (median)\tRssFile MiB\tVmRSS MiB\tVmHWM MiB\t")
	for _, c := range cmds {
		for _, b := range bins {
			ss := res[[2]string{b.label, c}]
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", c, b.label, len(ss),
				spread(ss, func(s sample) int64 { return s.anon }),
				spread(ss, func(s sample) int64 { return s.file }),
				spread(ss, func(s sample) int64 { return s.rss }),
				spread(ss, func(s sample) int64 { return s.hwm }))
		}
	}
	return tw.Flush()
}

// readWhole reads the file at p to its end, a little at a time (the
// benchmark's own RSS must stay small: a child's ru_maxrss starts from its
// parent's at the fork).
func readWhole(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

func spread(ss []sample, f func(sample) int64) string {
	v := make([]int64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	mib := func(k int64) float64 { return float64(k) / 1024 }
	return fmt.Sprintf("%.1f–%.1f (%.1f)", mib(v[0]), mib(v[len(v)-1]), mib(v[len(v)/2]))
}

// serve starts opm serve and reads its memory at the first SERVING.
func serve(opm, catalog string) (sample, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return sample{}, err
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	cmd := exec.Command(opm, "serve", catalog, "-p", port)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	if err := waitServing("127.0.0.1:"+port, 60*time.Second); err != nil {
		return sample{}, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return status(cmd.Process.Pid)
}

// sampled runs opm with args, sampling its memory until it exits.
func sampled(opm string, args ...string) (sample, error) {
	cmd := exec.Command(opm, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var best sample
	for {
		select {
		case err := <-done:
			if err != nil {
				return sample{}, fmt.Errorf("%w\n%s", err, stderr.String())
			}
			best.hwm = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
			return best, nil
		default:
		}
		if s, err := status(cmd.Process.Pid); err == nil {
			best.anon, best.file, best.rss = max(best.anon, s.anon), max(best.file, s.file), max(best.rss, s.rss)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// status reads RssAnon, RssFile, VmRSS and VmHWM (KiB) from
// /proc/PID/status.
func status(pid int) (sample, error) {
	st, err := procstat.Status(pid)
	if err != nil {
		return sample{}, err
	}
	return sample{anon: st["RssAnon"], file: st["RssFile"], rss: st["VmRSS"], hwm: st["VmHWM"]}, nil
}

// waitServing polls the health service until it answers SERVING.
func waitServing(addr string, timeout time.Duration) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 2 * time.Millisecond, Multiplier: 1, MaxDelay: 2 * time.Millisecond},
			MinConnectTimeout: time.Second,
		}))
	if err != nil {
		return err
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	start := time.Now()
	for time.Since(start) < timeout {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: "Registry"})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("not SERVING after %v", timeout)
}
