// Command benchanswers measures the question routes of `opm serve
// --http-addr` under load, as issue 24 asks: many clients asking
// /api/v1/install and /api/v1/updates about every package of a catalog
// (a walk that no small cache holds), health and readiness polled
// throughout, the server's memory sampled; then how much one hard question
// delays easy ones, whether abandoned requests keep the server busy, and
// how long SIGTERM takes while a hard question runs.
//
// Build opm first (go build -o bin/opm ./cmd/opm), then:
//
//	go run ./hack/benchanswers -opm bin/opm -catalog ../shared/catalogs/certified-operators-v4.16
//
// With -hard PATH (a request path, e.g. "/api/v1/install?package=shape",
// on a catalog holding a hard package: copy the catalog and add
// `go run ./hack/shapecat -out DIR pigeonhole`'s file to it), the hard
// question is asked beside the easy ones.
package main

import (
	"context"
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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fastopm/fastopm/internal/procstat"
)

func main() {
	var (
		opm      = flag.String("opm", "bin/opm", "the opm binary")
		catalog  = flag.String("catalog", "", "the catalog directory")
		clients  = flag.Int("clients", 50, "concurrent clients of the load test")
		duration = flag.Duration("duration", 60*time.Second, "length of the load test")
		timeout  = flag.Duration("client-timeout", 10*time.Second, "each client request's timeout: a request past it is abandoned")
		hard     = flag.String("hard", "", "a hard question's request path (see the doc)")
		phase    = flag.Duration("phase", 10*time.Second, "length of each phase of the hard/easy comparison")
		heap     = flag.String("heap", "", "save the server's heap profile at the end of the load test to this file")
	)
	flag.Parse()
	if *catalog == "" {
		flag.Usage()
		os.Exit(2)
	}
	heapOut = *heap
	if err := run(*opm, *catalog, *clients, *duration, *timeout, *hard, *phase); err != nil {
		fmt.Fprintln(os.Stderr, "benchanswers:", err)
		os.Exit(1)
	}
}

// heapOut is -heap.
var heapOut string

type server struct {
	cmd   *exec.Cmd
	base  string
	pid   int
	pprof string // the pprof endpoint's base URL, with -heap
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

func start(opm, catalog string) (*server, error) {
	grpcPort, err := freePort()
	if err != nil {
		return nil, err
	}
	httpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	args := []string{"serve", catalog, "-p", grpcPort, "--http-addr", "127.0.0.1:" + httpPort}
	var pprofBase string
	if heapOut != "" {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		args = append(args, "--pprof-addr", "127.0.0.1:"+p)
		pprofBase = "http://127.0.0.1:" + p
	}
	cmd := exec.Command(opm, args...)
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, base: "http://127.0.0.1:" + httpPort, pid: cmd.Process.Pid, pprof: pprofBase}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(s.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s, nil
			}
		}
	}
	cmd.Process.Kill()
	return nil, errors.New("the server never became ready")
}

// rss is the server's resident memory in MiB (VmRSS), hwm its peak
// (VmHWM).
func (s *server) mem() (rss, hwm float64) {
	st, _ := procstat.Status(s.pid)
	return float64(st["VmRSS"]) / 1024, float64(st["VmHWM"]) / 1024
}

// cpu is the server's user and system CPU time.
func (s *server) cpu() time.Duration {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * time.Second / 100 // USER_HZ
}

