package server

import (
	"context"
	"errors"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/pkg/api"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/registry"
)

// service answers the Registry and ExperimentalRegistry APIs from a
// snapshot.
type service struct {
	snap  *cache.Snapshot
	x     *registry.Index
	log   *slog.Logger
	limit int
}

// handler is the type of the services' implementation (for
// grpc.ServiceDesc.HandlerType).
type handler interface{ snapshot() *cache.Snapshot }

func (s *service) snapshot() *cache.Snapshot { return s.snap }

// The service descriptions have the method names and the proto file of
// pkg/api's, so clients and server reflection see the upstream API, but
// handlers of their own that send pre-encoded answers.
var registryDesc = grpc.ServiceDesc{
	ServiceName: "api.Registry",
	HandlerType: (*handler)(nil),
	Methods: []grpc.MethodDesc{
		unary("GetPackage", (*service).getPackage),
		unary("GetBundle", (*service).getBundle),
		unary("GetBundleForChannel", (*service).getBundleForChannel),
		unary("GetBundleThatReplaces", (*service).getBundleThatReplaces),
		unary("GetDefaultBundleThatProvides", (*service).getDefaultBundleThatProvides),
	},
	Streams: []grpc.StreamDesc{
		serverStream("ListPackages", (*service).listPackages),
		serverStream("GetChannelEntriesThatReplace", (*service).getChannelEntriesThatReplace),
		serverStream("GetChannelEntriesThatProvide", (*service).getChannelEntriesThatProvide),
		serverStream("GetLatestChannelEntriesThatProvide", (*service).getLatestChannelEntriesThatProvide),
		serverStream("ListBundles", (*service).listBundles),
	},
	Metadata: api.Registry_ServiceDesc.Metadata,
}

var experimentalDesc = grpc.ServiceDesc{
	ServiceName: "api.ExperimentalRegistry",
	HandlerType: (*handler)(nil),
	Streams: []grpc.StreamDesc{
		serverStream("ExperimentalListPackageCustomSchemas", (*service).listPackageCustomSchemas),
	},
	Metadata: api.ExperimentalRegistry_ServiceDesc.Metadata,
}

// unary adapts a typed unary method to grpc.MethodDesc.
func unary[Req any, PReq interface{ *Req }](name string, fn func(*service, context.Context, PReq) (any, error)) grpc.MethodDesc {
	return grpc.MethodDesc{
		MethodName: name,
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			req := PReq(new(Req))
			if err := dec(req); err != nil {
				return nil, err
			}
			s := srv.(*service)
			if interceptor == nil {
				return fn(s, ctx, req)
			}
			info := &grpc.UnaryServerInfo{Server: srv, FullMethod: "/api.Registry/" + name}
			return interceptor(ctx, req, info, func(ctx context.Context, r any) (any, error) {
				return fn(s, ctx, r.(PReq))
			})
		},
	}
}

// serverStream adapts a typed server-streaming method to grpc.StreamDesc.
func serverStream[Req any, PReq interface{ *Req }](name string, fn func(*service, PReq, grpc.ServerStream) error) grpc.StreamDesc {
	return grpc.StreamDesc{
		StreamName:    name,
		ServerStreams: true,
		Handler: func(srv any, stream grpc.ServerStream) error {
			req := PReq(new(Req))
			if err := stream.RecvMsg(req); err != nil {
				return err
			}
			return fn(srv.(*service), req, stream)
		},
	}
}

// statusError turns a query error into a gRPC status: upstream's message
// with a proper code.
func statusError(err error) error {
	var qe *registry.Error
	if errors.As(err, &qe) {
		code := codes.NotFound
		if qe.Code == registry.InvalidArgument {
			code = codes.InvalidArgument
		}
		return status.Error(code, qe.Msg)
	}
	if errors.Is(err, cache.ErrCorruptAnswer) {
		return status.Error(codes.DataLoss, err.Error())
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codes.Internal, err.Error())
}

func (s *service) getPackage(_ context.Context, req *api.GetPackageRequest) (any, error) {
	p, err := s.x.GetPackage(req.GetName())
	if err != nil {
		return nil, statusError(err)
	}
	out := &api.Package{Name: p.Name, DefaultChannelName: p.DefaultChannel, Deprecation: deprecation(p.Deprecation)}
	for i := range p.Channels {
		c := &p.Channels[i]
		out.Channels = append(out.Channels, &api.Channel{
			Name:        c.Name,
			CsvName:     s.x.BundleName(&c.Entries[c.Head]),
			Deprecation: deprecation(c.Deprecation),
		})
	}
	return out, nil
}

func deprecation(d *model.Deprecation) *api.Deprecation {
	if d == nil {
		return nil
	}
	return &api.Deprecation{Message: d.Message}
}

func (s *service) getBundle(_ context.Context, req *api.GetBundleRequest) (any, error) {
	return s.bundleAnswer(s.x.GetBundle(req.GetPkgName(), req.GetChannelName(), req.GetCsvName()))
}

func (s *service) getBundleForChannel(_ context.Context, req *api.GetBundleInChannelRequest) (any, error) {
	return s.bundleAnswer(s.x.GetBundleForChannel(req.GetPkgName(), req.GetChannelName()))
}

func (s *service) getBundleThatReplaces(_ context.Context, req *api.GetReplacementRequest) (any, error) {
	return s.bundleAnswer(s.x.GetBundleThatReplaces(req.GetCsvName(), req.GetPkgName(), req.GetChannelName()))
}

func (s *service) getDefaultBundleThatProvides(_ context.Context, req *api.GetDefaultProviderRequest) (any, error) {
	return s.bundleAnswer(s.x.GetDefaultBundleThatProvides(req.GetGroup(), req.GetVersion(), req.GetKind()))
}

