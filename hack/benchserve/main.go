// Command benchserve measures `opm serve` as a catalog pod runs it: the
// wall time from process start until the gRPC health check answers
// SERVING, cold (no cache) and with a pre-built cache; the process's
// memory (VmRSS, its RssAnon part, and VmHWM) after a full ListBundles; and a load test in
// which concurrent clients mix GetBundle, GetBundleForChannel, GetPackage
// and ListBundles (-mix), run against each binary in turn (-load-runs
// rounds, interleaved), with the size of the answers received.
//
// Build opm first (go build -o bin/opm ./cmd/opm), then:
//
//	go run ./hack/benchserve -opm bin/opm -catalog /tmp/bench-large
//
// Each start-up is measured -runs times; the table shows the best, median
// and worst run, because machines shared with other work make single runs
// noisy. Several binaries (-opm ours=bin/opm,upstream=/path/to/opm) are
// measured in the same run, their start-ups interleaved so that each sees
// the same load.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/stats"

	"github.com/fastopm/fastopm/internal/procstat"
	"github.com/fastopm/fastopm/pkg/api"
)

func main() {
	var (
		opm     = flag.String("opm", "bin/opm", "opm binaries to measure, comma-separated, each optionally as LABEL=PATH; their runs are interleaved")
		catalog = flag.String("catalog", "/tmp/bench-large", "catalog directory")
		runs    = flag.Int("runs", 3, "start-ups measured per mode and binary")
		modes   = flag.String("modes", "cold,warm", "start-up modes to measure: cold (no cache), warm (pre-built cache); "+
			"warm-http (pre-built cache without the JSON lines, served with --http-addr: they are derived at start) and "+
			"warm-http-lines (built with --cache-http, served with --http-addr) for opms that serve HTTP")
		load    = flag.Duration("load", 10*time.Second, "duration of each load test phase (0 skips the load test)")
		clients = flag.Int("clients", 50, "concurrent clients of the load test")
		mix     = flag.String("mix", "GetBundle=45,GetPackage=45,ListBundles=10", "the load test's calls, OP=WEIGHT,... of "+strings.Join(opNames[:], ", ")+
			"; phases separated by ';' run one after the other against the same server (an OP alone is weight 1)")
		loadRuns = flag.Int("load-runs", 1, "load test rounds; each round starts every binary afresh in the last mode and loads it, binaries interleaved")
		timeout  = flag.Duration("timeout", 2*time.Minute, "give up on a start-up after this long")
	)
	flag.Parse()
	phases, err := parseMix(*mix)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchserve: -mix:", err)
		os.Exit(2)
	}
	lt := loadSpec{d: *load, clients: *clients, phases: phases, runs: *loadRuns}
	if err := run(strings.Split(*opm, ","), *catalog, *runs, strings.Split(*modes, ","), lt, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "benchserve:", err)
		os.Exit(1)
	}
}

// startup is one measured start.
type startup struct {
	serving   time.Duration
	cpu       time.Duration // user+system CPU of the process at SERVING
	listBytes int64
	listCount int
	listTime  time.Duration
	rss, hwm  int64 // KiB
	anon      int64 // KiB: RssAnon, VmRSS without the binary's and other files' pages
}

// binary is an opm under test.
type binary struct{ label, path string }

