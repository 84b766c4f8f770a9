// Command benchhttp measures the HTTP side of `opm serve --http-addr` as a
// catalog pod runs it, in a separate process, from a pre-built cache (with
// the JSON lines: --cache-http; -cache-http=false derives them at start):
//
//   - /api/v1/all throughput against the baseline limit, a server that
//     only does http.ServeContent of the same JSON lines from a file (run
//     as a separate process too: this command started with -baseline),
//     without and with gzip;
//   - the time of a 304 answer to If-Modified-Since;
//   - a load test: concurrent clients mixing /api/v1/metas queries,
//     /api/v1/all downloads and gRPC calls against the one process, with
//     errors, throughput and p99 per route, and the server's memory after.
//
// Build opm first (go build -o bin/opm ./cmd/opm), then:
//
//	go run ./hack/benchhttp -opm bin/opm -catalog /tmp/bench-large
package main

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/klauspost/compress/gzhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fastopm/fastopm/internal/procstat"
	"github.com/fastopm/fastopm/pkg/api"
)

func main() {
	var (
		opm      = flag.String("opm", "bin/opm", "the opm binary")
		catalog  = flag.String("catalog", "/tmp/bench-large", "the catalog directory")
		clients  = flag.Int("clients", 50, "concurrent clients of the load test")
		duration = flag.Duration("duration", 10*time.Second, "length of the load test")
		runs     = flag.Int("runs", 5, "downloads of /api/v1/all per server and encoding")
		linesIn  = flag.Bool("cache-http", true, "build the cache with --cache-http (the JSON lines in the cache, as the 2026-11-25 figures had them); false: --cache-only alone, the lines derived from the catalog at start")
		pprofOut = flag.String("heap", "", "save the server's heap profile after the load test to this file (serves pprof on a free port)")
		baseline = flag.String("baseline", "", "internal: serve this file with http.ServeContent on -addr")
		addr     = flag.String("addr", "", "internal: the baseline's address")
	)
	flag.Parse()
	if *baseline != "" {
		if err := serveBaseline(*baseline, *addr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(*opm, *catalog, *clients, *duration, *runs, *linesIn, *pprofOut); err != nil {
		fmt.Fprintln(os.Stderr, "benchhttp:", err)
		os.Exit(1)
	}
}

// serveBaseline is the limit /api/v1/all is measured against: a server
// that serves one file with http.ServeContent (sendfile when not
// compressed), with catalogd's gzip wrapper.
func serveBaseline(file, addr string) error {
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(file)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer f.Close()
		w.Header().Add("Content-Type", "application/jsonl")
		http.ServeContent(w, r, "", st.ModTime(), f)
	})
	return http.ListenAndServe(addr, gzhttp.GzipHandler(h)) //nolint:gosec // a benchmark on loopback
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func start(name string, args ...string) (*exec.Cmd, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd, cmd.Start()
}

func stop(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func waitReady(u string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(u); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready", u)
}

func run(opm, catalog string, clients int, d time.Duration, runs int, linesIn bool, heapOut string) error {
	cacheDir, err := os.MkdirTemp("", "benchhttp-cache-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(cacheDir)
	build := exec.Command(opm, "serve", catalog, "--cache-dir", cacheDir, "--cache-only")
	if linesIn {
		build.Args = append(build.Args, "--cache-http")
	}
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("cache build: %w", err)
	}
	grpcAddr, err := freeAddr()
	if err != nil {
		return err
	}
	httpAddr, err := freeAddr()
	if err != nil {
		return err
	}
	_, port, _ := net.SplitHostPort(grpcAddr)
	args := []string{"serve", catalog, "--cache-dir", cacheDir, "-p", port, "--http-addr", httpAddr, "-t", os.DevNull}
	pprofAddr := ""
	if heapOut != "" {
		if pprofAddr, err = freeAddr(); err != nil {
			return err
		}
		args = append(args, "--pprof-addr", pprofAddr)
	}
	srv, err := start(opm, args...)
	if err != nil {
		return err
	}
	defer stop(srv)
	base := "http://" + httpAddr
	if err := waitReady(base + "/readyz"); err != nil {
		return err
	}

	// The baseline serves the same bytes from a file.
	file := filepath.Join(cacheDir, "catalog.jsonl")
	size, sum, err := download(base+"/api/v1/all", file)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	baseAddr, err := freeAddr()
	if err != nil {
		return err
	}
	bl, err := start(self, "-baseline", file, "-addr", baseAddr)
	if err != nil {
		return err
	}
	defer stop(bl)
	if err := waitReady("http://" + baseAddr + "/"); err != nil {
		return err
	}

	fmt.Printf("catalog %s: /api/v1/all is %.1f MB (sha256 %x)\n\n", catalog, float64(size)/1e6, sum[:8])
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "server\tencoding\tbest MB/s\tmedian MB/s\tbytes sent\t")
	for _, enc := range []string{"identity", "gzip"} {
		for _, s := range []struct{ name, url string }{{"opm serve", base + "/api/v1/all"}, {"ServeContent of the file", "http://" + baseAddr + "/"}} {
			rates, sent, err := throughput(s.url, enc, runs, size)
			if err != nil {
				return err
			}
			slices.Sort(rates)
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%.1f MB\t\n", s.name, enc, rates[len(rates)-1], rates[len(rates)/2], float64(sent)/1e6)
		}
	}
	tw.Flush()

	lat, err := notModified(base+"/api/v1/all", 2000)
	if err != nil {
		return err
	}
	fmt.Printf("\n304 for If-Modified-Since, 2000 requests on one connection: median %v, p99 %v, max %v\n\n",
		pct(lat, 50), pct(lat, 99), lat[len(lat)-1])

	err = loadTest(base, grpcAddr, clients, d, srv.Process.Pid, size)
	if heapOut != "" {
		if _, _, herr := download("http://"+pprofAddr+"/debug/pprof/heap", heapOut); herr != nil && err == nil {
			err = herr
		}
	}
	return err
}

// download saves the answer to file and returns its size and SHA-256.
func download(u, file string) (int64, [32]byte, error) {
	var sum [32]byte
	resp, err := http.Get(u)
	if err != nil {
		return 0, sum, err
	}
	defer resp.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		return 0, sum, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), resp.Body)
	copy(sum[:], h.Sum(nil))
	return n, sum, err
}

