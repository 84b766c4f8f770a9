package httpserver

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"

	"github.com/fastopm/fastopm/pkg/cache"
)

// Metrics are the Prometheus metrics of one opm serve process: HTTP
// requests by route, method and code; gRPC calls by method and code
// (grpc-ecosystem's server metrics); the catalog's size and load time; Go
// and process metrics.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// GRPC are the gRPC server's metrics: give its interceptors to the
	// server (pkg/server Options) and call InitializeGRPC once the
	// services are registered.
	GRPC *grpcprom.ServerMetrics

	load                           prometheus.Gauge
	packages, bundles, blobs, size prometheus.Gauge

	// hub holds a hub's metrics by catalog (hub.go); nil for serve.
	hub *hubMetrics
}

// latencyBuckets suit answers that take from tens of microseconds (a
// metas query) to seconds (a large graph, a whole catalog).
var latencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// NewMetrics makes the metrics, registered in a registry of their own.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total", Help: "HTTP requests answered, by route (handler), method and status code.",
		}, []string{"handler", "code", "method"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "http_request_duration_seconds", Help: "Time to answer HTTP requests, by route (handler), method and status code.",
			Buckets: latencyBuckets,
		}, []string{"handler", "code", "method"}),
		GRPC: grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(grpcprom.WithHistogramBuckets(latencyBuckets))),
		load: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "opm_catalog_load_seconds", Help: "Time from the start of opm serve to the catalog being served.",
		}),
		packages: prometheus.NewGauge(prometheus.GaugeOpts{Name: "opm_catalog_packages", Help: "Packages in the served catalog."}),
		bundles:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "opm_catalog_bundles", Help: "Bundles in the served catalog."}),
		blobs:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "opm_catalog_blobs", Help: "Blobs (JSON lines) in the served catalog."}),
		size:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "opm_catalog_jsonl_bytes", Help: "Size of the served catalog as JSON lines (/api/v1/all)."}),
	}
	m.reg.MustRegister(m.requests, m.duration, m.GRPC, m.load, m.packages, m.bundles, m.blobs, m.size,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Unary and Stream are the gRPC server's metrics interceptors.
func (m *Metrics) Unary() grpc.UnaryServerInterceptor   { return m.GRPC.UnaryServerInterceptor() }
func (m *Metrics) Stream() grpc.StreamServerInterceptor { return m.GRPC.StreamServerInterceptor() }

// InitializeGRPC makes the counters of every method of srv exist at zero.
func (m *Metrics) InitializeGRPC(srv *grpc.Server) { m.GRPC.InitializeMetrics(srv) }

// SetLoadTime records how long the catalog took to be served.
func (m *Metrics) SetLoadTime(d time.Duration) { m.load.Set(d.Seconds()) }

func (m *Metrics) setCatalog(name string, snap *cache.Snapshot) {
	if m.hub != nil {
		m.hub.setCatalog(name, snap)
		return
	}
	m.packages.Set(float64(len(snap.Index.Packages)))
	m.bundles.Set(float64(len(snap.Index.Bundles)))
	if l := snap.Lines(); l != nil {
		m.blobs.Set(float64(l.Len()))
		m.size.Set(float64(l.Size()))
	}
}

// instrument counts and times the requests of one route, and logs them at
// debug level.
func (s *Server) instrument(name string, h http.Handler) http.Handler {
	if s.log.Enabled(context.Background(), slog.LevelDebug) {
		next := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			next.ServeHTTP(w, r)
			s.log.Debug("handled request", "method", r.Method, "uri", r.RequestURI, "handler", name, "remote", r.RemoteAddr, "duration", time.Since(start))
		})
	}
	m := s.opts.Metrics
	if m == nil {
		return h
	}
	l := prometheus.Labels{"handler": name}
	if m.hub != nil {
		l["catalog"] = s.opts.CatalogName
	}
	return promhttp.InstrumentHandlerDuration(m.duration.MustCurryWith(l),
		promhttp.InstrumentHandlerCounter(m.requests.MustCurryWith(l), h))
}
