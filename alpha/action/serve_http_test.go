package action

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fastopm/fastopm/pkg/api"
	"github.com/fastopm/fastopm/pkg/cache"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "opm test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestServeHTTP: one process answers gRPC and HTTP from the same
// snapshot, over plain HTTP and HTTPS, from a cold start and a cache.
func TestServeHTTP(t *testing.T) {
	t.Parallel()
	certFile, keyFile, pool := selfSigned(t)
	for _, tc := range []struct {
		name     string
		tls      bool
		cacheDir bool
		// prebuilt: an image's cache, built by --cache-only before, with
		// the JSON lines (--cache-http) or without them (derived at start)
		prebuilt, withLines bool
	}{
		{name: "cold"}, {name: "cache-dir", cacheDir: true}, {name: "tls", tls: true},
		{name: "prebuilt gRPC-only cache", cacheDir: true, prebuilt: true},
		{name: "prebuilt cache with lines", cacheDir: true, prebuilt: true, withLines: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Serve{CatalogDir: catalogDir(t, serveCatalog), TempDir: t.TempDir(), HTTPCatalogName: "test-catalog"}
			if tc.cacheDir {
				s.CacheDir = filepath.Join(t.TempDir(), "cache")
				s.Enforce = EnforceOff
			}
			if tc.prebuilt {
				build := Serve{CatalogDir: s.CatalogDir, CacheDir: s.CacheDir, CacheOnly: true, CacheHTTP: tc.withLines}
				if err := build.Run(t.Context()); err != nil {
					t.Fatal(err)
				}
				s.Enforce = EnforceOn
			}
			scheme, client := "http", http.DefaultClient
			if tc.tls {
				s.HTTPTLSCert, s.HTTPTLSKey = certFile, keyFile
				scheme = "https"
				client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
			}
			logs := &syncBuffer{}
			s.Logger = slog.New(slog.NewTextHandler(logs, nil))
			grpcLis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			httpLis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			s.Listener, s.HTTPListener = grpcLis, httpLis
			serving := make(chan net.Addr, 1)
			s.OnServing = func(a net.Addr) { serving <- a }
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx) }()
			var addr net.Addr
			select {
			case err := <-done:
				t.Fatalf("Run: %v\n%s", err, logs)
			case addr = <-serving:
			}
			base := scheme + "://" + httpLis.Addr().String()
			get := func(path string) (int, []byte) {
				t.Helper()
				resp, err := client.Get(base + path)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				return resp.StatusCode, b
			}

			conn, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			stream, err := api.NewRegistryClient(conn).ListPackages(ctx, &api.ListPackageRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var grpcNames []string
			for {
				p, err := stream.Recv()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				grpcNames = append(grpcNames, p.GetName())
			}
			code, body := get("/catalogs/test-catalog/api/v1/packages")
			var list struct{ Packages []struct{ Name string } }
			if err := json.Unmarshal(body, &list); code != 200 || err != nil {
				t.Fatalf("packages: %d %s", code, body)
			}
			if len(list.Packages) != 1 || len(grpcNames) != 1 || list.Packages[0].Name != grpcNames[0] {
				t.Errorf("HTTP packages %v, gRPC packages %v", list.Packages, grpcNames)
			}
			if code, body := get("/api/v1/all"); code != 200 || strings.Count(string(body), "\n") != 3 ||
				!strings.HasPrefix(string(body), `{"defaultChannel":"c","name":"p","schema":"olm.package"}`+"\n") {
				t.Errorf("all: %d %s", code, body)
			}
			if code, _ := get("/readyz"); code != 200 {
				t.Errorf("readyz: %d", code)
			}
			_, metrics := get("/metrics")
			for _, want := range []string{
				`grpc_server_handled_total{grpc_code="OK",grpc_method="ListPackages",grpc_service="api.Registry",grpc_type="server_stream"} 1`,
				`http_requests_total{code="200",handler="packages",method="get"} 1`,
				"opm_catalog_load_seconds ",
				"opm_catalog_bundles 1",
			} {
				if !strings.Contains(string(metrics), want) {
					t.Errorf("metrics lack %q", want)
				}
			}
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run: %v\n%s", err, logs)
				}
			case <-time.After(2 * time.Minute): // a hang guard
				t.Fatal("did not stop after cancel")
			}
			if _, err := client.Get(base + "/healthz"); err == nil {
				t.Error("the HTTP server still answers after the stop")
			}
			if !strings.Contains(logs.String(), "serving HTTP") || !strings.Contains(logs.String(), " url="+base+"/\n") {
				t.Errorf("logs lack the URL %s/:\n%s", base, logs)
			}
			if derived := strings.Contains(logs.String(), "derived them from the catalog"); derived != (tc.prebuilt && !tc.withLines) {
				t.Errorf("lines derived: %v; logs:\n%s", derived, logs)
			}
		})
	}
}

