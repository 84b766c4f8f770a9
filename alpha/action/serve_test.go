package action

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/api"
	"github.com/fastopm/fastopm/pkg/cache"
)

const serveCatalog = `{"schema":"olm.package","name":"p","defaultChannel":"c"}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"p.v1"}]}
{"schema":"olm.bundle","name":"p.v1","package":"p","image":"x.io/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`

func catalogDir(t *testing.T, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runServe runs s on a 127.0.0.1:0 listener until it serves, checks the
// health service and a query, then stops it with a cancel and returns its
// result and logs.
func runServe(t *testing.T, s Serve) (string, error) {
	t.Helper()
	logs := &syncBuffer{}
	s.Logger = slog.New(slog.NewTextHandler(logs, nil))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Listener = lis
	serving := make(chan net.Addr, 1)
	s.OnServing = func(a net.Addr) { serving <- a }
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	select {
	case err := <-done:
		lis.Close()
		return logs.String(), err
	case addr := <-serving:
		conn, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		r, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "Registry"})
		if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health: %v %v", r.GetStatus(), err)
		}
		//lint:ignore SA1019 OLM's package server still calls the deprecated RPC, so it is tested.
		if _, err := api.NewRegistryClient(conn).GetBundleForChannel(ctx, &api.GetBundleInChannelRequest{PkgName: "p", ChannelName: "c"}); err != nil {
			t.Errorf("GetBundleForChannel: %v", err)
		}
		cancel()
		select {
		case err := <-done:
			return logs.String(), err
		case <-time.After(2 * time.Minute): // a hang guard
			t.Fatal("did not stop after cancel")
		}
	}
	return "", nil
}

func TestServeColdStart(t *testing.T) {
	t.Parallel()
	logs, err := runServe(t, Serve{CatalogDir: catalogDir(t, serveCatalog), TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, logs)
	}
	if !strings.Contains(logs, "serving registry") || !strings.Contains(logs, "shutting down server") {
		t.Errorf("logs:\n%s", logs)
	}
}

func TestServeInvalidCatalog(t *testing.T) {
	t.Parallel()
	tl := filepath.Join(t.TempDir(), "termination-log")
	dir := catalogDir(t, `{"schema":"olm.package","name":"p","defaultChannel":"c"}`)
	_, err := runServe(t, Serve{CatalogDir: dir, TerminationLog: tl})
	if err == nil || !strings.Contains(err.Error(), "invalid index") {
		t.Fatalf("error %v, want the validation error", err)
	}
	got, _ := os.ReadFile(tl)
	if string(got) != err.Error()+"\n" {
		t.Errorf("termination log %q, want %q", got, err.Error()+"\n")
	}
}

func TestServeCachePolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		prebuilt bool // run --cache-only first
		change   bool // change the catalog after the cache is built
		damage   bool // flip a byte of a stored answer
		serve    Serve
		wantErr  string // "" serves
		wantLog  string
	}{
		{"valid cache, implied enforcement", true, false, false, Serve{}, "", "found a valid cache"},
		{"valid cache, explicit enforcement", true, false, false, Serve{Enforce: EnforceOn}, "", "found a valid cache"},
		{"stale cache, implied enforcement", true, true, false, Serve{}, `integrity check failed: cache `, ""},
		{"stale cache, enforcement off", true, true, false, Serve{Enforce: EnforceOff}, "", "building cache"},
		// An image that shipped no cache must not crash-loop its pod.
		{"empty cache dir, implied enforcement", false, false, false, Serve{}, "", "no pre-built cache"},
		{"empty cache dir, explicit enforcement", false, false, false, Serve{Enforce: EnforceOn}, "integrity check failed: cache", ""},
		{"cache-only check of a valid cache", true, false, false, Serve{CacheOnly: true, Enforce: EnforceOn}, "", ""},
		{"cache-only check of a stale cache", true, true, false, Serve{CacheOnly: true, Enforce: EnforceOn}, "is stale", ""},
		// Every stored answer is checked before serving, as by the image build.
		{"cache-only check of a damaged answer", true, false, true, Serve{CacheOnly: true, Enforce: EnforceOn}, `is corrupt: bundle "p.v1" of package "p": stored answer is corrupt`, ""},
		{"cache-only rebuild of a damaged answer", true, false, true, Serve{CacheOnly: true}, "", ""},
		{"damaged answer, implied enforcement", true, false, true, Serve{}, `integrity check failed: cache `, ""},
		{"damaged answer, enforcement off", true, false, true, Serve{Enforce: EnforceOff}, "", "is corrupt: bundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cat := catalogDir(t, serveCatalog)
			cacheDir := filepath.Join(t.TempDir(), "cache")
			if tc.prebuilt {
				if err := (Serve{CatalogDir: cat, CacheDir: cacheDir, CacheOnly: true}).Run(t.Context()); err != nil {
					t.Fatalf("--cache-only: %v", err)
				}
			}
			if tc.change {
				os.WriteFile(filepath.Join(cat, "catalog.json"), []byte(serveCatalog+"\n"), 0o644)
			}
			if tc.damage {
				damageAnswer(t, cacheDir)
			}
			s := tc.serve
			s.CatalogDir, s.CacheDir, s.TempDir = cat, cacheDir, t.TempDir()
			var (
				logs string
				err  error
			)
			if s.CacheOnly {
				err = s.Run(t.Context())
			} else {
				logs, err = runServe(t, s)
			}
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v\n%s", err, logs)
			case !strings.Contains(logs, tc.wantLog):
				t.Errorf("logs lack %q:\n%s", tc.wantLog, logs)
			}
			if err == nil && s.CacheOnly {
				// What --cache-only accepts or leaves behind is whole.
				snap, err := cache.OpenDir(cacheDir)
				if err != nil {
					t.Fatal(err)
				}
				defer snap.Close()
				if err := snap.Verify(t.Context()); err != nil {
					t.Errorf("cache after --cache-only: %v", err)
				}
			}
		})
	}
}

// damageAnswer flips the last byte of the first bundle's stored answer.
func damageAnswer(t *testing.T, cacheDir string) {
	t.Helper()
	snap, err := cache.OpenDir(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	body, path := snap.Index.Bundles[0].Body, snap.Path
	snap.Close()
	testutil.FlipByte(t, path, int64(body.Off)+int64(body.Len)-1)
}

func TestServeEnforceNeedsCacheDir(t *testing.T) {
	t.Parallel()
	err := Serve{CatalogDir: catalogDir(t, serveCatalog), Enforce: EnforceOn}.Run(t.Context())
	if err == nil || err.Error() != "--cache-dir must be specified with --cache-enforce-integrity" {
		t.Errorf("error %v", err)
	}
}

func TestServeCacheOnlyWritesCache(t *testing.T) {
	t.Parallel()
	cat := catalogDir(t, serveCatalog)
	cacheDir := filepath.Join(t.TempDir(), "c")
	if err := (Serve{CatalogDir: cat, CacheDir: cacheDir, CacheOnly: true}).Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	snap, err := cache.OpenDir(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if err := snap.Fingerprint.Check(t.Context(), os.DirFS(cat), snap.Path); err != nil {
		t.Error(err)
	}
}

func TestServePprof(t *testing.T) {
	t.Parallel()
	// pprof is off unless an address is given.
	p, err := startProfiler("", true, slog.New(slog.DiscardHandler))
	if err != nil || p.srv != nil {
		t.Fatalf("startProfiler(\"\") = %v, %v", p.srv, err)
	}
	p.stop()
	logs, err := runServe(t, Serve{CatalogDir: catalogDir(t, serveCatalog), TempDir: t.TempDir(), PprofAddr: "127.0.0.1:0"})
	if err != nil || !strings.Contains(logs, "serving pprof") {
		t.Errorf("error %v, logs:\n%s", err, logs)
	}
}