// throughput downloads u runs times and returns the rates in MB/s of the
// uncompressed bytes, and the bytes on the wire of one download.
func throughput(u, enc string, runs int, size int64) ([]float64, int64, error) {
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	var rates []float64
	var sent int64
	for range runs + 1 {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Accept-Encoding", enc)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return nil, 0, err
		}
		var body io.Reader = resp.Body
		if resp.Header.Get("Content-Encoding") == "gzip" {
			body = &countingReader{r: resp.Body, n: &sent}
			sent = 0
			zr, err := gzip.NewReader(body)
			if err != nil {
				return nil, 0, err
			}
			body = zr
		}
		n, err := io.Copy(io.Discard, body)
		resp.Body.Close()
		if err != nil {
			return nil, 0, err
		}
		if n != size {
			return nil, 0, fmt.Errorf("%s: %d bytes, want %d", u, n, size)
		}
		if enc == "identity" {
			sent = n
		}
		rates = append(rates, float64(n)/1e6/time.Since(start).Seconds())
	}
	return rates[1:], sent, nil // the first run warms the page cache
}

type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

func notModified(u string, n int) ([]time.Duration, error) {
	resp, err := http.Head(u)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	lm := resp.Header.Get("Last-Modified")
	var lat []time.Duration
	for range n {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("If-Modified-Since", lm)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			return nil, fmt.Errorf("If-Modified-Since: %d", resp.StatusCode)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	return lat, nil
}

func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[min(max(i-1, 0), len(sorted)-1)]
}

type sample struct {
	route string
	d     time.Duration
	bytes int64
	err   error
}

