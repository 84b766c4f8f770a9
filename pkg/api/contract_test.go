package api_test

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/fastopm/fastopm/pkg/api"
)

// field describes one field of the wire contract (compat.md §4). Every
// field is a string unless msg is set; msg is the full name of its message
// type.
type field struct {
	num      protowire.Number
	name     string
	repeated bool
	msg      protoreflect.FullName
}

func str(num protowire.Number, name string) field { return field{num: num, name: name} }
func strs(num protowire.Number, name string) field {
	return field{num: num, name: name, repeated: true}
}
func msg(num protowire.Number, name string, typ protoreflect.FullName) field {
	return field{num: num, name: name, msg: typ}
}
func msgs(num protowire.Number, name string, typ protoreflect.FullName) field {
	return field{num: num, name: name, repeated: true, msg: typ}
}

// gvkFields are the fields of GroupVersionKind and of the three provider
// requests.
var gvkFields = []field{str(1, "group"), str(2, "version"), str(3, "kind"), str(4, "plural")}

// wireMessages is compat.md §4 written as a table: every message of the
// contract, by proto full name, with all of its fields.
var wireMessages = map[protoreflect.FullName][]field{
	"api.PackageName": {str(1, "name")},
	"api.Package": {
		str(1, "name"),
		msgs(2, "channels", "api.Channel"),
		str(3, "defaultChannelName"),
		msg(4, "deprecation", "api.Deprecation"),
	},
	"api.Channel": {
		str(1, "name"),
		str(2, "csvName"),
		msg(3, "deprecation", "api.Deprecation"),
	},
	"api.Bundle": {
		str(1, "csvName"),
		str(2, "packageName"),
		str(3, "channelName"),
		str(4, "csvJson"),
		strs(5, "object"),
		str(6, "bundlePath"),
		msgs(7, "providedApis", "api.GroupVersionKind"),
		msgs(8, "requiredApis", "api.GroupVersionKind"),
		str(9, "version"),
		str(10, "skipRange"),
		msgs(11, "dependencies", "api.Dependency"),
		msgs(12, "properties", "api.Property"),
		str(13, "replaces"),
		strs(14, "skips"),
		msg(15, "deprecation", "api.Deprecation"),
	},
	"api.GroupVersionKind": gvkFields,
	"api.Dependency":       {str(1, "type"), str(2, "value")},
	"api.Property":         {str(1, "type"), str(2, "value")},
	"api.ChannelEntry": {
		str(1, "packageName"),
		str(2, "channelName"),
		str(3, "bundleName"),
		str(4, "replaces"),
	},
	"api.Deprecation": {str(1, "message")},

	"api.ListPackageRequest":                          {},
	"api.ListBundlesRequest":                          {},
	"api.GetPackageRequest":                           {str(1, "name")},
	"api.GetBundleRequest":                            {str(1, "pkgName"), str(2, "channelName"), str(3, "csvName")},
	"api.GetBundleInChannelRequest":                   {str(1, "pkgName"), str(2, "channelName")},
	"api.GetAllReplacementsRequest":                   {str(1, "csvName")},
	"api.GetReplacementRequest":                       {str(1, "csvName"), str(2, "pkgName"), str(3, "channelName")},
	"api.GetAllProvidersRequest":                      gvkFields,
	"api.GetLatestProvidersRequest":                   gvkFields,
	"api.GetDefaultProviderRequest":                   gvkFields,
	"api.ExperimentalListPackageCustomSchemasRequest": {str(1, "schema"), str(2, "packageName")},
}

// method describes one RPC of the contract.
type method struct {
	path         string // the HTTP/2 :path, /<service>/<method>
	in, out      protoreflect.FullName
	serverStream bool
	deprecated   bool
}

var wireMethods = []method{
	{"/api.Registry/ListPackages", "api.ListPackageRequest", "api.PackageName", true, false},
	{"/api.Registry/GetPackage", "api.GetPackageRequest", "api.Package", false, false},
	{"/api.Registry/GetBundle", "api.GetBundleRequest", "api.Bundle", false, false},
	{"/api.Registry/GetBundleForChannel", "api.GetBundleInChannelRequest", "api.Bundle", false, true},
	{"/api.Registry/GetChannelEntriesThatReplace", "api.GetAllReplacementsRequest", "api.ChannelEntry", true, false},
	{"/api.Registry/GetBundleThatReplaces", "api.GetReplacementRequest", "api.Bundle", false, false},
	{"/api.Registry/GetChannelEntriesThatProvide", "api.GetAllProvidersRequest", "api.ChannelEntry", true, false},
	{"/api.Registry/GetLatestChannelEntriesThatProvide", "api.GetLatestProvidersRequest", "api.ChannelEntry", true, false},
	{"/api.Registry/GetDefaultBundleThatProvides", "api.GetDefaultProviderRequest", "api.Bundle", false, false},
	{"/api.Registry/ListBundles", "api.ListBundlesRequest", "api.Bundle", true, false},
	{"/api.ExperimentalRegistry/ExperimentalListPackageCustomSchemas", "api.ExperimentalListPackageCustomSchemasRequest", "google.protobuf.Struct", true, false},
}