// bundleAnswer is the answer of the unary bundle queries: the whole
// bundle, with replaces and skips cleared as upstream clears them, kept
// under the message size limit (see docs/serve.md): object is left out
// when the bundle has an image and the answer would be too large; an
// answer that is still too large is refused with ResourceExhausted.
func (s *service) bundleAnswer(h registry.Hit, err error) (any, error) {
	if err != nil {
		return nil, statusError(err)
	}
	parts, err := s.snap.ReadBundle(h.Bundle, true)
	if err != nil {
		s.log.Error("cannot read a stored answer", "bundle", h.Bundle.Name, "error", err)
		return nil, statusError(err)
	}
	pieces, n := cache.AppendBundle(nil, parts, h, cache.Shape{Payload: true})
	if n <= s.limit {
		return newEncoded(pieces, n), nil
	}
	if h.Bundle.HasImage {
		pieces, m := cache.AppendBundle(nil, parts, h, cache.Shape{Payload: true, DropObjects: true})
		if m <= s.limit {
			s.log.Debug("answer over the message size limit: object left out", "package", h.Package.Name, "bundle", h.Bundle.Name, "size", n, "limit", s.limit)
			return newEncoded(pieces, m), nil
		}
		n = m
	}
	return nil, status.Errorf(codes.ResourceExhausted,
		"bundle %q of package %q: the answer is %d bytes, over the %d-byte gRPC message limit of OLM's clients (its csvJson is %d bytes)",
		h.Bundle.Name, h.Package.Name, n, s.limit, len(parts.CsvJSON))
}

func (s *service) listPackages(_ *api.ListPackageRequest, stream grpc.ServerStream) error {
	for i := range s.x.Packages {
		if err := stream.SendMsg(&api.PackageName{Name: s.x.Packages[i].Name}); err != nil {
			return err
		}
	}
	return nil
}

func sendEntries(stream grpc.ServerStream, entries []registry.Edge, err error) error {
	if err != nil {
		return statusError(err)
	}
	for _, e := range entries {
		m := &api.ChannelEntry{PackageName: e.PackageName, ChannelName: e.ChannelName, BundleName: e.BundleName, Replaces: e.Replaces}
		if err := stream.SendMsg(m); err != nil {
			return err
		}
	}
	return nil
}

func (s *service) getChannelEntriesThatReplace(req *api.GetAllReplacementsRequest, stream grpc.ServerStream) error {
	es, err := s.x.GetChannelEntriesThatReplace(req.GetCsvName())
	return sendEntries(stream, es, err)
}

func (s *service) getChannelEntriesThatProvide(req *api.GetAllProvidersRequest, stream grpc.ServerStream) error {
	es, err := s.x.GetChannelEntriesThatProvide(req.GetGroup(), req.GetVersion(), req.GetKind())
	return sendEntries(stream, es, err)
}

func (s *service) getLatestChannelEntriesThatProvide(req *api.GetLatestProvidersRequest, stream grpc.ServerStream) error {
	es, err := s.x.GetLatestChannelEntriesThatProvide(req.GetGroup(), req.GetVersion(), req.GetKind())
	return sendEntries(stream, es, err)
}

// listBundles streams one Bundle per channel entry with replaces and
// skips, and without csvJson and object for bundles that have an image,
// as upstream does. A bundle without an image whose answer exceeds the
// message size limit is left out (and logged): sending it would make every
// default client fail the whole stream.
func (s *service) listBundles(_ *api.ListBundlesRequest, stream grpc.ServerStream) error {
	var pieces [][]byte
	for _, ref := range s.x.ListBundles() {
		if err := stream.Context().Err(); err != nil {
			return status.FromContextError(err).Err()
		}
		h := s.x.Hit(ref)
		payload := !h.Bundle.HasImage
		parts, err := s.snap.ReadBundle(h.Bundle, payload)
		if err != nil {
			s.log.Error("cannot read a stored answer", "bundle", h.Bundle.Name, "error", err)
			return statusError(err)
		}
		var n int
		pieces, n = cache.AppendBundle(pieces[:0], parts, h, cache.Shape{Payload: payload, Edges: true})
		if n > s.limit {
			s.log.Warn("ListBundles leaves out a bundle whose answer is over the message size limit", "package", h.Package.Name, "channel", h.Channel.Name, "bundle", h.Bundle.Name, "size", n, "limit", s.limit)
			continue
		}
		if err := stream.SendMsg(newEncoded(pieces, n)); err != nil {
			return err
		}
	}
	return nil
}

// headerAcknowledgeExperimental must be "true" for the experimental API
// to answer; without it the stream is empty, as upstream does.
const headerAcknowledgeExperimental = "x-acknowledge-experimental"

func (s *service) listPackageCustomSchemas(req *api.ExperimentalListPackageCustomSchemasRequest, stream grpc.ServerStream) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	if v := md.Get(headerAcknowledgeExperimental); len(v) == 0 || v[0] != "true" {
		return nil
	}
	schema, pkg := req.GetSchema(), req.GetPackageName()
	if schema == "" {
		return status.Error(codes.InvalidArgument, "schema is required")
	}
	if err := registry.ValidateMetaKey(schema, pkg); err != nil {
		return status.Errorf(codes.InvalidArgument, "invalid custom schema query: %v", err)
	}
	for _, m := range s.x.CustomMetas(schema, pkg) {
		b, err := s.snap.ReadMeta(&m)
		if err != nil {
			s.log.Error("cannot read a stored blob", "schema", m.Schema, "name", m.Name, "error", err)
			return statusError(err)
		}
		if err := stream.SendMsg(newEncoded([][]byte{b}, len(b))); err != nil {
			return err
		}
	}
	return nil
}
