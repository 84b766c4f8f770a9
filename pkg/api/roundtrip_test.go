package api_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fastopm/fastopm/pkg/api"
)

// fakeRegistry answers a few RPCs with fixed data.
type fakeRegistry struct {
	api.UnimplementedRegistryServer
}

func (fakeRegistry) GetPackage(_ context.Context, req *api.GetPackageRequest) (*api.Package, error) {
	return &api.Package{
		Name:               req.GetName(),
		Channels:           []*api.Channel{{Name: "alpha", CsvName: "etcd.v0.9.4"}},
		DefaultChannelName: "alpha",
	}, nil
}

func (fakeRegistry) GetBundleForChannel(_ context.Context, req *api.GetBundleInChannelRequest) (*api.Bundle, error) {
	return &api.Bundle{CsvName: "head", PackageName: req.GetPkgName(), ChannelName: req.GetChannelName()}, nil
}

func (fakeRegistry) ListPackages(_ *api.ListPackageRequest, stream grpc.ServerStreamingServer[api.PackageName]) error {
	for _, n := range []string{"a", "b"} {
		if err := stream.Send(&api.PackageName{Name: n}); err != nil {
			return err
		}
	}
	return nil
}

type fakeExperimental struct {
	api.UnimplementedExperimentalRegistryServer
}

func (fakeExperimental) ExperimentalListPackageCustomSchemas(req *api.ExperimentalListPackageCustomSchemasRequest, stream grpc.ServerStreamingServer[structpb.Struct]) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	if v := md.Get("x-acknowledge-experimental"); len(v) == 0 || v[0] != "true" {
		return nil
	}
	s, err := structpb.NewStruct(map[string]any{"schema": req.GetSchema(), "package": req.GetPackageName()})
	if err != nil {
		return err
	}
	return stream.Send(s)
}

// methodLog records the method paths the server saw.
type methodLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *methodLog) add(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paths = append(l.paths, p)
}

func (l *methodLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.paths) == 0 {
		return ""
	}
	return l.paths[len(l.paths)-1]
}

func startServer(t *testing.T) (*grpc.ClientConn, *methodLog) {
	t.Helper()
	log := &methodLog{}
	srv := grpc.NewServer(
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			log.add(info.FullMethod)
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			log.add(info.FullMethod)
			return h(srv, ss)
		}),
	)
	api.RegisterRegistryServer(srv, fakeRegistry{})
	api.RegisterExperimentalRegistryServer(srv, fakeExperimental{})

	lis := bufconn.Listen(1 << 20)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
	)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn, log
}

// testContext bounds a test's calls: a hang guard, minutes, that a
// loaded machine never reaches.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestRawPathUnary calls by literal path with plain messages, as a client
// generated from upstream's proto does, and checks the server routes it.
func TestRawPathUnary(t *testing.T) {
	conn, log := startServer(t)
	ctx := testContext(t)

	var pkg api.Package
	if err := conn.Invoke(ctx, "/api.Registry/GetPackage", &api.GetPackageRequest{Name: "etcd"}, &pkg); err != nil {
		t.Fatalf("GetPackage: %v", err)
	}
	want := &api.Package{Name: "etcd", Channels: []*api.Channel{{Name: "alpha", CsvName: "etcd.v0.9.4"}}, DefaultChannelName: "alpha"}
	if !proto.Equal(&pkg, want) {
		t.Errorf("GetPackage = %v, want %v", &pkg, want)
	}
	if got := log.last(); got != "/api.Registry/GetPackage" {
		t.Errorf("server saw %q", got)
	}

	// The deprecated RPC must still be served: OLM's package server calls it.
	var b api.Bundle
	if err := conn.Invoke(ctx, "/api.Registry/GetBundleForChannel", &api.GetBundleInChannelRequest{PkgName: "etcd", ChannelName: "alpha"}, &b); err != nil {
		t.Fatalf("GetBundleForChannel: %v", err)
	}
	if b.GetCsvName() != "head" || b.GetPackageName() != "etcd" || b.GetChannelName() != "alpha" {
		t.Errorf("GetBundleForChannel = %v", &b)
	}
}

func TestClientStreams(t *testing.T) {
	conn, log := startServer(t)
	ctx := testContext(t)

	stream, err := api.NewRegistryClient(conn).ListPackages(ctx, &api.ListPackageRequest{})
	if err != nil {
		t.Fatalf("ListPackages: %v", err)
	}
	var names []string
	for {
		p, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		names = append(names, p.GetName())
	}
	if len(names) != 2 || names[0] != "a" || names[1] != "b" {
		t.Errorf("ListPackages = %v, want [a b]", names)
	}
	if got := log.last(); got != "/api.Registry/ListPackages" {
		t.Errorf("server saw %q", got)
	}
}

func TestExperimentalStream(t *testing.T) {
	conn, log := startServer(t)
	client := api.NewExperimentalRegistryClient(conn)
	req := &api.ExperimentalListPackageCustomSchemasRequest{Schema: "my.schema", PackageName: "etcd"}

	recvAll := func(ctx context.Context) []*structpb.Struct {
		t.Helper()
		stream, err := client.ExperimentalListPackageCustomSchemas(ctx, req)
		if err != nil {
			t.Fatalf("call: %v", err)
		}
		var out []*structpb.Struct
		for {
			s, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return out
			}
			if err != nil {
				t.Fatalf("recv: %v", err)
			}
			out = append(out, s)
		}
	}

	if got := recvAll(testContext(t)); len(got) != 0 {
		t.Errorf("without acknowledgement got %d blobs, want 0", len(got))
	}
	ctx := metadata.AppendToOutgoingContext(testContext(t), "x-acknowledge-experimental", "true")
	got := recvAll(ctx)
	if len(got) != 1 {
		t.Fatalf("got %d blobs, want 1", len(got))
	}
	if s := got[0].GetFields()["schema"].GetStringValue(); s != "my.schema" {
		t.Errorf("schema = %q", s)
	}
	if p := log.last(); p != "/api.ExperimentalRegistry/ExperimentalListPackageCustomSchemas" {
		t.Errorf("server saw %q", p)
	}
}