func run(opms []string, catalog string, runs int, modes []string, lt loadSpec, timeout time.Duration) error {
	var bins []binary
	for _, o := range opms {
		label, path, ok := strings.Cut(o, "=")
		if !ok {
			label, path = filepath.Base(o), o
		}
		path, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("%w (build it: go build -o bin/opm ./cmd/opm)", err)
		}
		bins = append(bins, binary{label, path})
		fmt.Printf("opm %s: %s\n", label, path)
	}
	size, files, err := dirSize(catalog)
	if err != nil {
		return err
	}
	fmt.Printf("catalog %s: %d files, %.1f MB\n\n", catalog, files, float64(size)/1e6)

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "opm\tmode\truns\tSERVING best\tmedian\tworst\tCPU best\tmedian\tListBundles\tmsgs\tMB\tVmRSS MiB\tRssAnon MiB\tVmHWM MiB\t")
	var lastArgs [][]string
	for _, mode := range modes {
		args := make([][]string, len(bins))
		for bi, b := range bins {
			switch mode {
			case "cold":
				args[bi] = []string{"serve", catalog, "-t", os.DevNull}
			case "warm", "warm-http", "warm-http-lines":
				dir, err := os.MkdirTemp("", "benchserve-cache-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				build := []string{"serve", catalog, "--cache-dir", dir, "--cache-only", "-t", os.DevNull}
				if mode == "warm-http-lines" {
					build = append(build, "--cache-http")
				}
				start := time.Now()
				out, err := exec.Command(b.path, build...).CombinedOutput()
				if err != nil {
					return fmt.Errorf("%s: build cache: %v\n%s", b.label, err, out)
				}
				fmt.Printf("%s %s: cache build (%s): %v, %.1f MB on disk\n", b.label, mode, strings.Join(slices.Concat(build[4:5], build[7:]), " "),
					time.Since(start).Round(time.Millisecond), float64(mustSize(dir))/1e6)
				args[bi] = []string{"serve", catalog, "--cache-dir", dir, "-t", os.DevNull}
				if mode != "warm" {
					args[bi] = append(args[bi], "--http-addr", "127.0.0.1:0")
				}
			default:
				return fmt.Errorf("unknown mode %q", mode)
			}
		}
		lastArgs = args
		results := make([][]startup, len(bins))
		for i := range runs {
			for bi, b := range bins { // interleaved: every binary sees the same load
				res, _, _, err := measure(b.path, args[bi], timeout, false)
				if err != nil {
					return fmt.Errorf("%s %s run %d: %w", b.label, mode, i+1, err)
				}
				results[bi] = append(results[bi], res)
			}
		}
		for bi, b := range bins {
			rs := results[bi]
			serving := sortedBy(rs, func(r startup) time.Duration { return r.serving })
			cpu := sortedBy(rs, func(r startup) time.Duration { return r.cpu })
			best := slices.MinFunc(rs, func(a, b startup) int { return int(a.serving - b.serving) })
			maxRSS := slices.MaxFunc(rs, func(a, b startup) int { return int(a.rss - b.rss) })
			maxHWM := slices.MaxFunc(rs, func(a, b startup) int { return int(a.hwm - b.hwm) })
			maxAnon := slices.MaxFunc(rs, func(a, b startup) int { return int(a.anon - b.anon) })
			fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%v\t%v\t%v\t%v\t%v\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", b.label, mode, runs,
				serving[0].Round(time.Millisecond), serving[len(serving)/2].Round(time.Millisecond), serving[len(serving)-1].Round(time.Millisecond),
				cpu[0].Round(10*time.Millisecond), cpu[len(cpu)/2].Round(10*time.Millisecond),
				best.listTime.Round(time.Millisecond), best.listCount, float64(best.listBytes)/1e6,
				float64(maxRSS.rss)/1024, float64(maxAnon.anon)/1024, float64(maxHWM.hwm)/1024)
		}
	}
	tw.Flush()
	fmt.Println("(CPU: user+system time of the process when it answered SERVING;")
	fmt.Println(" VmRSS and RssAnon after a full ListBundles, and VmHWM: the largest over the runs;")
	fmt.Println(" RssAnon is VmRSS without the pages of the binary, shared and clean;")
	fmt.Println(" ListBundles MB: the protobuf bytes of the stream's messages)")

	if lt.d <= 0 || lastArgs == nil {
		return nil
	}
	for round := range lt.runs {
		for bi, b := range bins {
			_, addr, cmd, err := measure(b.path, lastArgs[bi], timeout, true)
			if err != nil {
				return fmt.Errorf("%s load round %d: %w", b.label, round+1, err)
			}
			fmt.Printf("\nload test, %s, round %d: %d clients for %v a phase, %s\n", b.label, round+1, lt.clients, lt.d, modes[len(modes)-1])
			err = loadTest(addr, lt, cmd.Process.Pid)
			if serr := stop(cmd); err == nil && serr != nil {
				err = fmt.Errorf("graceful stop: %w", serr)
			}
			if err != nil {
				return fmt.Errorf("%s load round %d: %w", b.label, round+1, err)
			}
		}
	}
	fmt.Println("\n(answer KB: the protobuf bytes of an answer, a whole stream for ListBundles, in kB of 1,000")
	fmt.Println(" bytes, averaged over the calls made, with the standard error of that mean; VmHWM: the")
	fmt.Println(" server's peak RSS since its start)")
	return nil
}

