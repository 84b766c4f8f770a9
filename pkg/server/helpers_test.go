package server

import (
	"context"
	"io/fs"
	"net"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/registry"
	"github.com/fastopm/fastopm/pkg/scratch"
)

// snapshotOf builds the snapshot of a catalog the way a cold start does.
func snapshotOf(t testing.TB, fsys fs.FS) *cache.Snapshot {
	t.Helper()
	snap, err := coldSnapshot(t.Context(), fsys, t.TempDir())
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	t.Cleanup(func() { snap.Close() })
	return snap
}

// coldSnapshot loads a catalog into an unsaved cache in tmpDir, as opm
// serve's cold start does (alpha/action.LoadServeTemp, without its memory
// policy).
func coldSnapshot(ctx context.Context, fsys fs.FS, tmpDir string) (*cache.Snapshot, error) {
	st, err := scratch.Create(tmpDir, "serve-*.cache")
	if err != nil {
		return nil, err
	}
	w, err := cache.NewWriter(st)
	if err != nil {
		return nil, err
	}
	x, err := registry.Load(ctx, fsys, registry.Options{Sink: w, Stash: w})
	if err != nil {
		st.Close()
		return nil, err
	}
	return w.Snapshot(x)
}

// savedSnapshot builds the cache of a catalog into dir, as opm serve
// --cache-dir does (alpha/action.LoadServeDir).
func savedSnapshot(ctx context.Context, fsys fs.FS, dir, producer string) (*cache.Snapshot, error) {
	b, err := cache.NewDirBuild(dir)
	if err != nil {
		return nil, err
	}
	fp, err := cache.ComputeFingerprint(ctx, fsys)
	if err == nil {
		var x *registry.Index
		if x, err = registry.Load(ctx, fsys, registry.Options{Sink: b.Writer(), Stash: b.Writer(), Lines: b.Writer()}); err == nil {
			return b.Commit(ctx, x, fp, producer)
		}
	}
	b.Abort()
	return nil, err
}

// serve starts a server for snap on a bufconn listener and returns a
// client connection to it.
func serve(t testing.TB, snap *cache.Snapshot, opts Options) (*grpc.ClientConn, *Server) {
	t.Helper()
	srv, err := New(snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	lis := bufconn.Listen(1 << 20)
	srv.Health.SetServing(true)
	done := make(chan error, 1)
	go func() { done <- srv.GRPC.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop(5 * time.Second)
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, srv
}

// serveDir serves the catalog in dir.
func serveDir(t testing.TB, dir string) *grpc.ClientConn {
	t.Helper()
	conn, _ := serve(t, snapshotOf(t, os.DirFS(dir)), Options{})
	return conn
}
