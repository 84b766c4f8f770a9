package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/fastopm/fastopm/cmd/opm/internal/cli"
	"github.com/fastopm/fastopm/pkg/image"
)

// leanPair is a lean opm (built with the opm_lean tag) with opm-full (the
// same command built without it) beside it, in a directory of their own,
// as make build leaves them in bin/.
type leanPair struct{ dir, lean, full string }

var (
	leanOnce  sync.Once
	leanBuilt leanPair
	leanErr   error
)

// buildLean builds the pair once per test binary (TestMain removes
// them).
func buildLean(t *testing.T) leanPair {
	t.Helper()
	leanOnce.Do(func() {
		dir, err := os.MkdirTemp("", "opm-lean-test-")
		if err != nil {
			leanErr = err
			return
		}
		leanBuilt = leanPair{dir: dir, lean: filepath.Join(dir, "opm"), full: filepath.Join(dir, "opm-full")}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, b := range [][]string{{"-tags", "opm_lean", "-o", leanBuilt.lean}, {"-o", leanBuilt.full}} {
			wg.Go(func() {
				out, err := exec.Command("go", append(append([]string{"build"}, b...), ".")...).CombinedOutput()
				if err != nil {
					errs[i] = fmt.Errorf("go build %s: %v\n%s", strings.Join(b, " "), err, out)
				}
			})
		}
		wg.Wait()
		leanErr = errors.Join(errs...)
	})
	if leanErr != nil {
		t.Fatal(leanErr)
	}
	return leanBuilt
}

// run is one run of an opm binary.
type run struct {
	out, err string
	code     int
}

// runOpm runs bin with args, in this process's environment without
// what would point opm at another opm-full (the developer's own), with
// HELP_ALPHA=true, and env.
func runOpm(t *testing.T, bin string, env []string, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(append(leanTestEnv(), "HELP_ALPHA=true"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return run{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

// leanTestEnv is os.Environ() without the variables that point a lean
// opm at an opm-full, or that a lean opm sets for it.
func leanTestEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPM_FULL") && !strings.HasPrefix(kv, "HELP_ALPHA=") {
			env = append(env, kv)
		}
	}
	return env
}

// logTime is the time of a log line, which differs between two runs.
var logTime = regexp.MustCompile(`time="[^"]*"|^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d`)

// TestLeanRunsFull: the lean opm gives every command's help, and the
// answers of the commands it leaves to opm-full, exactly as opm-full
// does (standard output, standard error, exit code), by running it.
func TestLeanRunsFull(t *testing.T) {
	p := buildLean(t)
	example, err := filepath.Abs("../../testdata/example")
	if err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"--help"},
		{"help", "alpha", "query", "install"},
		{"__complete", "alpha", "query", "install", "--"},
		{"__complete", "alpha", ""},
		{"__complete", "help", "alpha", "query", ""},
		{"__completeNoDesc", "help", "alpha", "query", "u"},
		{"__complete", "serve", "--http-"},
		{"__complete", "alpha", "hub", "--"},
		{"serve", "--http-addr", "127.0.0.1:0", "--skip-tls", "no-such-dir"},
		{"serve", "--http-addr=127.0.0.1:0", "--http-tls-cert", "x", "no-such-dir"},
		{"serve", "--http-tls-cert", "x", "no-such-dir"},
		{"--use-http", "--skip-tls-verify", "alpha", "diff", example, example},
		{"alpha", "qurey"},
		{"alpha", "query", "updates", example, "--package", "example-operator", "--all"},
		{"alpha", "query", "install", example, "--package", "example-operatr"},
		{"alpha", "query", "install", example, "--no-such-flag"},
		{"alpha", "query"},
		{"alpha", "diff", example, example},
		{"alpha", "diff", example},
		{"alpha", "filter", example},
		{"alpha", "hub"},
		{"alpha", "bundle", "extract"},
		{"--skip-tls-verify", "alpha", "query", "install", example, "--package", "memcached"},
	}
	// Every command's help, from the tree of the full opm this test
	// binary is.
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		cases = append(cases, append(strings.Fields(c.CommandPath())[1:], "--help"))
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cli.New(cli.Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}))
	compare := func(env []string, args []string) {
		lean := runOpm(t, p.lean, env, args...)
		full := runOpm(t, p.full, env, args...)
		lean.err = logTime.ReplaceAllString(lean.err, "TIME")
		full.err = logTime.ReplaceAllString(full.err, "TIME")
		if lean != full {
			t.Errorf("%v opm %s: lean opm\n%+v\nopm-full\n%+v", env, strings.Join(args, " "), lean, full)
		}
	}
	for _, args := range cases {
		compare(nil, args)
	}
	// The alpha commands hidden from help.
	for _, args := range [][]string{{"--help"}, {"alpha", "--help"}, {"__complete", ""}, {"__complete", "alpha", ""}} {
		compare([]string{"HELP_ALPHA="}, args)
	}
}

