// Command benchimage measures `opm render IMAGE` of a catalog image served
// by a registry on loopback, for several opm binaries in the same run.
//
// It starts go-containerregistry's registry on 127.0.0.1, builds the
// catalog image of -catalog as a catalog image is usually built (a base
// layer holding /bin/opm, the catalog at /configs, the serve cache at
// /tmp/cache: pkg/catalogimage, gzip layers), pushes it, then runs each
// binary's `opm render REF -o json` -runs times, interleaved so that every
// binary sees the same load, and reports wall time, CPU time (user+system)
// and peak RSS, and the SHA-256 of what each printed (they must agree).
//
//	go build -o bin/opm ./cmd/opm
//	go run ./hack/benchimage -opm ours=bin/opm,upstream=/tmp/upstream/bin/opm -catalog /tmp/bench-large
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/google/go-containerregistry/pkg/compression"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/pkg/catalogimage"
)

func main() {
	var (
		opms    = flag.String("opm", "bin/opm", "opm binaries to measure, comma-separated, each optionally as LABEL=PATH")
		catalog = flag.String("catalog", "/tmp/bench-large", "catalog directory")
		runs    = flag.Int("runs", 5, "renders per binary")
		base    = flag.String("base-binary", "", "the file stored as /bin/opm in the image's base layer (default: the first -opm)")
		serve   = flag.Bool("serve", false, "push the image, print its reference and serve it until interrupted, without measuring")
		zst     = flag.Bool("zstd", false, "compress the image's layers with zstd (an OCI image) instead of gzip")
		cached  = flag.String("cache-modes", "", "also render with --image-cache-dir, for every binary but those labelled upstream*: "+
			"cold (an empty cache each run: what recording costs), warm (the cache a first, unmeasured, render filled); comma-separated")
	)
	flag.Parse()
	var modes []string
	if *cached != "" {
		modes = strings.Split(*cached, ",")
	}
	if err := run(strings.Split(*opms, ","), *catalog, *runs, *base, *serve, *zst, modes); err != nil {
		fmt.Fprintln(os.Stderr, "benchimage:", err)
		os.Exit(1)
	}
}

// binary is an opm to measure, and how: mode "" renders without a cache,
// "cold" with an empty --image-cache-dir, "warm" with one already filled.
type binary struct{ label, path, mode string }

type result struct {
	wall, cpu time.Duration
	rss       int64 // KiB
	sum       [32]byte
	n         int64
}

func run(opms []string, catalog string, runs int, baseBinary string, serve, zst bool, modes []string) error {
	if serve {
		return serveImage(catalog, baseBinary, zst)
	}
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
		if _, err := os.Stat(p); err != nil {
			return err
		}
		bins = append(bins, binary{label: label, path: p})
		if strings.HasPrefix(label, "upstream") {
			continue
		}
		for _, m := range modes {
			if m != "cold" && m != "warm" {
				return fmt.Errorf("unknown cache mode %q", m)
			}
			bins = append(bins, binary{label: label + "/" + m, path: p, mode: m})
		}
	}
	if baseBinary == "" {
		baseBinary = bins[0].path
	}

	// The registry (which holds the image in memory) runs in a process
	// of its own: a child's peak RSS as the kernel reports it can be its
	// parent's, since Go starts children sharing the parent's memory
	// until they exec.
	self, err := os.Executable()
	if err != nil {
		return err
	}
	reg := exec.Command(self, "-serve", "-catalog", catalog, "-base-binary", baseBinary, fmt.Sprintf("-zstd=%v", zst))
	reg.Stderr = os.Stderr
	stdout, err := reg.StdoutPipe()
	if err != nil {
		return err
	}
	if err := reg.Start(); err != nil {
		return err
	}
	defer func() {
		reg.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may be gone
		reg.Wait()                          //nolint:errcheck // stopped on purpose
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	fmt.Print(line)
	ref, _, _ := strings.Cut(strings.TrimPrefix(line, "image "), ": ")
	// Upstream's containers/image pull wants a signature policy: one that
	// accepts anything, in a home of its own.
	home, err := os.MkdirTemp("", "benchimage-home-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	if err := os.MkdirAll(filepath.Join(home, ".config", "containers"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "containers", "policy.json"), []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644); err != nil {
		return err
	}
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))

	// The warm caches are filled by a render that is not measured.
	caches := make([]string, len(bins))
	for bi, b := range bins {
		if b.mode == "" {
			continue
		}
		if caches[bi], err = os.MkdirTemp("", "benchimage-cache-"); err != nil {
			return err
		}
		defer os.RemoveAll(caches[bi])
		if b.mode == "warm" {
			if _, err := render(b.path, ref, env, caches[bi]); err != nil {
				return fmt.Errorf("%s: %w", b.label, err)
			}
		}
	}
	results := make([][]result, len(bins))
	for i := range runs {
		for bi, b := range bins {
			if b.mode == "cold" {
				if err := os.RemoveAll(caches[bi]); err != nil {
					return err
				}
			}
			r, err := render(b.path, ref, env, caches[bi])
			if err != nil {
				return fmt.Errorf("%s run %d: %w", b.label, i+1, err)
			}
			results[bi] = append(results[bi], r)
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "opm\truns\twall best\tmedian\tworst\tCPU best\tmedian\tpeak RSS MB\toutput MB\toutput sha256\t")
	for bi, b := range bins {
		rs := results[bi]
		wall := sorted(rs, func(r result) time.Duration { return r.wall })
		cpu := sorted(rs, func(r result) time.Duration { return r.cpu })
		rss := slices.MaxFunc(rs, func(a, b result) int { return int(a.rss - b.rss) }).rss
		fmt.Fprintf(tw, "%s\t%d\t%.3fs\t%.3fs\t%.3fs\t%.3fs\t%.3fs\t%d\t%.1f\t%x\t\n", b.label, runs,
			wall[0].Seconds(), wall[len(wall)/2].Seconds(), wall[len(wall)-1].Seconds(),
			cpu[0].Seconds(), cpu[len(cpu)/2].Seconds(), rss/1024, float64(rs[0].n)/1e6, rs[0].sum[:6])
		for _, r := range rs[1:] {
			if r.sum != rs[0].sum {
				return fmt.Errorf("%s printed different output in two runs", b.label)
			}
		}
	}
	tw.Flush()
	for bi := range bins[1:] {
		if results[bi+1][0].sum != results[0][0].sum {
			fmt.Printf("WARNING: %s and %s printed different output\n", bins[0].label, bins[bi+1].label)
		}
	}
	return nil
}