// sortedBy returns f of every result, sorted.
func sortedBy(rs []startup, f func(startup) time.Duration) []time.Duration {
	out := make([]time.Duration, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	slices.Sort(out)
	return out
}

// measure starts opm, waits for SERVING, lists every bundle and reads the
// process's memory. The process is stopped (SIGTERM, exit status 0
// expected) unless keep is set.
func measure(opm string, args []string, timeout time.Duration, keep bool) (startup, string, *exec.Cmd, error) {
	port, err := freePort()
	if err != nil {
		return startup{}, "", nil, err
	}
	cmd := exec.Command(opm, append(args, "-p", port)...)
	cmd.Stderr = &tail{max: 4096}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return startup{}, "", nil, err
	}
	addr := "127.0.0.1:" + port
	var res startup
	fail := func(err error) (startup, string, *exec.Cmd, error) {
		stop(cmd)
		return startup{}, "", nil, fmt.Errorf("%w\nopm stderr: %s", err, cmd.Stderr)
	}
	if res.serving, err = waitServing(addr, start, timeout); err != nil {
		return fail(err)
	}
	if res.cpu, err = cpuTime(cmd.Process.Pid); err != nil {
		return fail(err)
	}
	conn, err := dial(addr)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	t0 := time.Now()
	bundles, n, err := listBundles(context.Background(), api.NewRegistryClient(conn))
	if err != nil {
		return fail(fmt.Errorf("ListBundles: %w", err))
	}
	res.listTime, res.listCount, res.listBytes = time.Since(t0), len(bundles), n
	if res.rss, res.hwm, res.anon, err = memory(cmd.Process.Pid); err != nil {
		return fail(err)
	}
	if keep {
		return res, addr, cmd, nil
	}
	if err := stop(cmd); err != nil {
		return fail(fmt.Errorf("graceful stop: %w", err))
	}
	return res, addr, nil, nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

// waitServing polls the health service until it answers SERVING. The
// client retries connections every few milliseconds (gRPC's default
// backoff would wait a second after the first refused connection).
func waitServing(addr string, start time.Time, timeout time.Duration) (time.Duration, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 2 * time.Millisecond, Multiplier: 1, MaxDelay: 2 * time.Millisecond},
			MinConnectTimeout: time.Second,
		}))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	for time.Since(start) < timeout {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: "Registry"})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return time.Since(start), nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, fmt.Errorf("not SERVING after %v", timeout)
}

// listBundles reads the whole ListBundles stream; it returns the bundles'
// (package, channel, name) and the protobuf bytes of the messages received
// (c must be a connection of dial, which counts them).
func listBundles(ctx context.Context, c api.RegistryClient) ([][3]string, int64, error) {
	var n int64
	ctx = context.WithValue(ctx, receivedKey{}, &n)
	stream, err := c.ListBundles(ctx, &api.ListBundlesRequest{})
	if err != nil {
		return nil, 0, err
	}
	var out [][3]string
	for {
		b, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, n, nil
		}
		if err != nil {
			return nil, 0, err
		}
		out = append(out, [3]string{b.GetPackageName(), b.GetChannelName(), b.GetCsvName()})
	}
}

// dial connects to a server with a client that counts the bytes received
// (see received).
func dial(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithStatsHandler(received{}))
}

// receivedKey is the context key of a call's *int64 byte count.
type receivedKey struct{}

// received is a client stats handler that adds the length of every
// message a call receives, as sent on the wire without its 5-byte gRPC
// prefix (the protobuf bytes; the servers here do not compress), to the
// *int64 of the call's context under receivedKey. The length is the
// message's, not its decoded fields': what the server sent.
type received struct{}

func (received) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (received) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if p, ok := s.(*stats.InPayload); ok {
		if n, ok := ctx.Value(receivedKey{}).(*int64); ok {
			*n += int64(p.Length)
		}
	}
}
func (received) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (received) HandleConn(context.Context, stats.ConnStats)                       {}