// TestServeCacheHTTP: --cache-only builds a cache for gRPC unless
// --cache-http asks for the JSON lines too; --cache-http over a cache
// without them rebuilds it, or refuses it with enforcement.
func TestServeCacheHTTP(t *testing.T) {
	t.Parallel()
	cat := catalogDir(t, serveCatalog)
	dir := filepath.Join(t.TempDir(), "cache")
	hasLines := func() bool {
		t.Helper()
		snap, err := cache.OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Close()
		return snap.Lines() != nil
	}
	run := func(s Serve) error {
		s.CatalogDir, s.CacheDir, s.CacheOnly = cat, dir, true
		return s.Run(t.Context())
	}
	if err := run(Serve{}); err != nil {
		t.Fatal(err)
	}
	if hasLines() {
		t.Fatal("--cache-only stored the JSON lines without --cache-http")
	}
	if err := run(Serve{Enforce: EnforceOn}); err != nil {
		t.Fatalf("check of a gRPC-only cache: %v", err)
	}
	for _, s := range []Serve{{Enforce: EnforceOn, CacheHTTP: true}, {Enforce: EnforceOn, HTTPAddr: "127.0.0.1:0"}} {
		err := run(s)
		if err == nil || !strings.Contains(err.Error(), "integrity check failed") || !strings.Contains(err.Error(), "is incomplete: it holds no JSON lines") {
			t.Fatalf("check of a cache without lines for HTTP (CacheHTTP %v, HTTPAddr %q) = %v", s.CacheHTTP, s.HTTPAddr, err)
		}
	}
	if err := run(Serve{CacheHTTP: true}); err != nil {
		t.Fatal(err)
	}
	if !hasLines() {
		t.Fatal("--cache-only --cache-http did not rebuild the cache with the lines")
	}
	for _, s := range []Serve{{Enforce: EnforceOn, CacheHTTP: true}, {Enforce: EnforceOn}} {
		if err := run(s); err != nil {
			t.Fatalf("check of a cache with lines (CacheHTTP %v): %v", s.CacheHTTP, err)
		}
	}
}

// TestServeHTTPErrors: bad HTTP settings stop serve with a clear error.
func TestServeHTTPErrors(t *testing.T) {
	t.Parallel()
	certFile, keyFile, _ := selfSigned(t)
	dir := catalogDir(t, serveCatalog)
	for _, tc := range []struct {
		name string
		s    Serve
		want string
	}{
		{"cert without key", Serve{HTTPAddr: "127.0.0.1:0", HTTPTLSCert: certFile}, "--http-tls-cert and --http-tls-key must be given together"},
		{"key is not a key", Serve{HTTPAddr: "127.0.0.1:0", HTTPTLSCert: certFile, HTTPTLSKey: certFile}, "TLS: load certificate"},
		{"missing cert", Serve{HTTPAddr: "127.0.0.1:0", HTTPTLSCert: filepath.Join(dir, "nope.crt"), HTTPTLSKey: keyFile}, "no such file"},
		{"bad name", Serve{HTTPAddr: "127.0.0.1:0", HTTPCatalogName: "Not/Valid"}, "invalid catalog name"},
		{"bad address", Serve{HTTPAddr: "256.0.0.1:http"}, "failed to listen on --http-addr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.CatalogDir, tc.s.TempDir = dir, t.TempDir()
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			tc.s.Listener = lis
			err = tc.s.Run(t.Context())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Run = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestDefaultCatalogName(t *testing.T) {
	for dir, want := range map[string]string{"/configs": "configs", "/srv/My.Catalog": "my.catalog", "/x/under_score": "catalog", "/": "catalog"} {
		if got := defaultCatalogName(dir); got != want {
			t.Errorf("defaultCatalogName(%q) = %q, want %q", dir, got, want)
		}
	}
}

// TestBrowseURL: the URL serve logs for the web page.
func TestBrowseURL(t *testing.T) {
	tcp := func(ip string, port int) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: port} }
	for _, tc := range []struct {
		scheme, requested string
		bound             net.Addr
		want              string
	}{
		{"http", ":8088", tcp("::", 8088), "http://127.0.0.1:8088/"}, // what net.Listen(":8088") gives
		{"http", ":8088", tcp("0.0.0.0", 8088), "http://127.0.0.1:8088/"},
		{"http", "0.0.0.0:8088", tcp("0.0.0.0", 8088), "http://127.0.0.1:8088/"},
		{"http", "[::]:8088", tcp("::", 8088), "http://[::1]:8088/"},
		{"https", ":8443", tcp("::", 8443), "https://127.0.0.1:8443/"},
		{"http", "127.0.0.1:0", tcp("127.0.0.1", 41234), "http://127.0.0.1:41234/"},
		{"http", "[::1]:8088", tcp("::1", 8088), "http://[::1]:8088/"},
		{"http", "[2001:db8::5]:80", tcp("2001:db8::5", 80), "http://[2001:db8::5]:80/"},
		{"http", "192.0.2.7:8088", tcp("192.0.2.7", 8088), "http://192.0.2.7:8088/"},
		{"https", "catalog.example.com:8443", tcp("192.0.2.7", 8443), "https://catalog.example.com:8443/"},
		{"http", "localhost:0", tcp("127.0.0.1", 41234), "http://localhost:41234/"},
		{"http", "", tcp("127.0.0.1", 41234), "http://127.0.0.1:41234/"}, // a listener given (tests)
		{"http", "", tcp("::", 41234), "http://127.0.0.1:41234/"},
	} {
		if got := browseURL(tc.scheme, tc.requested, tc.bound); got != tc.want {
			t.Errorf("browseURL(%q, %q, %v) = %q, want %q", tc.scheme, tc.requested, tc.bound, got, tc.want)
		}
	}
}
