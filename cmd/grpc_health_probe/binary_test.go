package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// TestBinary builds the real binary and checks, as a subprocess, the exit
// code and stderr of every outcome: this is what kubelet exec probes see.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := buildBinary(t)

	plain, _ := startServer(t, serverConfig{})
	blocking, _ := startServer(t, serverConfig{health: blockingHealth{}})
	cert := newKeyPair(t, "server")
	secure, _ := startServer(t, serverConfig{creds: grpc.Creds(credentials.NewServerTLSFromCert(&cert.tls))})
	refused := closedAddr(t)
	silent := silentAddr(t)

	t.Run("interrupt", func(t *testing.T) {
		t.Parallel()
		testInterrupt(t, bin)
	})
	// cause: the message must name the last attempt's error
	// (failToConnect).
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		want  string
		cause bool
	}{
		{"serving", []string{"-addr", plain}, exitServing, "status: SERVING", false},
		{"not serving", []string{"-addr", plain, "-service", "down"}, exitUnhealthy, `service unhealthy (responded with "NOT_SERVING")`, false},
		{"unknown service", []string{"-addr", plain, "-service", "missing"}, exitRPCFailure, "error: health rpc failed: ", false},
		{"connection refused", []string{"-addr", refused}, exitConnectionFailure, "connection refused", true},
		{"connect timeout", []string{"-addr", silent, "-connect-timeout", "300ms"}, exitConnectionFailure, "timeout: failed to connect service", false},
		{"rpc timeout", []string{"-addr", blocking, "-rpc-timeout", "300ms"}, exitRPCFailure, "timeout: health rpc did not complete within 300ms", false},
		{"missing addr", nil, exitInvalidArguments, "error: -addr not specified", false},
		{"bad flag", []string{"-addr", plain, "-bogus"}, exitInvalidArguments, "flag provided but not defined: -bogus", false},
		{"spiffe", []string{"-addr", plain, "-spiffe"}, exitSPIFFEFailed, "spiffe", false},
		{"tls", []string{"-addr", secure, "-tls", "-tls-ca-cert", cert.certFile}, exitServing, "status: SERVING", false},
		{"tls no verify", []string{"-addr", secure, "-tls", "-tls-no-verify"}, exitServing, "status: SERVING", false},
		{"tls untrusted", []string{"-addr", secure, "-tls"}, exitConnectionFailure, "certificate signed by unknown authority", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			probe := func(args ...string) result {
				return runBinary(t, bin, slices.Concat(tc.args, args)...)
			}
			var r result
			if tc.cause {
				r, _ = failToConnect(t, probe)
			} else {
				r = probe()
			}
			r.expect(t, tc.code, tc.want)
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing (upstream logs to stderr)", r.stdout)
			}
		})
	}
}

// runBinary runs the probe binary with hangGuards and args. A run that
// outlasts every timeout a test passes is killed (a hang guard too).
func runBinary(t *testing.T, bin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, slices.Concat(hangGuards, args)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			t.Fatalf("run: %v", err)
		}
		code = exitErr.ExitCode()
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// buildBinary builds the command into t.TempDir().
func buildBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go tool not found: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "grpc_health_probe")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// testInterrupt checks that SIGINT while connecting ends the probe at
// once with a connection failure, as upstream does. The connect timeout
// is far longer than the test's hang guard: only the signal can end the
// probe with the message checked.
func testInterrupt(t *testing.T, bin string) {
	silent := silentAddr(t)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-v", "-addr", silent, "-connect-timeout", "1h")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	// "establishing connection" comes after the signal handler is set up.
	var out strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if sc.Text() == "establishing connection" {
			break
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatalf("signal: %v", err)
	}
	rest, _ := io.ReadAll(stderr)
	out.Write(rest)
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("wait: %v, want an exit error; stderr:\n%s", err, out.String())
	}
	result{code: exitErr.ExitCode(), stderr: out.String()}.expect(t, exitConnectionFailure,
		"cancellation received", `error: failed to connect service at "`+silent+`": context canceled`)
}