// memory reads VmRSS, VmHWM and RssAnon (KiB) from /proc/PID/status.
func memory(pid int) (rss, hwm, anon int64, err error) {
	st, err := procstat.Status(pid)
	if err != nil {
		return 0, 0, 0, err
	}
	return st["VmRSS"], st["VmHWM"], st["RssAnon"], nil
}

// cpuTime reads the user and system CPU time of a process from
// /proc/PID/stat (in clock ticks of 10ms, the Linux default).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces; the fields after it are fixed.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// stop sends SIGTERM and waits; it reports a non-zero exit.
func stop(cmd *exec.Cmd) error {
	if cmd.ProcessState != nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return errors.New("did not stop within 30s of SIGTERM")
	}
}

// The load test's calls.
const (
	opGetBundle = iota
	opGetBundleForChannel
	opGetPackage
	opListBundles
	numOps
)

var opNames = [numOps]string{"GetBundle", "GetBundleForChannel", "GetPackage", "ListBundles"}

// loadSpec is the load test: phases run one after the other, each for d,
// with clients concurrent clients; runs rounds over the binaries.
type loadSpec struct {
	d       time.Duration
	clients int
	phases  [][numOps]int // the weight of each call in each phase
	runs    int
}

// parseMix reads -mix: phases separated by ';', each OP=WEIGHT,...
func parseMix(s string) ([][numOps]int, error) {
	var phases [][numOps]int
	for _, phase := range strings.Split(s, ";") {
		var w [numOps]int
		total := 0
		for _, item := range strings.Split(phase, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			name, weight, hasWeight := strings.Cut(item, "=")
			op := slices.Index(opNames[:], name)
			if op < 0 {
				return nil, fmt.Errorf("unknown call %q (want one of %s)", name, strings.Join(opNames[:], ", "))
			}
			n := 1
			if hasWeight {
				var err error
				if n, err = strconv.Atoi(weight); err != nil || n < 0 {
					return nil, fmt.Errorf("%q: the weight must be a whole number, 0 or more", item)
				}
			}
			w[op] += n
			total += n
		}
		if total == 0 {
			return nil, fmt.Errorf("phase %q has no call of weight above 0", phase)
		}
		phases = append(phases, w)
	}
	return phases, nil
}

// loadTest runs the phases of lt against the server at addr.
func loadTest(addr string, lt loadSpec, pid int) error {
	conn, err := dial(addr)
	if err != nil {
		return err
	}
	bundles, _, err := listBundles(context.Background(), api.NewRegistryClient(conn))
	conn.Close()
	if err != nil {
		return err
	}
	if len(bundles) == 0 {
		return errors.New("the catalog has no bundles")
	}
	// GetBundleForChannel asks for each channel, once.
	var channels [][2]string
	seen := map[[2]string]bool{}
	for _, b := range bundles {
		k := [2]string{b[0], b[1]}
		if !seen[k] {
			seen[k] = true
			channels = append(channels, k)
		}
	}
	for i, w := range lt.phases {
		if len(lt.phases) > 1 {
			var parts []string
			for op, n := range w {
				if n > 0 {
					parts = append(parts, fmt.Sprintf("%s=%d", opNames[op], n))
				}
			}
			fmt.Printf("phase %d: %s\n", i+1, strings.Join(parts, ","))
		}
		if err := loadPhase(addr, lt.clients, lt.d, w, bundles, channels, pid); err != nil {
			return err
		}
	}
	return nil
}

