// Package server is the gRPC face of `opm serve`: the Registry and
// ExperimentalRegistry services of pkg/api, wire-compatible with upstream
// opm and OLM, answered from a cache.Snapshot; the standard health service;
// and server reflection (v1 and v1alpha), so grpcurl works without a proto
// file.
//
// Bundle answers are sent as they were encoded when the catalog was
// loaded: the stored protobuf segments are joined with the per-channel
// fields and handed to gRPC without a marshal (see codec.go). Errors carry
// upstream's messages with codes NotFound and InvalidArgument where
// upstream says Unknown. No message sent exceeds MaxMessageSize (4 MiB,
// the default receive limit of gRPC clients such as OLM's); see
// docs/serve.md for what happens to larger answers.
package server

import (
	"context"
	"io"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	// Registers the gzip compressor: clients may compress their requests
	// (grpc_health_probe -gzip does), and upstream's server accepts them.
	_ "google.golang.org/grpc/encoding/gzip"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/fastopm/fastopm/pkg/cache"
)

// DefaultMaxMessageSize is gRPC's default maximum received message size,
// which OLM's clients keep: 4 MiB.
const DefaultMaxMessageSize = 4 << 20

// Options configure a Server.
type Options struct {
	// Logger receives the server's logs; with debug level enabled every
	// request is logged. Defaults to discarding.
	Logger *slog.Logger
	// MaxMessageSize bounds every message the server sends. Defaults to
	// DefaultMaxMessageSize.
	MaxMessageSize int
	// Unary and Stream are interceptors run around every call (metrics).
	Unary  []grpc.UnaryServerInterceptor
	Stream []grpc.StreamServerInterceptor
}

// Server serves one snapshot.
type Server struct {
	// GRPC is the underlying server; call its Serve.
	GRPC *grpc.Server
	// Health is the health service, NOT_SERVING until SetServing(true).
	Health *Health

	log *slog.Logger
}

// New builds a server for snap with the Registry, ExperimentalRegistry,
// health and reflection services registered.
func New(snap *cache.Snapshot, opts Options) (*Server, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	limit := opts.MaxMessageSize
	if limit <= 0 {
		limit = DefaultMaxMessageSize
	}
	c, err := newCodec()
	if err != nil {
		return nil, err
	}
	gopts := []grpc.ServerOption{
		grpc.ForceServerCodecV2(c),
		// The handlers keep answers under the limit; this makes sure.
		grpc.MaxSendMsgSize(limit),
	}
	unary, stream := opts.Unary, opts.Stream
	if log.Enabled(context.Background(), slog.LevelDebug) {
		unary = append(unary, unaryLogger(log))
		stream = append(stream, streamLogger(log))
	}
	if len(unary) > 0 {
		gopts = append(gopts, grpc.ChainUnaryInterceptor(unary...))
	}
	if len(stream) > 0 {
		gopts = append(gopts, grpc.ChainStreamInterceptor(stream...))
	}
	g := grpc.NewServer(gopts...)
	svc := &service{snap: snap, x: snap.Index, log: log, limit: limit}
	g.RegisterService(&registryDesc, svc)
	g.RegisterService(&experimentalDesc, svc)
	h := NewHealth()
	healthpb.RegisterHealthServer(g, h)
	reflection.Register(g)
	return &Server{GRPC: g, Health: h, log: log}, nil
}

// Stop stops serving: health turns NOT_SERVING, new calls are refused and
// in-flight calls may finish for up to grace before they are cut.
func (s *Server) Stop(grace time.Duration) {
	s.Health.Shutdown()
	done := make(chan struct{})
	go func() {
		s.GRPC.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(grace):
		s.log.Warn("in-flight calls did not finish in time; stopping", "grace", grace)
		s.GRPC.Stop()
		<-done
	}
}

func unaryLogger(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := next(ctx, req)
		log.Debug("request", "method", info.FullMethod, "request", req, "code", status.Code(err).String(), "duration", time.Since(start), "error", errText(err))
		return resp, err
	}
}

func streamLogger(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
		start := time.Now()
		cs := &countingStream{ServerStream: ss}
		err := next(srv, cs)
		log.Debug("request", "method", info.FullMethod, "request", cs.req, "messages", cs.sent, "code", status.Code(err).String(), "duration", time.Since(start), "error", errText(err))
		return err
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return status.Convert(err).Message()
}

// countingStream records a stream's request and counts its messages.
type countingStream struct {
	grpc.ServerStream
	req  any
	sent int
}

func (c *countingStream) RecvMsg(m any) error {
	err := c.ServerStream.RecvMsg(m)
	if err == nil {
		c.req = m
	}
	return err
}

func (c *countingStream) SendMsg(m any) error {
	c.sent++
	return c.ServerStream.SendMsg(m)
}
