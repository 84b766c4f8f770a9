package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/fastopm/fastopm/pkg/version"
)

func TestServiceStatus(t *testing.T) {
	t.Parallel()
	addr, _ := startServer(t, serverConfig{})
	for _, tc := range []struct {
		name    string
		service []string
		code    int
		want    []string
	}{
		{"server", nil, exitServing, []string{"status: SERVING"}},
		{"serving service", []string{"-service", "ready"}, exitServing, []string{"status: SERVING"}},
		{"not serving", []string{"-service=down"}, exitUnhealthy, []string{`service unhealthy (responded with "NOT_SERVING")`}},
		{"unknown service", []string{"-service=missing"}, exitRPCFailure, []string{"error: health rpc failed: ", "code = NotFound", "unknown service"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"-addr", addr}, tc.service...)
			r := probeInProcess(args...)
			r.expect(t, tc.code, tc.want...)
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
}

func TestServiceNameSent(t *testing.T) {
	t.Parallel()
	addr, rec := startServer(t, serverConfig{})
	probeInProcess("-addr", addr, "-service", "ready").expect(t, exitServing)
	if got := rec.only(t).service; got != "ready" {
		t.Errorf("server saw service %q, want %q", got, "ready")
	}
}

func TestNoHealthService(t *testing.T) {
	t.Parallel()
	addr, _ := startServer(t, serverConfig{noHealth: true})
	probeInProcess("-addr", addr).expect(t, exitRPCFailure,
		"error: this server does not implement the grpc health protocol (grpc.health.v1.Health)")
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	addr := closedAddr(t)
	r, timeout := failToConnect(t, func(args ...string) result {
		return probeInProcess(append([]string{"-addr", addr}, args...)...)
	})
	r.expect(t, exitConnectionFailure,
		`timeout: failed to connect service "`+addr+`" within `+timeout.String(), "connection refused")
}

func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	addr := silentAddr(t)
	probeInProcess("-addr", addr, "-connect-timeout", "200ms").expect(t, exitConnectionFailure,
		`timeout: failed to connect service "`+addr+`" within 200ms`)
}

func TestRPCTimeout(t *testing.T) {
	t.Parallel()
	addr, _ := startServer(t, serverConfig{health: blockingHealth{}})
	// The exit code tells an RPC failure from a connection failure
	// (whether the server saw the call before the client gave up depends
	// on the machine's speed).
	probeInProcess("-addr", addr, "-rpc-timeout", "200ms").expect(t, exitRPCFailure,
		"timeout: health rpc did not complete within 200ms")
}

// TestRPCTimeoutWithHeaders guards against an upstream bug where adding
// -rpc-header dropped the RPC deadline.
func TestRPCTimeoutWithHeaders(t *testing.T) {
	t.Parallel()
	addr, _ := startServer(t, serverConfig{health: blockingHealth{}})
	probeInProcess("-addr", addr, "-rpc-timeout", "200ms", "-rpc-header", "x-a: b").expect(t, exitRPCFailure,
		"timeout: health rpc did not complete within 200ms")
}

func TestUserAgent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"default", nil, "grpc_health_probe"},
		{"flag", []string{"-user-agent", "kubelet-exec"}, "kubelet-exec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr, rec := startServer(t, serverConfig{})
			probeInProcess(append([]string{"-addr", addr}, tc.args...)...).expect(t, exitServing)
			ua := rec.only(t).md.Get("user-agent")
			// gRPC appends its own "grpc-go/x.y.z".
			if len(ua) != 1 || !strings.HasPrefix(ua[0], tc.want+" grpc-go/") {
				t.Errorf("user-agent = %q, want %q followed by the grpc-go version", ua, tc.want)
			}
		})
	}
}

