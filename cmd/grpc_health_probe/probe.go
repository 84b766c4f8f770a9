package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/encoding/gzip"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/fastopm/fastopm/pkg/version"
)

// Exit codes, the same as upstream grpc_health_probe's.
const (
	// exitServing: the service answered SERVING.
	exitServing = 0
	// exitInvalidArguments: bad flags, or TLS files that cannot be loaded.
	exitInvalidArguments = 1
	// exitConnectionFailure: no connection within -connect-timeout.
	exitConnectionFailure = 2
	// exitRPCFailure: the health RPC failed or timed out.
	exitRPCFailure = 3
	// exitUnhealthy: the RPC succeeded but the status is not SERVING.
	exitUnhealthy = 4
	// exitSPIFFEFailed: SPIFFE credentials could not be obtained (always,
	// for -spiffe, as this build has no SPIFFE support).
	exitSPIFFEFailed = 20
)

// run is the whole program: it parses args (without the program name),
// probes the server, reports on stderr as upstream does and returns the
// exit code. stdout only receives the -version output.
func run(args []string, stdout, stderr io.Writer) int {
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }

	o, err := parseFlags(args, stderr)
	if err != nil {
		// Like upstream, -h is a bad invocation too (exit 1); the usage
		// was printed already.
		if !errors.Is(err, flag.ErrHelp) {
			logf("error: %v", err)
		}
		return exitInvalidArguments
	}
	if o.version {
		fmt.Fprintln(stdout, versionString())
		return exitServing
	}
	if o.verbose {
		o.logOptions(logf)
	}

	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	watcherDone := make(chan struct{})
	go func() {
		defer close(watcherDone)
		select {
		case <-sigs:
			logf("cancellation received")
			cancel()
		case <-ctx.Done():
		}
	}()
	defer func() {
		signal.Stop(sigs)
		cancel()
		<-watcherDone
	}()

	return probe(ctx, o, logf)
}

// probe connects, runs one Health.Check and maps the outcome to an exit
// code, logging upstream's messages.
func probe(ctx context.Context, o *options, logf func(string, ...any)) int {
	creds, err := transportCredentials(o)
	switch {
	case errors.Is(err, errSPIFFEUnsupported):
		logf("failed to initialize tls credentials with spiffe. error=%v", err)
		return exitSPIFFEFailed
	case err != nil:
		logf("failed to initialize tls credentials. error=%v", err)
		return exitInvalidArguments
	}

	last := &lastError{}
	dialOpts := []grpc.DialOption{
		grpc.WithUserAgent(o.userAgent),
		grpc.WithTransportCredentials(recordingCreds{TransportCredentials: creds, last: last}),
		grpc.WithContextDialer(last.dial),
	}
	if o.gzip {
		dialOpts = append(dialOpts, grpc.WithDefaultCallOptions(grpc.UseCompressor(gzip.Name)))
	}

	if o.verbose {
		logf("establishing connection")
	}
	connStart := time.Now()
	conn, err := connect(ctx, dialTarget(o.addr), o.connTimeout, dialOpts)
	if err != nil {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			msg := fmt.Sprintf("timeout: failed to connect service %q within %v", o.addr, o.connTimeout)
			if cause := last.get(); cause != nil {
				msg += fmt.Sprintf(" (last error: %v)", cause)
			}
			logf("%s", msg)
		default:
			logf("error: failed to connect service at %q: %+v", o.addr, err)
		}
		return exitConnectionFailure
	}
	defer conn.Close()
	connDuration := time.Since(connStart)
	if o.verbose {
		logf("connection established (took %v)", connDuration)
	}

	rpcStart := time.Now()
	rpcCtx, cancel := context.WithTimeout(ctx, o.rpcTimeout)
	defer cancel()
	if len(o.headers.md) > 0 {
		rpcCtx = metadata.NewOutgoingContext(rpcCtx, o.headers.md)
	}
	resp, err := healthpb.NewHealthClient(conn).Check(rpcCtx, &healthpb.HealthCheckRequest{Service: o.service})
	if err != nil {
		switch st := status.Convert(err); st.Code() {
		case codes.Unimplemented:
			logf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", st.Message())
		case codes.DeadlineExceeded:
			logf("timeout: health rpc did not complete within %v", o.rpcTimeout)
		default:
			logf("error: health rpc failed: %+v", err)
		}
		return exitRPCFailure
	}
	rpcDuration := time.Since(rpcStart)

	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		logf("service unhealthy (responded with %q)", resp.GetStatus().String())
		return exitUnhealthy
	}
	if o.verbose {
		logf("time elapsed: connect=%v rpc=%v", connDuration, rpcDuration)
	}
	logf("status: %v", resp.GetStatus().String())
	return exitServing
}

// connect creates a client for target and waits until it is READY or
// timeout passes, like upstream's blocking dial: failed attempts are
// retried with gRPC's backoff until then. The error wraps
// context.DeadlineExceeded on timeout.
func connect(ctx context.Context, target string, timeout time.Duration, opts []grpc.DialOption) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		s := conn.GetState()
		switch s {
		case connectivity.Ready:
			return conn, nil
		case connectivity.Idle:
			conn.Connect()
		case connectivity.Shutdown:
			_ = conn.Close()
			return nil, errors.New("client shut down")
		}
		if !conn.WaitForStateChange(ctx, s) {
			_ = conn.Close()
			return nil, ctx.Err()
		}
	}
}

// versionString is what -version prints: the fastopm version, which the
// Makefile sets in package version for opm and this probe alike.
func versionString() string {
	return "grpc_health_probe (fastopm) " + version.Version
}
