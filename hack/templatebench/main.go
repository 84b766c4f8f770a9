// Command templatebench times `opm alpha render-template` of a 30-bundle
// semver template against a registry that answers every request after a
// delay (20 ms by default), for one or more opm binaries: it starts the
// registry on a loopback port, pushes 30 bundle images (versions of the
// real microcks bundle, see tmplfixture.PushSynthetic), checks that every
// binary prints the same bytes, and reports each binary's times.
//
//	go run ./hack/templatebench -runs 5 /tmp/upstream/opm ./bin/opm
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/fastopm/fastopm/internal/tmplfixture"
)

func main() {
	runs := flag.Int("runs", 5, "runs per binary")
	delay := flag.Duration("delay", 20*time.Millisecond, "the registry's delay before each answer")
	testdata := flag.String("testdata", "testdata", "the testdata directory")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: templatebench [-runs N] [-delay D] OPM...")
		os.Exit(2)
	}
	if err := run(*runs, *delay, *testdata, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(runs int, delay time.Duration, testdata string, bins []string) error {
	srv, err := tmplfixture.Start()
	if err != nil {
		return err
	}
	defer srv.Close()
	tmpl, err := tmplfixture.PushSynthetic(srv.Host, filepath.Join(testdata, "bundles"))
	if err != nil {
		return err
	}
	srv.SetDelay(delay)
	work, err := os.MkdirTemp("", "templatebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	file := filepath.Join(work, "semver.yaml")
	if err := os.WriteFile(file, tmpl, 0o644); err != nil {
		return err
	}
	home := filepath.Join(work, "home")
	// containers/image (upstream) needs a signature policy.
	if err := os.MkdirAll(filepath.Join(home, ".config", "containers"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "containers", "policy.json"), []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644); err != nil {
		return err
	}
	fmt.Printf("30-bundle semver template, registry delay %v per request, %d runs each\n", delay, runs)
	var first []byte
	for _, bin := range bins {
		var times []time.Duration
		for range runs {
			cmd := exec.Command(bin, "alpha", "render-template", "semver", file, "--use-http")
			cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_RUNTIME_DIR=" + home, "DOCKER_CONFIG=" + home, "TMPDIR=" + work}
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			start := time.Now()
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s: %v: %s", bin, err, stderr.String())
			}
			times = append(times, time.Since(start))
			if first == nil {
				first = out.Bytes()
			} else if !bytes.Equal(first, out.Bytes()) {
				return fmt.Errorf("%s printed other bytes than %s", bin, bins[0])
			}
		}
		slices.Sort(times)
		fmt.Printf("%-40s median %7.3fs  min %7.3fs  max %7.3fs  (%d bytes)\n", bin, times[len(times)/2].Seconds(), times[0].Seconds(), times[len(times)-1].Seconds(), len(first))
	}
	return nil
}
