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
)

// snapshotOf builds the snapshot of a catalog the way a cold start does.
func snapshotOf(t testing.TB, fsys fs.FS) *cache.Snapshot {
	t.Helper()
	snap, _, err := cache.Build(t.Context(), fsys, t.TempDir())
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	t.Cleanup(func() { snap.Close() })
	return snap
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