// loadPhase runs clients goroutines, each on its own connection, calling
// the operations of weights w in a loop: a client starts calls for d and
// waits for its last one. Each client draws its calls
// and their arguments from its own seeded generator, the same for every
// server, so two servers answer the same sequence of questions, each as
// far as its speed takes it; an average answer size is that of the calls
// made, and moves with how many were made (see docs/performance.md).
func loadPhase(addr string, clients int, d time.Duration, w [numOps]int, bundles [][3]string, channels [][2]string, pid int) error {
	total := 0
	for _, n := range w {
		total += n
	}
	type sample struct {
		op    int
		lat   time.Duration
		bytes int64
	}
	var (
		mu      sync.Mutex
		samples []sample
		errs    []error
		wg      sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := dial(addr)
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				return
			}
			defer conn.Close()
			c := api.NewRegistryClient(conn)
			rng := rand.New(rand.NewPCG(uint64(i), 42))
			var local []sample
			var localErrs []error
			for time.Now().Before(deadline) {
				b := bundles[rng.IntN(len(bundles))]
				ch := channels[rng.IntN(len(channels))]
				op, r := 0, rng.IntN(total)
				for r >= w[op] {
					r -= w[op]
					op++
				}
				var n int64
				ctx := context.WithValue(context.Background(), receivedKey{}, &n)
				t0 := time.Now()
				var err error
				switch op {
				case opGetBundle:
					_, err = c.GetBundle(ctx, &api.GetBundleRequest{PkgName: b[0], ChannelName: b[1], CsvName: b[2]})
				case opGetBundleForChannel:
					//lint:ignore SA1019 OLM's package server still calls the deprecated RPC.
					_, err = c.GetBundleForChannel(ctx, &api.GetBundleInChannelRequest{PkgName: ch[0], ChannelName: ch[1]})
				case opGetPackage:
					_, err = c.GetPackage(ctx, &api.GetPackageRequest{Name: b[0]})
				case opListBundles:
					_, n, err = listBundles(ctx, c)
				}
				if err != nil {
					localErrs = append(localErrs, fmt.Errorf("%s: %w", opNames[op], err))
					continue
				}
				local = append(local, sample{op, time.Since(t0), n})
			}
			mu.Lock()
			samples = append(samples, local...)
			errs = append(errs, localErrs...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	// Calls start until the deadline and are all waited for: the rates
	// are over the time until the last one ended, not d (a slow server's
	// last ListBundles ends seconds after it).
	elapsed := time.Since(start)
	rss, hwm, anon, _ := memory(pid)
	fmt.Printf("calls started for %v, the last ended after %v\n", d, elapsed.Round(10*time.Millisecond))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tcalls\tcalls/s\tp50\tp99\tMB/s\tanswer KB: mean\t± s.e.\t")
	for op := -1; op < numOps; op++ {
		if op >= 0 && w[op] == 0 {
			continue
		}
		var lats []time.Duration
		var sizes []float64
		for _, s := range samples {
			if op < 0 || s.op == op {
				lats = append(lats, s.lat)
				sizes = append(sizes, float64(s.bytes))
			}
		}
		name := "all"
		if op >= 0 {
			name = opNames[op]
		}
		if len(lats) == 0 {
			fmt.Fprintf(tw, "%s\t0\t\t\t\t\t\t\t\n", name)
			continue
		}
		slices.Sort(lats)
		mean, se := meanSE(sizes)
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%v\t%v\t%.1f\t%.1f\t%.1f\t\n", name, len(lats), float64(len(lats))/elapsed.Seconds(),
			pct(lats, 50), pct(lats, 99), mean*float64(len(sizes))/1e6/elapsed.Seconds(), mean/1e3, se/1e3)
	}
	tw.Flush()
	fmt.Printf("errors: %d; server VmRSS %.1f MiB (RssAnon %.1f MiB), VmHWM %.1f MiB after the load\n", len(errs),
		float64(rss)/1024, float64(anon)/1024, float64(hwm)/1024)
	if len(errs) > 0 {
		return fmt.Errorf("load test: %d errors, first: %w", len(errs), errs[0])
	}
	return nil
}

// meanSE returns the mean of xs and its standard error.
func meanSE(xs []float64) (mean, se float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss/float64(len(xs)-1)) / math.Sqrt(float64(len(xs)))
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	i = min(max(i-1, 0), len(sorted)-1)
	d := sorted[i]
	switch {
	case d > 10*time.Millisecond:
		return d.Round(time.Millisecond)
	case d > 10*time.Microsecond:
		return d.Round(time.Microsecond)
	}
	return d
}

func dirSize(dir string) (int64, int, error) {
	var n int64
	files := 0
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
			files++
		}
		return nil
	})
	return n, files, err
}

func mustSize(dir string) int64 {
	n, _, _ := dirSize(dir)
	return n
}

// tail keeps the last bytes written to it (a process's stderr).
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
