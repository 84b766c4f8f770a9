package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/api"
	"github.com/fastopm/fastopm/pkg/cache"
)

// TestServiceDescriptions checks that our service descriptions offer
// exactly the methods of pkg/api's, with the same shapes.
func TestServiceDescriptions(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]*grpc.ServiceDesc{{&registryDesc, &api.Registry_ServiceDesc}, {&experimentalDesc, &api.ExperimentalRegistry_ServiceDesc}} {
		ours, theirs := pair[0], pair[1]
		if ours.ServiceName != theirs.ServiceName || ours.Metadata != theirs.Metadata {
			t.Errorf("service %s (%v), want %s (%v)", ours.ServiceName, ours.Metadata, theirs.ServiceName, theirs.Metadata)
		}
		names := func(d *grpc.ServiceDesc) []string {
			var out []string
			for _, m := range d.Methods {
				out = append(out, "unary "+m.MethodName)
			}
			for _, s := range d.Streams {
				out = append(out, fmt.Sprintf("stream %s server=%v client=%v", s.StreamName, s.ServerStreams, s.ClientStreams))
			}
			slices.Sort(out)
			return out
		}
		if got, want := names(ours), names(theirs); !slices.Equal(got, want) {
			t.Errorf("%s methods:\n%q\nwant\n%q", ours.ServiceName, got, want)
		}
	}
}