// questions lists every install and updates question of the catalog.
func questions(base string) (install, updates []string, err error) {
	var list struct {
		Packages []struct {
			Name     string   `json:"name"`
			Channels []string `json:"channels"`
		} `json:"packages"`
	}
	if err := getJSON(base+"/api/v1/packages?limit=all", &list); err != nil {
		return nil, nil, err
	}
	for _, p := range list.Packages {
		install = append(install, "/api/v1/install?package="+url.QueryEscape(p.Name))
		for _, ch := range p.Channels {
			install = append(install, "/api/v1/install?package="+url.QueryEscape(p.Name)+"&channel="+url.QueryEscape(ch))
		}
		var pkg struct {
			Bundles []struct {
				Name string `json:"name"`
			} `json:"bundles"`
		}
		if err := getJSON(base+"/api/v1/packages/"+url.PathEscape(p.Name), &pkg); err != nil {
			return nil, nil, err
		}
		for _, b := range pkg.Bundles {
			updates = append(updates, "/api/v1/updates?package="+url.QueryEscape(p.Name)+"&from="+url.QueryEscape(b.Name))
		}
	}
	return install, updates, nil
}

func getJSON(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// stats are the latencies and statuses of one route.
type stats struct {
	mu     sync.Mutex
	lat    []time.Duration
	codes  map[int]int
	failed int // transport errors and abandoned requests
}

func (s *stats) add(d time.Duration, code int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.codes == nil {
		s.codes = map[int]int{}
	}
	if err != nil {
		s.failed++
		return
	}
	s.lat = append(s.lat, d)
	s.codes[code]++
}

func (s *stats) pct(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	l := slices.Clone(s.lat)
	slices.Sort(l)
	return l[min(len(l)-1, int(float64(len(l))*p))]
}

func (s *stats) line(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var codes []string
	for _, c := range slices.Sorted(func(yield func(int) bool) {
		for c := range s.codes {
			if !yield(c) {
				return
			}
		}
	}) {
		codes = append(codes, fmt.Sprintf("%d×%d", c, s.codes[c]))
	}
	return fmt.Sprintf("%-10s %7d answers  p50 %8v  p99 %8v  max %8v  %s  failed/abandoned %d",
		name, len(s.lat), s.pct(0.5).Round(time.Millisecond), s.pct(0.99).Round(time.Millisecond),
		s.pct(1).Round(time.Millisecond), strings.Join(codes, " "), s.failed)
}

func get(ctx context.Context, c *http.Client, u string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}

func run(opm, catalog string, clients int, duration, timeout time.Duration, hard string, phase time.Duration) error {
	s, err := start(opm, catalog)
	if err != nil {
		return err
	}
	defer s.cmd.Process.Kill()
	startRSS, _ := s.mem()
	inst, upd, err := questions(s.base)
	if err != nil {
		return err
	}
	idle, _ := s.mem()
	fmt.Printf("catalog %s: %d install and %d updates questions\n", catalog, len(inst), len(upd))
	fmt.Printf("memory: %.1f MiB when ready, %.1f MiB idle after listing the questions\n", startRSS, idle)

	client := &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: clients + 4}}
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var installs, updates, health, ready stats
	var wg sync.WaitGroup
	var peak float64
	wg.Go(func() { // memory
		for ctx.Err() == nil {
			if rss, _ := s.mem(); rss > peak {
				peak = rss
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	for _, probe := range []struct {
		path string
		st   *stats
	}{{"/healthz", &health}, {"/readyz", &ready}} {
		wg.Go(func() {
			for ctx.Err() == nil {
				t := time.Now()
				code, err := get(context.Background(), client, s.base+probe.path)
				probe.st.add(time.Since(t), code, err)
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	for i := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 24))
			for ctx.Err() == nil {
				path, st := inst[rng.IntN(len(inst))], &installs
				if rng.IntN(2) == 0 && len(upd) > 0 {
					path, st = upd[rng.IntN(len(upd))], &updates
				}
				t := time.Now()
				code, err := get(ctx, client, s.base+path)
				if ctx.Err() != nil {
					return // the load ended during the request: not counted
				}
				st.add(time.Since(t), code, err)
			}
		})
	}
	cpu0 := s.cpu()
	if heapOut != "" {
		wg.Go(func() { // the heap near the end of the load
			select {
			case <-time.After(duration * 9 / 10):
			case <-ctx.Done():
			}
			if err := saveHeap(s.pprof, heapOut); err != nil {
				fmt.Fprintln(os.Stderr, "benchanswers: heap profile:", err)
			}
		})
	}
	wg.Wait()
	cpuLoad := s.cpu() - cpu0
	end, hwm := s.mem()
	fmt.Printf("\nload: %d clients for %v (client timeout %v)\n", clients, duration, timeout)
	for _, l := range []struct {
		name string
		st   *stats
	}{{"install", &installs}, {"updates", &updates}, {"/healthz", &health}, {"/readyz", &ready}} {
		fmt.Println(l.st.line(l.name))
	}
	fmt.Printf("memory: peak %.1f MiB sampled (%.2f× idle), VmHWM %.1f MiB, %.1f MiB at the end; CPU %v during the load\n",
		peak, peak/idle, hwm, end, cpuLoad.Round(10*time.Millisecond))
	c1 := s.cpu()
	time.Sleep(5 * time.Second)
	fmt.Printf("CPU in the 5 s after the load stopped: %v\n", (s.cpu() - c1).Round(10*time.Millisecond))

	if hard != "" {
		if err := hardVersusEasy(s, client, inst, hard, phase); err != nil {
			return err
		}
	}
	return stopTime(s, client, hard)
}

// hardVersusEasy asks easy questions (install questions answered fast
// once warm) alone, then beside a client asking the hard one again and
// again, and compares their latencies.
func hardVersusEasy(s *server, client *http.Client, inst []string, hard string, phase time.Duration) error {
	// The easy ones: every install question the server answers within
	// 50 ms when idle.
	var easy []string
	for _, q := range inst {
		t := time.Now()
		code, err := get(context.Background(), client, s.base+q)
		if err == nil && code == 200 && time.Since(t) < 50*time.Millisecond {
			easy = append(easy, q)
		}
	}
	if len(easy) == 0 {
		return errors.New("no easy question")
	}
	measure := func(withHard bool) (*stats, *stats) {
		ctx, cancel := context.WithTimeout(context.Background(), phase)
		defer cancel()
		var e, h stats
		var wg sync.WaitGroup
		if withHard {
			wg.Go(func() {
				for ctx.Err() == nil {
					t := time.Now()
					code, err := get(ctx, client, s.base+hard)
					if ctx.Err() == nil {
						h.add(time.Since(t), code, err)
					}
				}
			})
		}
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				t := time.Now()
				code, err := get(ctx, client, s.base+easy[i%len(easy)])
				if ctx.Err() == nil {
					e.add(time.Since(t), code, err)
				}
			}
		})
		wg.Wait()
		return &e, &h
	}
	alone, _ := measure(false)
	beside, h := measure(true)
	fmt.Printf("\none hard question (%s) beside easy ones (%d install questions, one client each):\n", hard, len(easy))
	fmt.Println(alone.line("easy alone"))
	fmt.Println(beside.line("easy+hard"))
	fmt.Println(h.line("hard"))
	fmt.Printf("delay of the easy ones by the hard one: p50 %+v, p99 %+v\n",
		(beside.pct(0.5) - alone.pct(0.5)).Round(100*time.Microsecond), (beside.pct(0.99) - alone.pct(0.99)).Round(100*time.Microsecond))
	return nil
}

// stopTime sends SIGTERM while the hard question (or nothing) runs and
// measures how long the server takes to exit.
func stopTime(s *server, client *http.Client, hard string) error {
	if hard != "" {
		go get(context.Background(), client, s.base+hard) //nolint:errcheck // cut by the stop
		time.Sleep(200 * time.Millisecond)
	}
	t := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	err := s.cmd.Wait()
	what := "idle"
	if hard != "" {
		what = "during the hard question"
	}
	fmt.Printf("\nSIGTERM %s: exited in %v (%v)\n", what, time.Since(t).Round(time.Millisecond), err)
	return nil
}

func saveHeap(base, out string) error {
	resp, err := http.Get(base + "/debug/pprof/heap")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