// loadTest runs clients that each loop on a random request for d.
func loadTest(base, grpcAddr string, clients int, d time.Duration, pid int, allSize int64) error {
	// What to ask for: every package, and channel names.
	resp, err := http.Get(base + "/api/v1/packages?limit=1000")
	if err != nil {
		return err
	}
	var list struct {
		Packages []struct {
			Name, DefaultChannel string
			Channels             []string
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if len(list.Packages) == 0 {
		return errors.New("no packages")
	}
	conns := make([]*grpc.ClientConn, 5)
	for i := range conns {
		if conns[i], err = grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			return err
		}
		defer conns[i].Close()
	}
	tr := &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	results := make(chan []sample, clients)
	for c := range clients {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			reg := api.NewRegistryClient(conns[c%len(conns)])
			var out []sample
			for ctx.Err() == nil {
				p := list.Packages[rng.IntN(len(list.Packages))]
				var s sample
				start := time.Now()
				switch r := rng.IntN(100); {
				case r < 60:
					q := url.Values{}
					switch rng.IntN(4) {
					case 0:
						q.Set("package", p.Name)
					case 1:
						q.Set("schema", "olm.bundle")
						q.Set("package", p.Name)
					case 2:
						q.Set("schema", "olm.package")
					default:
						q.Set("name", p.DefaultChannel)
					}
					s.route = "metas"
					s.bytes, s.err = httpGet(ctx, client, base+"/api/v1/metas?"+q.Encode(), -1)
				case r < 70:
					s.route = "all"
					s.bytes, s.err = httpGet(ctx, client, base+"/api/v1/all", allSize)
				case r < 85:
					s.route = "grpc GetPackage"
					_, s.err = reg.GetPackage(ctx, &api.GetPackageRequest{Name: p.Name})
				default:
					s.route = "grpc GetBundleForChannel"
					//lint:ignore SA1019 OLM's package server still calls it
					_, s.err = reg.GetBundleForChannel(ctx, &api.GetBundleInChannelRequest{PkgName: p.Name, ChannelName: p.DefaultChannel})
				}
				if ctx.Err() != nil {
					break // cut by the end of the test, not an error
				}
				s.d = time.Since(start)
				out = append(out, s)
			}
			results <- out
		}()
	}
	byRoute := map[string][]sample{}
	for range clients {
		for _, s := range <-results {
			byRoute[s.route] = append(byRoute[s.route], s)
		}
	}
	rss, hwm, err := memory(pid)
	if err != nil {
		return err
	}
	fmt.Printf("load test: %d clients for %v against one process (HTTP and gRPC)\n\n", clients, d)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "route\trequests\terrors\treq/s\tMB/s\tp50\tp99\tmax\t")
	routes := make([]string, 0, len(byRoute))
	for r := range byRoute {
		routes = append(routes, r)
	}
	slices.Sort(routes)
	var firstErr error
	for _, r := range routes {
		ss := byRoute[r]
		var lat []time.Duration
		var errs int
		var bytes int64
		for _, s := range ss {
			if s.err != nil {
				errs++
				if firstErr == nil {
					firstErr = fmt.Errorf("%s: %w", r, s.err)
				}
				continue
			}
			lat = append(lat, s.d)
			bytes += s.bytes
		}
		slices.Sort(lat)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f\t%v\t%v\t%v\t\n", r, len(ss), errs, float64(len(ss))/d.Seconds(),
			float64(bytes)/1e6/d.Seconds(), pct(lat, 50).Round(time.Microsecond), pct(lat, 99).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	}
	tw.Flush()
	fmt.Printf("\nserver memory after the load test: VmRSS %.1f MiB, VmHWM %.1f MiB\n", float64(rss)/(1<<20), float64(hwm)/(1<<20))
	if firstErr != nil {
		return fmt.Errorf("first error: %w", firstErr)
	}
	return nil
}

func httpGet(ctx context.Context, c *http.Client, u string, want int64) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return n, err
	}
	if resp.StatusCode != 200 {
		return n, fmt.Errorf("%s: status %d", u, resp.StatusCode)
	}
	if want >= 0 && n != want {
		return n, fmt.Errorf("%s: %d bytes, want %d", u, n, want)
	}
	return n, nil
}

// memory reads VmRSS and VmHWM of a process, in bytes.
func memory(pid int) (rss, hwm int64, err error) {
	st, err := procstat.Status(pid)
	if err != nil {
		return 0, 0, err
	}
	return st["VmRSS"] << 10, st["VmHWM"] << 10, nil
}