func fileDescriptor() protoreflect.FileDescriptor { return api.File_registry_proto }

func TestFileIdentity(t *testing.T) {
	fd := fileDescriptor()
	if got := fd.Package(); got != "api" {
		t.Errorf("proto package = %q, want %q", got, "api")
	}
	if got := fd.Syntax(); got != protoreflect.Proto3 {
		t.Errorf("syntax = %v, want proto3", got)
	}
	if got := fd.Path(); got != "registry.proto" {
		// Server reflection serves the file under this name; upstream's is
		// registry.proto too.
		t.Errorf("file path = %q, want %q", got, "registry.proto")
	}
}

func TestMessagesMatchContract(t *testing.T) {
	fd := fileDescriptor()

	// Every message of the file is in the table: nothing extra on the wire.
	msgs := fd.Messages()
	for i := range msgs.Len() {
		name := msgs.Get(i).FullName()
		if _, ok := wireMessages[name]; !ok {
			t.Errorf("message %s is not part of the contract", name)
		}
	}

	for name, want := range wireMessages {
		t.Run(string(name), func(t *testing.T) {
			md := msgs.ByName(name.Name())
			if md == nil {
				t.Fatalf("message %s missing", name)
			}
			if md.FullName() != name {
				t.Fatalf("full name = %s, want %s", md.FullName(), name)
			}
			fields := md.Fields()
			if fields.Len() != len(want) {
				t.Errorf("%d fields, want %d", fields.Len(), len(want))
			}
			if md.Oneofs().Len() != 0 {
				t.Errorf("has %d oneofs, want none", md.Oneofs().Len())
			}
			for _, w := range want {
				fd := fields.ByNumber(w.num)
				if fd == nil {
					t.Errorf("field %d (%s) missing", w.num, w.name)
					continue
				}
				checkField(t, fd, w)
			}
		})
	}
}

func checkField(t *testing.T, fd protoreflect.FieldDescriptor, w field) {
	t.Helper()
	if got := string(fd.Name()); got != w.name {
		t.Errorf("field %d name = %q, want %q", w.num, got, w.name)
	}
	// protojson (and grpcurl) print the JSON name; for camelCase proto
	// names it equals the proto name, which is what upstream clients see.
	if got := fd.JSONName(); got != w.name {
		t.Errorf("field %d JSON name = %q, want %q", w.num, got, w.name)
	}
	if got := fd.Cardinality() == protoreflect.Repeated; got != w.repeated {
		t.Errorf("field %d repeated = %v, want %v", w.num, got, w.repeated)
	}
	if fd.IsMap() {
		t.Errorf("field %d is a map", w.num)
	}
	if fd.HasPresence() && fd.Message() == nil {
		t.Errorf("field %d has explicit presence (optional); upstream's fields are plain proto3", w.num)
	}
	switch {
	case w.msg == "":
		if fd.Kind() != protoreflect.StringKind {
			t.Errorf("field %d kind = %v, want string", w.num, fd.Kind())
		}
	case fd.Kind() != protoreflect.MessageKind:
		t.Errorf("field %d kind = %v, want message %s", w.num, fd.Kind(), w.msg)
	case fd.Message().FullName() != w.msg:
		t.Errorf("field %d type = %s, want %s", w.num, fd.Message().FullName(), w.msg)
	}
}