func TestErrorCodes(t *testing.T) {
	t.Parallel()
	c := api.NewRegistryClient(serveDir(t, "../../testdata/catalogs/fixture-olm-deprecations"))
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		call func() error
		code codes.Code
		msg  string
	}{
		{"GetPackage", func() error { _, err := c.GetPackage(ctx, &api.GetPackageRequest{Name: "nope"}); return err },
			codes.NotFound, `package "nope" not found`},
		{"GetPackage empty", func() error { _, err := c.GetPackage(ctx, &api.GetPackageRequest{}); return err },
			codes.InvalidArgument, `package "" not found`},
		{"GetBundle", func() error {
			_, err := c.GetBundle(ctx, &api.GetBundleRequest{PkgName: "test-package", ChannelName: "stable", CsvName: "x"})
			return err
		}, codes.NotFound, `package "test-package", channel "stable", bundle "x" not found`},
		{"GetBundleThatReplaces", func() error {
			_, err := c.GetBundleThatReplaces(ctx, &api.GetReplacementRequest{CsvName: "x", PkgName: "test-package", ChannelName: "stable"})
			return err
		}, codes.NotFound, `no entry found for package "test-package", channel "stable"`},
		{"GetChannelEntriesThatReplace", func() error {
			_, err := recv(c.GetChannelEntriesThatReplace(ctx, &api.GetAllReplacementsRequest{CsvName: "x"}))
			return err
		}, codes.NotFound, `no channel entries found that replace x`},
		{"GetDefaultBundleThatProvides empty", func() error {
			_, err := c.GetDefaultBundleThatProvides(ctx, &api.GetDefaultProviderRequest{})
			return err
		}, codes.InvalidArgument, `no channel entries found that provide group:"" version:"" kind:""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := status.Convert(tc.call())
			if st.Code() != tc.code || st.Message() != tc.msg {
				t.Errorf("got %v %q, want %v %q", st.Code(), st.Message(), tc.code, tc.msg)
			}
		})
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	snap := snapshotOf(t, os.DirFS("../../testdata/catalogs/fixture-olm-deprecations"))
	conn, srv := serve(t, snap, Options{})
	hc := healthpb.NewHealthClient(conn)
	ctx := t.Context()
	watch, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: "Registry"})
	if err != nil {
		t.Fatal(err)
	}
	next := func() healthpb.HealthCheckResponse_ServingStatus {
		r, err := watch.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return r.GetStatus()
	}
	if s := next(); s != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("watch: %v", s)
	}
	for _, name := range []string{"", "Registry", "api.Registry", "anything"} {
		r, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: name})
		if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v, %v; want SERVING", name, r.GetStatus(), err)
		}
	}
	srv.Health.SetServing(false)
	if s := next(); s != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("watch after SetServing(false): %v", s)
	}
	r, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("Check = %v, %v; want NOT_SERVING", r.GetStatus(), err)
	}
	list, err := hc.List(ctx, &healthpb.HealthListRequest{})
	if err != nil || len(list.GetStatuses()) != 3 {
		t.Errorf("List = %v, %v", list, err)
	}
}

func TestReflection(t *testing.T) {
	t.Parallel()
	conn := serveDir(t, "../../testdata/catalogs/fixture-olm-deprecations")
	want := []string{"api.ExperimentalRegistry", "api.Registry", "grpc.health.v1.Health",
		"grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"}
	t.Run("v1", func(t *testing.T) {
		stream, err := reflectionv1.NewServerReflectionClient(conn).ServerReflectionInfo(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		send := func(req *reflectionv1.ServerReflectionRequest) *reflectionv1.ServerReflectionResponse {
			if err := stream.Send(req); err != nil {
				t.Fatal(err)
			}
			resp, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		resp := send(&reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_ListServices{}})
		var got []string
		for _, s := range resp.GetListServicesResponse().GetService() {
			got = append(got, s.GetName())
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("services %v, want %v", got, want)
		}
		resp = send(&reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "api.Registry"}})
		if len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
			t.Errorf("no file descriptor for api.Registry: %v", resp)
		}
	})
	t.Run("v1alpha", func(t *testing.T) {
		stream, err := reflectionv1alpha.NewServerReflectionClient(conn).ServerReflectionInfo(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		//lint:ignore SA1019 grpcurl and older clients still use reflection v1alpha, so it is tested.
		if err := stream.Send(&reflectionv1alpha.ServerReflectionRequest{MessageRequest: &reflectionv1alpha.ServerReflectionRequest_ListServices{}}); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		//lint:ignore SA1019 grpcurl and older clients still use reflection v1alpha, so it is tested.
		if n := len(resp.GetListServicesResponse().GetService()); n != len(want) {
			t.Errorf("%d services, want %d", n, len(want))
		}
	})
}

func TestStreamsSorted(t *testing.T) {
	t.Parallel()
	c := api.NewRegistryClient(serveDir(t, "../../testdata/catalogs/submariner-v4.14"))
	bundles, err := recv(c.ListBundles(t.Context(), &api.ListBundlesRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(bundles))
	for i, b := range bundles {
		keys[i] = b.GetChannelName() + "\x00" + b.GetPackageName() + "\x00" + b.GetCsvName()
		if b.GetCsvJson() != "" || len(b.GetObject()) > 0 {
			t.Errorf("%s: ListBundles sends csvJson/object for a bundle with an image", b.GetCsvName())
		}
	}
	if len(keys) == 0 || !slices.IsSorted(keys) {
		t.Errorf("ListBundles is not in (channel, package, name) order")
	}
}

func TestExperimentalCustomSchemas(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(`{"schema":"olm.package","name":"p","defaultChannel":"c"}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"b1"}]}
{"schema":"olm.bundle","name":"b1","package":"p","image":"x.io/b:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
{"schema":"io.example.lifecycle","package":"p","data":{"phase":"ga","n":2}}
{"schema":"io.example.lifecycle","name":"global"}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := api.NewExperimentalRegistryClient(serveDir(t, dir))
	ack := metadata.AppendToOutgoingContext(t.Context(), headerAcknowledgeExperimental, "true")
	list := func(ctx context.Context, schema, pkg string) ([]*structpb.Struct, error) {
		return recv(c.ExperimentalListPackageCustomSchemas(ctx, &api.ExperimentalListPackageCustomSchemasRequest{Schema: schema, PackageName: pkg}))
	}
	for _, tc := range []struct {
		name        string
		ctx         context.Context
		schema, pkg string
		want        []string // the "schema" and "name"/"package" of each blob
		code        codes.Code
	}{
		{"without the header", t.Context(), "io.example.lifecycle", "p", nil, codes.OK},
		{"package blobs", ack, "io.example.lifecycle", "p", []string{"io.example.lifecycle/p"}, codes.OK},
		{"package-less blobs", ack, "io.example.lifecycle", "", []string{"io.example.lifecycle/global"}, codes.OK},
		{"unknown schema", ack, "no.such.schema", "p", nil, codes.OK},
		{"OLM schema", ack, "olm.bundle", "p", nil, codes.OK},
		{"no schema", ack, "", "p", nil, codes.InvalidArgument},
		{"bad schema", ack, "../x", "p", nil, codes.InvalidArgument},
		{"bad package", ack, "io.example.lifecycle", "-x", nil, codes.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := list(tc.ctx, tc.schema, tc.pkg)
			if status.Code(err) != tc.code {
				t.Fatalf("error %v, want code %v", err, tc.code)
			}
			// Upstream's words for a bad query.
			if msg := status.Convert(err).Message(); tc.code == codes.InvalidArgument && tc.schema != "" &&
				!strings.HasPrefix(msg, "invalid custom schema query: invalid ") {
				t.Errorf("message %q", msg)
			}
			var names []string
			for _, s := range got {
				f := s.GetFields()
				names = append(names, f["schema"].GetStringValue()+"/"+f["name"].GetStringValue()+f["package"].GetStringValue())
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("got %v, want %v", names, tc.want)
			}
		})
	}
	got, _ := list(ack, "io.example.lifecycle", "p")
	if n := got[0].GetFields()["data"].GetStructValue().GetFields()["n"].GetNumberValue(); n != 2 {
		t.Errorf("data.n = %v", n)
	}
}