func TestRPCHeaders(t *testing.T) {
	t.Parallel()
	addr, rec := startServer(t, serverConfig{})
	probeInProcess("-addr", addr,
		"-rpc-header", "X-Probe: one",
		"-rpc-header", "x-probe:two",
		"-rpc-header", "authorization: Bearer a:b",
	).expect(t, exitServing)
	md := rec.only(t).md
	if got := md.Get("x-probe"); !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("x-probe = %q, want [one two]", got)
	}
	if got := md.Get("authorization"); !slices.Equal(got, []string{"Bearer a:b"}) {
		t.Errorf("authorization = %q, want [Bearer a:b]", got)
	}
}

func TestNoRPCHeadersByDefault(t *testing.T) {
	t.Parallel()
	addr, rec := startServer(t, serverConfig{})
	probeInProcess("-addr", addr).expect(t, exitServing)
	if got := rec.only(t).md.Get("x-probe"); len(got) != 0 {
		t.Errorf("unexpected header x-probe = %q", got)
	}
}

func TestGzip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"-gzip"}, "gzip"},
	} {
		addr, rec := startServer(t, serverConfig{})
		probeInProcess(append([]string{"-addr", addr}, tc.args...)...).expect(t, exitServing, "status: SERVING")
		if got := rec.only(t).compression; got != tc.want {
			t.Errorf("%v: request compression = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestVerbose(t *testing.T) {
	t.Parallel()
	addr, _ := startServer(t, serverConfig{})
	probeInProcess("-addr", addr, "-v", "-rpc-header", "x-a: b").expect(t, exitServing,
		"parsed options:",
		"> addr="+addr+" conn_timeout=2m0s rpc_timeout=2m0s", // hangGuards
		"> headers: x-a\n",
		"> tls=false",
		"establishing connection",
		"connection established (took ",
		"time elapsed: connect=",
		"status: SERVING",
	)
}

// TestDefaultTimeouts checks upstream's defaults, which the other tests
// replace with hangGuards: 1s to connect, 1s for the RPC.
func TestDefaultTimeouts(t *testing.T) {
	t.Parallel()
	o, err := parseFlags([]string{"-addr", "x:1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.connTimeout != time.Second || o.rpcTimeout != time.Second {
		t.Errorf("default timeouts: connect %v, rpc %v; want 1s and 1s", o.connTimeout, o.rpcTimeout)
	}
}

func TestUnixSocket(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "ghp") // short: socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "s.sock")
	lis, err := net.Listen("unix", path)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	startServer(t, serverConfig{listener: lis})
	probeInProcess("-addr", "unix://"+path).expect(t, exitServing, "status: SERVING")
}

// TestPortOnlyAddr checks the form catalog pods use, -addr=:50051.
func TestPortOnlyAddr(t *testing.T) {
	t.Parallel()
	addr, _ := startServer(t, serverConfig{})
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	probeInProcess("-addr=:"+port, "-rpc-timeout=5s").expect(t, exitServing, "status: SERVING")
}

func TestDialTarget(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		":50051":             "passthrough:///:50051",
		"localhost:50051":    "passthrough:///localhost:50051",
		"127.0.0.1:50051":    "passthrough:///127.0.0.1:50051",
		"[::1]:50051":        "passthrough:///[::1]:50051",
		"dns:///example:443": "dns:///example:443",
		"unix:///tmp/s.sock": "unix:///tmp/s.sock",
		"foo://bar:1":        "passthrough:///foo://bar:1",
	} {
		if got := dialTarget(in); got != want {
			t.Errorf("dialTarget(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	server := newKeyPair(t, "server")
	other := newKeyPair(t, "other")
	addr, _ := startServer(t, serverConfig{creds: grpc.Creds(credentials.NewServerTLSFromCert(&server.tls))})

	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}

	// cause: the failure is checked for the handshake's error, which
	// needs one handshake to end within the connect timeout
	// (failToConnect).
	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		cause bool
		want  []string
	}{
		{"trusted CA", []string{"-tls", "-tls-ca-cert", server.certFile}, exitServing, false, []string{"status: SERVING"}},
		{"no verify", []string{"-tls", "-tls-no-verify"}, exitServing, false, []string{"status: SERVING"}},
		{"server name override", []string{"-tls", "-tls-ca-cert", server.certFile, "-tls-server-name", "probe.test"}, exitServing, false, []string{"status: SERVING"}},
		{"wrong server name", []string{"-tls", "-tls-ca-cert", server.certFile, "-tls-server-name", "wrong.test"}, exitConnectionFailure, true, []string{"timeout: failed to connect service", "wrong.test"}},
		{"untrusted CA", []string{"-tls", "-tls-ca-cert", other.certFile}, exitConnectionFailure, true, []string{"timeout: failed to connect service", "certificate"}},
		{"system roots", []string{"-tls"}, exitConnectionFailure, true, []string{"timeout: failed to connect service", "certificate"}},
		{"plaintext to TLS server", []string{"-connect-timeout", "300ms"}, exitConnectionFailure, false, []string{"timeout: failed to connect service"}},
		{"CA file missing", []string{"-tls", "-tls-ca-cert", filepath.Join(t.TempDir(), "nope.pem")}, exitInvalidArguments, false, []string{"failed to initialize tls credentials. error=", "nope.pem"}},
		{"CA file not PEM", []string{"-tls", "-tls-ca-cert", notPEM}, exitInvalidArguments, false, []string{"failed to initialize tls credentials. error=no root CA certs parsed from file " + notPEM}},
		{"client key missing", []string{"-tls", "-tls-no-verify", "-tls-client-cert", server.certFile, "-tls-client-key", notPEM}, exitInvalidArguments, false, []string{"failed to initialize tls credentials. error=failed to load tls client cert/key pair"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"-addr", addr}, tc.args...)
			if !tc.cause {
				probeInProcess(args...).expect(t, tc.code, tc.want...)
				return
			}
			r, _ := failToConnect(t, func(timeout ...string) result {
				return probeInProcess(slices.Concat(args, timeout)...)
			})
			r.expect(t, tc.code, tc.want...)
		})
	}
}