func TestServicesMatchContract(t *testing.T) {
	fd := fileDescriptor()

	got := map[string]protoreflect.MethodDescriptor{}
	services := fd.Services()
	for i := range services.Len() {
		sd := services.Get(i)
		methods := sd.Methods()
		for j := range methods.Len() {
			m := methods.Get(j)
			got["/"+string(sd.FullName())+"/"+string(m.Name())] = m
		}
	}
	if services.Len() != 2 {
		t.Errorf("%d services, want 2 (api.Registry, api.ExperimentalRegistry)", services.Len())
	}
	if len(got) != len(wireMethods) {
		t.Errorf("%d methods, want %d", len(got), len(wireMethods))
	}

	for _, w := range wireMethods {
		m, ok := got[w.path]
		if !ok {
			t.Errorf("method %s missing", w.path)
			continue
		}
		if m.Input().FullName() != w.in {
			t.Errorf("%s input = %s, want %s", w.path, m.Input().FullName(), w.in)
		}
		if m.Output().FullName() != w.out {
			t.Errorf("%s output = %s, want %s", w.path, m.Output().FullName(), w.out)
		}
		if m.IsStreamingClient() {
			t.Errorf("%s is client-streaming, want unary request", w.path)
		}
		if m.IsStreamingServer() != w.serverStream {
			t.Errorf("%s server streaming = %v, want %v", w.path, m.IsStreamingServer(), w.serverStream)
		}
		opts, ok := m.Options().(*descriptorpb.MethodOptions)
		if !ok {
			t.Fatalf("%s options are %T", w.path, m.Options())
		}
		if dep := opts.GetDeprecated(); dep != w.deprecated {
			t.Errorf("%s deprecated = %v, want %v", w.path, dep, w.deprecated)
		}
	}
}

// TestServiceDescsMatchContract checks the tables gRPC routes by at run
// time, which are generated separately from the descriptors.
func TestServiceDescsMatchContract(t *testing.T) {
	type route struct {
		path         string
		serverStream bool
	}
	var got []route
	for _, sd := range []*grpc.ServiceDesc{&api.Registry_ServiceDesc, &api.ExperimentalRegistry_ServiceDesc} {
		for _, m := range sd.Methods {
			got = append(got, route{"/" + sd.ServiceName + "/" + m.MethodName, false})
		}
		for _, s := range sd.Streams {
			if s.ClientStreams {
				t.Errorf("%s/%s is client-streaming", sd.ServiceName, s.StreamName)
			}
			got = append(got, route{"/" + sd.ServiceName + "/" + s.StreamName, s.ServerStreams})
		}
	}
	var want []route
	for _, w := range wireMethods {
		want = append(want, route{w.path, w.serverStream})
	}
	byPath := func(a, b route) int { return strings.Compare(a.path, b.path) }
	slices.SortFunc(got, byPath)
	slices.SortFunc(want, byPath)
	if !slices.Equal(got, want) {
		t.Errorf("gRPC routes:\n got %v\nwant %v", got, want)
	}
}

// TestWireEncoding encodes requests by hand with protowire, as an upstream
// client would put them on the wire, and checks the generated types decode
// them into the right fields; then the other way round.
func TestWireEncoding(t *testing.T) {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, "etcd.v0.9.4")
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendString(b, "etcd")
	b = protowire.AppendTag(b, 3, protowire.BytesType)
	b = protowire.AppendString(b, "alpha")

	var req api.GetReplacementRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	if req.GetCsvName() != "etcd.v0.9.4" || req.GetPkgName() != "etcd" || req.GetChannelName() != "alpha" {
		t.Errorf("decoded %v", &req)
	}

	bundle := &api.Bundle{
		Skips:       []string{"a", "b"},
		Deprecation: &api.Deprecation{Message: "gone"},
	}
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(bundle)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var want []byte
	for _, s := range []string{"a", "b"} {
		want = protowire.AppendTag(want, 14, protowire.BytesType)
		want = protowire.AppendString(want, s)
	}
	var dep []byte
	dep = protowire.AppendTag(dep, 1, protowire.BytesType)
	dep = protowire.AppendString(dep, "gone")
	want = protowire.AppendTag(want, 15, protowire.BytesType)
	want = protowire.AppendBytes(want, dep)
	if string(out) != string(want) {
		t.Errorf("Bundle wire bytes = %x, want %x", out, want)
	}
}

// TestJSONNames checks what grpcurl prints for a bundle: upstream's
// camelCase keys.
func TestJSONNames(t *testing.T) {
	b := &api.Bundle{
		CsvName:      "etcd.v0.9.4",
		ProvidedApis: []*api.GroupVersionKind{{Group: "etcd.database.coreos.com"}},
		Dependencies: []*api.Dependency{{Type: "olm.gvk", Value: "{}"}},
		SkipRange:    "<0.9.4",
	}
	got, err := protojson.Marshal(b)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var back api.Bundle
	if err := protojson.Unmarshal([]byte(`{"csvName":"etcd.v0.9.4","providedApis":[{"group":"etcd.database.coreos.com"}],"dependencies":[{"type":"olm.gvk","value":"{}"}],"skipRange":"<0.9.4"}`), &back); err != nil {
		t.Fatalf("unmarshal upstream-style JSON: %v", err)
	}
	if !proto.Equal(&back, b) {
		t.Errorf("upstream-style JSON decoded to %v, want %v (our JSON: %s)", &back, b, got)
	}
}
