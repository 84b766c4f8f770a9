package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
)

// checkCall is what the server saw of one Health.Check call.
type checkCall struct {
	service     string
	md          metadata.MD
	compression string
}

// recorder records the Health.Check calls a test server receives.
type recorder struct {
	mu    sync.Mutex
	calls []checkCall
}

func (r *recorder) get() []checkCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]checkCall(nil), r.calls...)
}

// only returns the single recorded call, failing the test otherwise.
func (r *recorder) only(t *testing.T) checkCall {
	t.Helper()
	calls := r.get()
	if len(calls) != 1 {
		t.Fatalf("server saw %d health checks, want 1", len(calls))
	}
	return calls[0]
}

func (r *recorder) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if info.FullMethod == healthpb.Health_Check_FullMethodName {
		md, _ := metadata.FromIncomingContext(ctx)
		call := checkCall{md: md}
		if hr, ok := req.(*healthpb.HealthCheckRequest); ok {
			call.service = hr.GetService()
		}
		if c, ok := ctx.Value(compressionKey{}).(*string); ok {
			call.compression = *c
		}
		r.mu.Lock()
		r.calls = append(r.calls, call)
		r.mu.Unlock()
	}
	return h(ctx, req)
}

type compressionKey struct{}

// compressionStats is a stats.Handler that exposes the request's
// grpc-encoding to the interceptor (gRPC keeps it out of the metadata): it
// stores it in a *string under compressionKey.
type compressionStats struct{}

func (compressionStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, compressionKey{}, new(string))
}
func (compressionStats) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if h, ok := s.(*stats.InHeader); ok {
		if p, ok := ctx.Value(compressionKey{}).(*string); ok {
			*p = h.Compression
		}
	}
}
func (compressionStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (compressionStats) HandleConn(context.Context, stats.ConnStats) {}

// server options of a test server.
type serverConfig struct {
	creds    grpc.ServerOption
	noHealth bool
	health   healthpb.HealthServer
	listener net.Listener
}

// startServer starts a gRPC server on 127.0.0.1:0 (or cfg.listener) with
// grpc's own health service, in which "" and "ready" are SERVING and
// "down" is NOT_SERVING. It returns the address and the call recorder.
func startServer(t *testing.T, cfg serverConfig) (string, *recorder) {
	t.Helper()
	rec := &recorder{}
	opts := []grpc.ServerOption{
		grpc.UnaryInterceptor(rec.intercept),
		grpc.StatsHandler(compressionStats{}),
	}
	if cfg.creds != nil {
		opts = append(opts, cfg.creds)
	}
	srv := grpc.NewServer(opts...)
	switch {
	case cfg.health != nil:
		healthpb.RegisterHealthServer(srv, cfg.health)
	case !cfg.noHealth:
		hs := health.NewServer()
		hs.SetServingStatus("ready", healthpb.HealthCheckResponse_SERVING)
		hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
		healthpb.RegisterHealthServer(srv, hs)
	}
	lis := cfg.listener
	if lis == nil {
		var err error
		lis, err = net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("listen: %v", err)
		}
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), rec
}

// blockingHealth answers Check only when the call is cancelled.
type blockingHealth struct {
	healthpb.UnimplementedHealthServer
}

func (blockingHealth) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// closedAddr returns a 127.0.0.1 address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := lis.Addr().String()
	if err := lis.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return addr
}

// silentAddr returns the address of a TCP listener that accepts
// connections and never says a word, so an HTTP/2 handshake never ends.
func silentAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = lis.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return lis.Addr().String()
}

// keyPair is a self-signed certificate, usable as its own CA, written to
// PEM files.
type keyPair struct {
	certFile, keyFile string
	tls               tls.Certificate
	x509              *x509.Certificate
}

// newKeyPair makes a self-signed certificate for 127.0.0.1 and
// probe.test, valid for server and client authentication.
func newKeyPair(t *testing.T, name string) keyPair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generate key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"probe.test"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("create certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("parse certificate: %v", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("marshal key: %v", err)
	}
	dir := t.TempDir()
	kp := keyPair{
		certFile: filepath.Join(dir, name+".pem"),
		keyFile:  filepath.Join(dir, name+"-key.pem"),
		x509:     cert,
		tls:      tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert},
	}
	writePEM(t, kp.certFile, "CERTIFICATE", der)
	writePEM(t, kp.keyFile, "PRIVATE KEY", keyDER)
	return kp
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}

// result is the outcome of one probe run.
type result struct {
	code           int
	stdout, stderr string
}

// hangGuards are the connect and RPC timeouts every test probe gets
// first: minutes, so that a loaded machine never misses them, and only a
// hang waits for them (a probe that succeeds returns as soon as it has
// its answer). A test's own -connect-timeout or -rpc-timeout comes later
// in the arguments and wins.
var hangGuards = []string{"-connect-timeout=2m", "-rpc-timeout=2m"}

// probeInProcess runs the probe in this process, after hangGuards.
func probeInProcess(args ...string) result {
	var stdout, stderr bytes.Buffer
	code := run(slices.Concat(hangGuards, args), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// failToConnect runs a probe that cannot connect and whose message must
// name why the attempts failed ("(last error: ...)"), with probe, which
// gets a -connect-timeout as its last arguments. That needs one attempt
// (a dial, a TLS handshake) to fail within the timeout, which a loaded
// machine may not manage in the 1s of upstream's default: so the timeout
// starts there and doubles, up to a minute, while the message names no
// error. The outcome never depends on the machine's speed; only the time
// the test takes does. It returns the last result and its timeout.
func failToConnect(t *testing.T, probe func(args ...string) result) (result, time.Duration) {
	t.Helper()
	for timeout := time.Second; ; timeout *= 2 {
		r := probe("-connect-timeout", timeout.String())
		if strings.Contains(r.stderr, "(last error: ") || timeout >= time.Minute {
			return r, timeout
		}
		t.Logf("no connection attempt ended within %v; again with twice the time", timeout)
	}
}

// expect checks the exit code and that stderr contains every one of want.
func (r result) expect(t *testing.T, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code = %d, want %d; stderr:\n%s", r.code, code, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not contain %q; stderr:\n%s", w, r.stderr)
		}
	}
}