func TestMutualTLS(t *testing.T) {
	t.Parallel()
	server := newKeyPair(t, "server")
	client := newKeyPair(t, "client")
	clientCAs := x509.NewCertPool()
	clientCAs.AddCert(client.x509)
	addr, _ := startServer(t, serverConfig{creds: grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{server.tls},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    clientCAs,
		MinVersion:   tls.VersionTLS12,
	}))})

	probeInProcess("-addr", addr, "-tls", "-tls-ca-cert", server.certFile,
		"-tls-client-cert", client.certFile, "-tls-client-key", client.keyFile,
	).expect(t, exitServing, "status: SERVING")

	// With TLS 1.3 the client's handshake ends before the server checks
	// the client certificate; the server's alert then kills the connection
	// before it is ready.
	probeInProcess("-addr", addr, "-connect-timeout", "300ms", "-tls", "-tls-ca-cert", server.certFile).
		expect(t, exitConnectionFailure, "timeout: failed to connect service")
}

func TestBadArguments(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "error: -addr not specified"},
		{[]string{"-service", "x"}, "error: -addr not specified"},
		{[]string{"-addr", "x:1", "-connect-timeout", "0s"}, "error: -connect-timeout must be greater than zero (specified: 0s)"},
		{[]string{"-addr", "x:1", "-rpc-timeout", "-1s"}, "error: -rpc-timeout must be greater than zero (specified: -1s)"},
		{[]string{"-addr", "x:1", "-rpc-timeout", "soon"}, `invalid value "soon" for flag -rpc-timeout`},
		{[]string{"-addr", "x:1", "-tls-no-verify"}, "error: specified -tls-no-verify without specifying -tls"},
		{[]string{"-addr", "x:1", "-tls-ca-cert", "ca.pem"}, "error: specified -tls-ca-cert without specifying -tls"},
		{[]string{"-addr", "x:1", "-tls-client-cert", "c.pem"}, "error: specified -tls-client-cert without specifying -tls"},
		{[]string{"-addr", "x:1", "-tls-server-name", "a"}, "error: specified -tls-server-name without specifying -tls"},
		{[]string{"-addr", "x:1", "-tls", "-tls-client-cert", "c.pem"}, "error: specified -tls-client-cert without specifying -tls-client-key"},
		{[]string{"-addr", "x:1", "-tls", "-tls-client-key", "k.pem"}, "error: specified -tls-client-key without specifying -tls-client-cert"},
		{[]string{"-addr", "x:1", "-tls", "-tls-no-verify", "-tls-ca-cert", "ca.pem"}, "error: cannot specify -tls-ca-cert with -tls-no-verify (CA cert would not be used)"},
		{[]string{"-addr", "x:1", "-tls", "-tls-no-verify", "-tls-server-name", "a"}, "error: cannot specify -tls-server-name with -tls-no-verify (server name would not be used)"},
		{[]string{"-addr", "x:1", "-tls", "-spiffe"}, "error: -tls and -spiffe are mutually incompatible"},
		{[]string{"-addr", "x:1", "-tls", "-alts"}, "error: cannot specify -tls with -alts"},
		{[]string{"-addr", "x:1", "-alts", "-spiffe"}, "error: -alts and -spiffe are mutually incompatible"},
		{[]string{"-addr", "x:1", "-rpc-header", "no-colon"}, `invalid RPC header, expected 'key: value', got "no-colon"`},
		{[]string{"-addr", "x:1", "-rpc-header", "bad key: v"}, `invalid RPC header name "bad key"`},
		{[]string{"-addr", "x:1", "-no-such-flag"}, "flag provided but not defined: -no-such-flag"},
	} {
		name := strings.Join(tc.args, " ")
		if name == "" {
			name = "no arguments"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			probeInProcess(tc.args...).expect(t, exitInvalidArguments, tc.want)
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	r := probeInProcess("-h")
	r.expect(t, exitInvalidArguments, "Usage of grpc_health_probe:", "-addr", "-rpc-header")
	if strings.Contains(r.stderr, "error:") {
		t.Errorf("-h printed an error:\n%s", r.stderr)
	}
}

func TestSPIFFE(t *testing.T) {
	t.Parallel()
	probeInProcess("-addr", "127.0.0.1:1", "-spiffe").expect(t, exitSPIFFEFailed,
		"failed to initialize tls credentials with spiffe. error=SPIFFE is not supported")
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := probeInProcess("-version")
	r.expect(t, exitServing)
	if want := "grpc_health_probe (fastopm) " + version.Version + "\n"; r.stdout != want {
		t.Errorf("stdout = %q, want %q", r.stdout, want)
	}
}

func TestRPCHeadersValue(t *testing.T) {
	t.Parallel()
	var h rpcHeaders
	if got := h.String(); got != "" {
		t.Errorf("empty String() = %q", got)
	}
	for _, v := range []string{"A: 1", "a:2", "b:   x: y"} {
		if err := h.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	if got := h.md.Get("a"); !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("a = %q", got)
	}
	if got := h.md.Get("b"); !slices.Equal(got, []string{"x: y"}) {
		t.Errorf("b = %q", got)
	}
	if got := h.String(); got != "a, b" {
		t.Errorf("String() = %q, want names only", got)
	}
	for _, bad := range []string{"", "novalue", ": v", "a b: c", "ä: c"} {
		if err := h.Set(bad); err == nil {
			t.Errorf("Set(%q) succeeded", bad)
		}
	}
}

// TestLastErrorKeepsRealCause checks that the cancelled dial of a client
// being closed does not hide why the earlier attempts failed.
func TestLastErrorKeepsRealCause(t *testing.T) {
	t.Parallel()
	var l lastError
	cause := errors.New("x509: certificate signed by unknown authority")
	l.record(context.Background(), cause)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l.record(ctx, errors.New("dial tcp: operation was canceled"))
	l.record(context.Background(), fmt.Errorf("dial: %w", context.Canceled))
	if got := l.get(); !errors.Is(got, cause) {
		t.Errorf("last error = %v, want %v", got, cause)
	}
}