// TestLeanWithoutFull: without opm-full, the lean opm still validates,
// renders and lists (TestLeanServe: serves), and a command that needs
// opm-full says so, with the exit code of that command's errors.
func TestLeanWithoutFull(t *testing.T) {
	p := buildLean(t)
	dir := t.TempDir()
	lean := filepath.Join(dir, "opm")
	data, err := os.ReadFile(p.lean)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lean, data, 0o755); err != nil {
		t.Fatal(err)
	}
	example := "../../testdata/example"
	noFull := []string{"PATH=" + dir}
	// The question commands' errors are "Error: ..." lines; upstream's
	// commands', logrus' fatal lines (docs/exit-codes.md).
	for _, tc := range []struct {
		args []string
		code int
		want string // the start of standard error; none: empty
	}{
		{[]string{"validate", example}, 0, ""},
		{[]string{"render", example, "-o", "yaml"}, 0, ""},
		{[]string{"alpha", "list", "packages", example}, 0, ""},
		{[]string{"alpha", "query", "install", example, "--package", "memcached"}, 2, "Error: opm alpha query needs opm-full,"},
		{[]string{"alpha", "diff", example, example}, 2, "Error: opm alpha diff needs opm-full,"},
		{[]string{"help", "alpha", "hub"}, 2, "Error: opm alpha hub needs opm-full,"},
		{[]string{"alpha", "bundle", "extract"}, 1, `level=fatal msg="opm alpha bundle extract needs opm-full,`},
		{[]string{"serve", example, "--http-addr", "127.0.0.1:0", "-p", "0"}, 1, `level=fatal msg="opm serve --http-addr needs opm-full,`},
	} {
		r := runOpm(t, lean, noFull, tc.args...)
		got := logTime.ReplaceAllString(r.err, "")
		if r.code != tc.code || !strings.HasPrefix(strings.TrimSpace(got), tc.want) || tc.want == "" && r.err != "" {
			t.Errorf("opm %s: exit %d, stderr %q; want exit %d, stderr starting %q", strings.Join(tc.args, " "), r.code, r.err, tc.code, tc.want)
		}
		if strings.Count(r.err, "\n") > 1 {
			t.Errorf("opm %s: stderr %q, want one line", strings.Join(tc.args, " "), r.err)
		}
		if tc.want != "" && !strings.Contains(r.err, "make build builds bin/opm-full") {
			t.Errorf("opm %s: stderr %q does not say how to get opm-full", strings.Join(tc.args, " "), r.err)
		}
	}
	// serve's termination log says why, as for serve's own errors.
	tlog := filepath.Join(t.TempDir(), "termination-log")
	r := runOpm(t, lean, noFull, "serve", example, "--http-addr", "127.0.0.1:0", "-t", tlog)
	if got, err := os.ReadFile(tlog); err != nil || !strings.HasPrefix(string(got), "opm serve --http-addr needs opm-full,") {
		t.Errorf("serve --http-addr without opm-full: termination log %q, %v; stderr %q", got, err, r.err)
	}
	// OPM_FULL naming a lean opm: no loop. A lean opm run as opm-full
	// runs no command.
	r = runOpm(t, lean, append(noFull, "OPM_FULL="+lean), "alpha", "diff", example, example)
	if r.code != 2 || !strings.HasPrefix(r.err, "Error: "+lean+" ran "+lean+" as opm-full, but it is a lean opm too") {
		t.Errorf("OPM_FULL=lean: exit %d, stderr %q", r.code, r.err)
	}
	r = runOpm(t, lean, append(noFull, "OPM_FULL_RAN_FROM=/elsewhere/opm"), "version")
	if r.code != 1 || !strings.Contains(r.err, "/elsewhere/opm ran "+lean+" as opm-full, but it is a lean opm too") {
		t.Errorf("a lean opm run as opm-full: exit %d, stderr %q", r.code, r.err)
	}
	// OPM_FULL naming what cannot run; an opm-full beside opm that cannot.
	if err := os.WriteFile(filepath.Join(dir, "opm-full"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"OPM_FULL=" + dir}, "OPM_FULL=" + dir + ": not a file"},
		{[]string{"OPM_FULL=" + filepath.Join(dir, "opm-full")}, "opm-full: not executable"},
		{nil, "opm-full not found"},
	} {
		r := runOpm(t, lean, append(noFull, tc.env...), "alpha", "diff", example, example)
		if r.code != 2 || !strings.HasPrefix(r.err, "Error: opm alpha diff needs opm-full,") || !strings.Contains(r.err, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.env, r.code, r.err, tc.want)
		}
	}
	// opm-full run by another build warns.
	r = runOpm(t, p.full, []string{"OPM_FULL_BUILD=v9.9.9 0123abc"}, "version")
	if r.code != 0 || !strings.HasPrefix(r.err, `warning: opm-full is build "`) || !strings.Contains(r.err, `the opm that ran it "v9.9.9 0123abc"`) {
		t.Errorf("opm-full of another build: exit %d, stderr %q", r.code, r.err)
	}
	// OPM_FULL naming opm-full elsewhere.
	r = runOpm(t, lean, append(noFull, "OPM_FULL="+p.full), "alpha", "query", "install", example, "--package", "memcached")
	if r.code != 0 || !strings.Contains(r.out, "memcached") {
		t.Errorf("OPM_FULL=opm-full: exit %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
}

// startServe starts bin serve with args on testdata/example (gRPC on a
// free port) and returns once both the gRPC server and, with
// --http-addr, the HTTP one are up, with the gRPC port and the page's
// URL. The process is killed at the end of the test, and after two
// minutes (a hang guard).
func startServe(t *testing.T, bin string, args ...string) (cmd *exec.Cmd, port, url string) {
	t.Helper()
	args = append([]string{"serve", "../../testdata/example", "-p", "0", "-t", filepath.Join(t.TempDir(), "termination-log")}, args...)
	cmd = exec.Command(bin, args...)
	cmd.Env = leanTestEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	guard := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer guard.Stop()
	wantURL := slices.Contains(args, "--http-addr")
	sc := bufio.NewScanner(stderr)
	for (port == "" || wantURL && url == "") && sc.Scan() {
		line := sc.Text()
		if m := regexp.MustCompile(`url=(\S+)`).FindStringSubmatch(line); m != nil {
			url = m[1]
		}
		if m := regexp.MustCompile(`msg="serving registry" .*port=(\d+)`).FindStringSubmatch(line); m != nil {
			port = m[1]
		}
	}
	if port == "" || wantURL && url == "" {
		t.Fatalf("serve stopped before serving: %v", sc.Err())
	}
	go io.Copy(io.Discard, stderr)
	return cmd, port, url
}

// serving checks that the process runs the program want, answers the
// gRPC health check SERVING on port, and exits 0 on SIGTERM.
func serving(t *testing.T, cmd *exec.Cmd, want, port string) {
	t.Helper()
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if exe != want {
		t.Errorf("the serving process runs %s, want %s", exe, want)
	}
	conn, err := grpc.NewClient("127.0.0.1:"+port, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health: %v, %v", resp, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v, want exit 0", err)
	}
}