// TestMessageSizeLimit checks the 4 MiB decision of docs/serve.md with a
// default client, which refuses larger messages.
func TestMessageSizeLimit(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 5<<20)
	csv := func(name, extra string) string {
		return fmt.Sprintf(`{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":%q,"annotations":{"big":%q}}}`, name, extra)
	}
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"x":"` + big + `"}}`
	obj := func(s string) string {
		return fmt.Sprintf(`{"type":"olm.bundle.object","value":{"data":%q}}`, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	bundle := func(name, image string, props ...string) string {
		img := ""
		if image != "" {
			img = fmt.Sprintf(`"image":%q,`, image)
		}
		return fmt.Sprintf(`{"schema":"olm.bundle","name":%q,"package":"p",%s"properties":[{"type":"olm.package","value":{"packageName":"p","version":"%s"}}%s]}`,
			name, img, strings.TrimPrefix(name, "p.v"), strings.Join(append([]string{""}, props...), ","))
	}
	var buf bytes.Buffer
	buf.WriteString(`{"schema":"olm.package","name":"p","defaultChannel":"small"}` + "\n")
	buf.WriteString(`{"schema":"olm.channel","package":"p","name":"small","entries":[{"name":"p.v1.0.0"}]}` + "\n")
	buf.WriteString(`{"schema":"olm.channel","package":"p","name":"objects","entries":[{"name":"p.v2.0.0"}]}` + "\n")
	buf.WriteString(`{"schema":"olm.channel","package":"p","name":"csv","entries":[{"name":"p.v3.0.0"}]}` + "\n")
	buf.WriteString(`{"schema":"olm.channel","package":"p","name":"inline","entries":[{"name":"p.v4.0.0"}]}` + "\n")
	buf.WriteString(bundle("p.v1.0.0", "x.io/p:1", obj(csv("p.v1.0.0", ""))) + "\n")
	buf.WriteString(bundle("p.v2.0.0", "x.io/p:2", obj(csv("p.v2.0.0", "")), obj(cm)) + "\n")
	buf.WriteString(bundle("p.v3.0.0", "x.io/p:3", obj(csv("p.v3.0.0", big))) + "\n")
	buf.WriteString(bundle("p.v4.0.0", "", obj(csv("p.v4.0.0", "")), obj(cm)) + "\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.json"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c := api.NewRegistryClient(serveDir(t, dir))
	ctx := t.Context()
	get := func(ch, name string) (*api.Bundle, error) {
		return c.GetBundle(ctx, &api.GetBundleRequest{PkgName: "p", ChannelName: ch, CsvName: name})
	}

	b, err := get("small", "p.v1.0.0")
	if err != nil || len(b.GetObject()) != 1 {
		t.Errorf("small bundle: %v objects, %v", len(b.GetObject()), err)
	}
	// Too large with its objects, which the image carries: sent without.
	b, err = get("objects", "p.v2.0.0")
	if err != nil {
		t.Fatalf("bundle with large objects and an image: %v", err)
	}
	if b.GetCsvJson() == "" || len(b.GetObject()) != 0 || b.GetBundlePath() == "" {
		t.Errorf("bundle with large objects: csvJson %d bytes, %d objects", len(b.GetCsvJson()), len(b.GetObject()))
	}
	// csvJson alone is too large: refused with a clear message.
	for _, tc := range [][2]string{{"csv", "p.v3.0.0"}, {"inline", "p.v4.0.0"}} {
		_, err = get(tc[0], tc[1])
		if st := status.Convert(err); st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "gRPC message limit") {
			t.Errorf("%s: %v, want ResourceExhausted", tc[1], err)
		}
	}
	// ListBundles leaves out only the bundle without an image that does
	// not fit; the default client reads the rest.
	all, err := recv(c.ListBundles(ctx, &api.ListBundlesRequest{}))
	if err != nil {
		t.Fatalf("ListBundles: %v", err)
	}
	var names []string
	for _, b := range all {
		names = append(names, b.GetCsvName())
	}
	slices.Sort(names)
	if want := []string{"p.v1.0.0", "p.v2.0.0", "p.v3.0.0"}; !slices.Equal(names, want) {
		t.Errorf("ListBundles sent %v, want %v", names, want)
	}
}

func TestCorruptAnswerIsDataLoss(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	snap, err := savedSnapshot(t.Context(), os.DirFS("../../testdata/catalogs/fixture-olm-deprecations"), dir, "v")
	if err != nil {
		t.Fatal(err)
	}
	b := snap.Index.Bundles[0]
	snap.Close()
	testutil.FlipByte(t, filepath.Join(dir, cache.FileName), int64(b.Body.Off)+int64(b.Body.Prefix)-1)
	snap, err = cache.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { snap.Close() })
	conn, _ := serve(t, snap, Options{})
	//lint:ignore SA1019 OLM's package server still calls the deprecated RPC, so it is tested.
	_, err = api.NewRegistryClient(conn).GetBundleForChannel(t.Context(), &api.GetBundleInChannelRequest{PkgName: "test-package", ChannelName: "stable"})
	if status.Code(err) != codes.DataLoss {
		t.Errorf("error %v, want DataLoss", err)
	}
}

// TestWireMatchesUpstreamEncoding decodes a pre-encoded answer and checks
// it re-encodes to the same bytes (field order and all).
func TestWireMatchesUpstreamEncoding(t *testing.T) {
	t.Parallel()
	conn := serveDir(t, "../../testdata/catalogs/fixture-olm-deprecations")
	var raw rawBytes
	err := conn.Invoke(t.Context(), "/api.Registry/GetBundleForChannel",
		&api.GetBundleInChannelRequest{PkgName: "test-package", ChannelName: "stable"}, &raw, grpc.ForceCodecV2(rawCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	var b api.Bundle
	if err := proto.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	again, _ := proto.MarshalOptions{Deterministic: true}.Marshal(&b)
	if !bytes.Equal(raw, again) {
		t.Errorf("the answer's bytes are not in canonical field order")
	}
	if b.GetDeprecation().GetMessage() == "" || b.GetReplaces() != "" {
		t.Errorf("unexpected answer %v", &b)
	}
}

// rawBytes and rawCodec receive a message's bytes undecoded.
type rawBytes []byte

type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, err := proto.Marshal(v.(proto.Message))
	return mem.BufferSlice{mem.SliceBuffer(b)}, err
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*(v.(*rawBytes)) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

// TestGzip: a client that compresses its requests (and so gets compressed
// answers) is served, as upstream serves it.
func TestGzip(t *testing.T) {
	t.Parallel()
	conn := serveDir(t, "../../testdata/catalogs/submariner-v4.14")
	c := api.NewRegistryClient(conn)
	// By name: this test must not register the compressor itself.
	gz := grpc.UseCompressor("gzip")
	plain, err := recv(c.ListBundles(t.Context(), &api.ListBundlesRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	zipped, err := recv(c.ListBundles(t.Context(), &api.ListBundlesRequest{}, gz))
	if err != nil {
		t.Fatal(err)
	}
	if len(zipped) == 0 || len(zipped) != len(plain) || !proto.Equal(zipped[0], plain[0]) {
		t.Errorf("gzip ListBundles: %d messages, want %d equal to the plain ones", len(zipped), len(plain))
	}
	p, err := c.GetPackage(t.Context(), &api.GetPackageRequest{Name: plain[0].GetPackageName()}, gz)
	if err != nil || p.GetName() != plain[0].GetPackageName() {
		t.Errorf("gzip GetPackage: %v, %v", p, err)
	}
	hc := healthpb.NewHealthClient(conn)
	if r, err := hc.Check(t.Context(), &healthpb.HealthCheckRequest{}, gz); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("gzip health check: %v, %v", r, err)
	}
}

// A bundle whose CSV is synthesized from olm.csv.metadata takes its
// package's icon and description, which the load keeps out of memory
// until then.
func TestSynthesizedCSVTakesPackageIconAndDescription(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	icon := base64.StdEncoding.EncodeToString([]byte("<svg/>"))
	catalog := `{"schema":"olm.package","name":"p","defaultChannel":"c","description":"the package's words","icon":{"base64data":"` + icon + `","mediatype":"image/svg+xml"}}
{"schema":"olm.package","name":"q","defaultChannel":"c"}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"p.v1"}]}
{"schema":"olm.channel","package":"q","name":"c","entries":[{"name":"q.v1"}]}
{"schema":"olm.bundle","name":"p.v1","package":"p","image":"x.io/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},{"type":"olm.csv.metadata","value":{"displayName":"P"}}]}
{"schema":"olm.bundle","name":"q.v1","package":"q","image":"x.io/q:1","properties":[{"type":"olm.package","value":{"packageName":"q","version":"1.0.0"}},{"type":"olm.csv.metadata","value":{"displayName":"Q","description":"its own"}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	c := api.NewRegistryClient(serveDir(t, dir))
	for _, tc := range []struct{ pkg, want, notWant string }{
		{"p", `"displayName":"P","description":"the package's words","provider":{},"icon":[{"base64data":"` + icon + `","mediatype":"image/svg+xml"}]`, ""},
		{"q", `"displayName":"Q","description":"its own","provider":{},"cleanup"`, `"icon"`},
	} {
		b, err := c.GetBundle(t.Context(), &api.GetBundleRequest{PkgName: tc.pkg, ChannelName: "c", CsvName: tc.pkg + ".v1"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.GetCsvJson(), tc.want) || (tc.notWant != "" && strings.Contains(b.GetCsvJson(), tc.notWant)) {
			t.Errorf("%s csvJson: %s\nwant it to contain %s", tc.pkg, b.GetCsvJson(), tc.want)
		}
	}
}
