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

	// Cases that look for the last connection error in the message get a
	// connect timeout long enough for one attempt even on a loaded machine.
	t.Run("interrupt", func(t *testing.T) {
		t.Parallel()
		testInterrupt(t, bin)
	})
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"serving", []string{"-addr", plain}, exitServing, "status: SERVING"},
		{"not serving", []string{"-addr", plain, "-service", "down"}, exitUnhealthy, `service unhealthy (responded with "NOT_SERVING")`},
		{"unknown service", []string{"-addr", plain, "-service", "missing"}, exitRPCFailure, "error: health rpc failed: "},
		{"connection refused", []string{"-addr", refused, "-connect-timeout", "1s"}, exitConnectionFailure, "connection refused"},
		{"connect timeout", []string{"-addr", silent, "-connect-timeout", "300ms"}, exitConnectionFailure, "timeout: failed to connect service"},
		{"rpc timeout", []string{"-addr", blocking, "-rpc-timeout", "300ms"}, exitRPCFailure, "timeout: health rpc did not complete within 300ms"},
		{"missing addr", nil, exitInvalidArguments, "error: -addr not specified"},
		{"bad flag", []string{"-addr", plain, "-bogus"}, exitInvalidArguments, "flag provided but not defined: -bogus"},
		{"spiffe", []string{"-addr", plain, "-spiffe"}, exitSPIFFEFailed, "spiffe"},
		{"tls", []string{"-addr", secure, "-tls", "-tls-ca-cert", cert.certFile}, exitServing, "status: SERVING"},
		{"tls no verify", []string{"-addr", secure, "-tls", "-tls-no-verify"}, exitServing, "status: SERVING"},
		{"tls untrusted", []string{"-addr", secure, "-tls", "-connect-timeout", "1s"}, exitConnectionFailure, "certificate signed by unknown authority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var stdout, stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, bin, tc.args...)
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
			result{code: code, stdout: stdout.String(), stderr: stderr.String()}.expect(t, tc.code, tc.want)
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing (upstream logs to stderr)", stdout.String())
			}
		})
	}
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
// once with a connection failure, as upstream does.
func testInterrupt(t *testing.T, bin string) {
	silent := silentAddr(t)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-v", "-addr", silent, "-connect-timeout", "20s")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
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
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("probe took %v after SIGINT, want it to stop at once", d)
	}
}