func sorted(rs []result, f func(result) time.Duration) []time.Duration {
	out := make([]time.Duration, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	slices.Sort(out)
	return out
}

// push builds the catalog image and pushes it to ref.
func push(catalog, opm, ref string, zst bool) (int, int64, error) {
	baseLayer, err := binaryLayer(opm, zst)
	if err != nil {
		return 0, 0, err
	}
	mt := types.DockerManifestSchema2
	if zst {
		mt = types.OCIManifestSchema1
	}
	start := mutate.MediaType(empty.Image, mt)
	if zst {
		start = mutate.ConfigMediaType(start, types.OCIConfigJSON)
	}
	base, err := mutate.AppendLayers(start, baseLayer)
	if err != nil {
		return 0, 0, err
	}
	img, err := catalogimage.Build(context.Background(), catalogimage.Options{Base: base, Dir: catalog, Cache: action.BuildServeCache, Zstd: zst})
	if err != nil {
		return 0, 0, err
	}
	defer img.Close()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return 0, 0, err
	}
	if err := remote.Write(r, img); err != nil {
		return 0, 0, err
	}
	ls, err := img.Layers()
	if err != nil {
		return 0, 0, err
	}
	var size int64
	for _, l := range ls {
		n, err := l.Size()
		if err != nil {
			return 0, 0, err
		}
		size += n
	}
	return len(ls), size, nil
}

// binaryLayer is a layer holding the file at p as /bin/opm.
func binaryLayer(p string, zst bool) (v1.Layer, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeTar(&buf, data); err != nil {
		return nil, err
	}
	var opts []tarball.LayerOption
	if zst {
		opts = append(opts, tarball.WithCompression(compression.ZStd), tarball.WithMediaType(types.OCILayerZStd))
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil }, opts...)
}

// render runs opm render ref -o json (with --image-cache-dir cache when
// not empty) and measures it.
func render(opm, ref string, env []string, cache string) (result, error) {
	args := []string{"render", ref, "-o", "json", "--use-http"}
	if cache != "" {
		args = append(args, "--image-cache-dir", cache)
	}
	cmd := exec.Command(opm, args...)
	cmd.Env = env
	h := sha256.New()
	cw := &counter{w: h}
	cmd.Stdout = cw
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return result{}, fmt.Errorf("%v\n%s", err, stderr.String())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r := result{wall: wall, rss: ru.Maxrss, n: cw.n,
		cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	copy(r.sum[:], h.Sum(nil))
	return r, nil
}

type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.w.Write(p)
}

// writeTar writes a tar stream of /bin and /bin/opm holding data.
func writeTar(w io.Writer, data []byte) error {
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "bin/", Mode: 0o755}); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "bin/opm", Mode: 0o755, Size: int64(len(data))}); err != nil {
		return err
	}
	if _, err := tw.Write(data); err != nil {
		return err
	}
	return tw.Close()
}

// serveImage builds the catalog image, pushes it to a registry on
// loopback, prints "image REF: ..." and serves it until interrupted.
func serveImage(catalog, baseBinary string, zst bool) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	go srv.Serve(ln) //nolint:errcheck // stopped by Close
	defer srv.Close()
	ref := ln.Addr().String() + "/bench/catalog:v1"
	start := time.Now()
	layers, size, err := push(catalog, baseBinary, ref, zst)
	if err != nil {
		return err
	}
	fmt.Printf("image %s: %d layers, %.1f MB compressed, built and pushed in %v\n", ref, layers, float64(size)/1e6, time.Since(start).Round(time.Millisecond))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}