// TestLeanServe: the lean opm serves gRPC itself, as catalog pods run it.
func TestLeanServe(t *testing.T) {
	p := buildLean(t)
	cmd, port, _ := startServe(t, p.lean)
	serving(t, cmd, p.lean, port)
}

// TestLeanServeHTTP: `opm serve --http-addr` from the lean opm becomes
// opm-full in the same process (the one a catalog pod started and
// signals), which serves gRPC and HTTP and stops on SIGTERM with exit 0.
func TestLeanServeHTTP(t *testing.T) {
	p := buildLean(t)
	cmd, port, url := startServe(t, p.lean, "--http-addr", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"api/v1/packages", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"memcached"`)) {
		t.Errorf("GET /api/v1/packages: %s %s", resp.Status, body)
	}
	serving(t, cmd, p.full, port)
}

// TestLeanGenerateImage: the image `opm generate image` builds from a
// lean opm holds opm-full beside it, which its serve --http-addr runs;
// without opm-full there is no image.
func TestLeanGenerateImage(t *testing.T) {
	p := buildLean(t)
	probe := filepath.Join(p.dir, "grpc_health_probe")
	if err := os.WriteFile(probe, []byte("#!probe"), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "layout")
	r := runOpm(t, p.lean, []string{"PATH="}, "generate", "image", "../../testdata/example", "--output", "oci-layout:"+out)
	if r.code != 0 {
		t.Fatalf("generate image: exit %d: %s", r.code, r.err)
	}
	idx, err := layout.ImageIndexFromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("%v, %v", im, err)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := image.Unpack(context.Background(), img, dst); err != nil {
		t.Fatal(err)
	}
	for name, from := range map[string]string{"opm": p.lean, "opm-full": p.full} {
		got, err := os.ReadFile(filepath.Join(dst, "bin", name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("/bin/%s in the image is not %s", name, from)
		}
	}

	// A lean opm alone.
	dir := t.TempDir()
	for _, f := range []string{p.lean, probe} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out = filepath.Join(t.TempDir(), "layout")
	r = runOpm(t, filepath.Join(dir, "opm"), []string{"PATH=" + dir}, "generate", "image", "../../testdata/example", "--output", "oci-layout:"+out)
	if r.code == 0 || !strings.Contains(r.err, "image needs opm-full") {
		t.Errorf("generate image without opm-full: exit %d, stderr %q", r.code, r.err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("generate image without opm-full wrote %s: %v", out, err)
	}
	// A lean opm is no opm-full for the image.
	r = runOpm(t, filepath.Join(dir, "opm"), []string{"PATH=" + dir, "OPM_FULL=" + p.lean}, "generate", "image", "../../testdata/example", "--output", "oci-layout:"+out)
	if r.code == 0 || !strings.Contains(r.err, "but it is a lean opm too") {
		t.Errorf("generate image with a lean opm as opm-full: exit %d, stderr %q", r.code, r.err)
	}
}
