package server

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// Health is the standard grpc.health.v1 service with one status for every
// service name: the kubelet asks for "", OLM's client for "Registry", and
// both must get SERVING once the catalog is served (and NOT_SERVING while
// the server shuts down).
type Health struct {
	healthpb.UnimplementedHealthServer

	mu       sync.Mutex
	serving  bool
	changed  chan struct{} // closed and replaced at every change
	shutdown bool
}

// NewHealth returns a Health that answers NOT_SERVING until SetServing.
func NewHealth() *Health { return &Health{changed: make(chan struct{})} }

// SetServing sets the status of every service name.
func (h *Health) SetServing(serving bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.serving == serving {
		return
	}
	h.serving = serving
	close(h.changed)
	h.changed = make(chan struct{})
}

// Serving reports whether the status is SERVING.
func (h *Health) Serving() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.serving
}

// Shutdown reports NOT_SERVING for good and ends the Watch streams.
func (h *Health) Shutdown() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.serving, h.shutdown = false, true
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *Health) status() (healthpb.HealthCheckResponse_ServingStatus, <-chan struct{}, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if h.serving {
		st = healthpb.HealthCheckResponse_SERVING
	}
	return st, h.changed, h.shutdown
}

// Check answers the status, whatever the service name.
func (h *Health) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	st, _, _ := h.status()
	return &healthpb.HealthCheckResponse{Status: st}, nil
}

// List reports the status of the services this server offers.
func (h *Health) List(context.Context, *healthpb.HealthListRequest) (*healthpb.HealthListResponse, error) {
	st, _, _ := h.status()
	out := &healthpb.HealthListResponse{Statuses: map[string]*healthpb.HealthCheckResponse{}}
	for _, name := range []string{"", registryDesc.ServiceName, experimentalDesc.ServiceName} {
		out.Statuses[name] = &healthpb.HealthCheckResponse{Status: st}
	}
	return out, nil
}

// Watch streams the status now and at every change.
func (h *Health) Watch(_ *healthpb.HealthCheckRequest, stream grpc.ServerStreamingServer[healthpb.HealthCheckResponse]) error {
	last := healthpb.HealthCheckResponse_SERVICE_UNKNOWN
	for {
		st, changed, shutdown := h.status()
		if st != last {
			if err := stream.Send(&healthpb.HealthCheckResponse{Status: st}); err != nil {
				return err
			}
			last = st
		}
		if shutdown {
			return status.Error(codes.Unavailable, "server is shutting down")
		}
		select {
		case <-stream.Context().Done():
			return status.FromContextError(stream.Context().Err()).Err()
		case <-changed:
		}
	}
}
