//go:build !opm_lean

package action

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/httpserver"
	"github.com/fastopm/fastopm/pkg/server"
)

// httpSide is what --http-addr adds to serve: the metrics of the gRPC
// calls and the HTTP server (pkg/httpserver). It is linked only into the
// full opm (see full.go): the lean one runs opm-full for --http-addr.
type httpSide struct{ metrics *httpserver.Metrics }

// newHTTPSide counts the gRPC calls that the server built with o answers.
func newHTTPSide(o *server.Options) (*httpSide, error) {
	m := httpserver.NewMetrics()
	o.Unary = append(o.Unary, m.Unary())
	o.Stream = append(o.Stream, m.Stream())
	return &httpSide{metrics: m}, nil
}

// start serves snap over HTTP beside srv.
func (h *httpSide) start(s Serve, snap *cache.Snapshot, srv *server.Server, log *slog.Logger) (*webServer, error) {
	h.metrics.InitializeGRPC(srv.GRPC)
	return s.startHTTP(snap, srv, h.metrics, log)
}

// loaded records how long the catalog took to load.
func (h *httpSide) loaded(d time.Duration) { h.metrics.SetLoadTime(d) }

// startHTTP starts serving the catalog over HTTP beside gRPC.
func (s Serve) startHTTP(snap *cache.Snapshot, srv *server.Server, metrics *httpserver.Metrics, log *slog.Logger) (*webServer, error) {
	name := s.HTTPCatalogName
	if name == "" {
		name = defaultCatalogName(s.CatalogDir)
	}
	hs, err := httpserver.New(snap, httpserver.Options{CatalogName: name, Ready: srv.Health.Serving, Metrics: metrics, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("--http-catalog-name: %w", err)
	}
	hsrv := hs.HTTPServer()
	if (s.HTTPTLSCert == "") != (s.HTTPTLSKey == "") {
		return nil, errors.New("--http-tls-cert and --http-tls-key must be given together")
	}
	if err := withTLS(hsrv, s.HTTPTLSCert, s.HTTPTLSKey); err != nil {
		return nil, err
	}
	w, lis, scheme, err := listenAndServe(hsrv, s.HTTPListener, s.HTTPAddr, log)
	if err != nil {
		return nil, err
	}
	log.Info("serving HTTP", "address", lis.Addr().String(), "scheme", scheme, "catalog", name, "url", browseURL(scheme, s.HTTPAddr, lis.Addr()))
	return w, nil
}

// withTLS makes hsrv serve HTTPS with the PEM certificate and key files
// (reloaded when they change) when cert is given; serve's and the hub's
// --http-tls-cert and --http-tls-key.
func withTLS(hsrv *http.Server, cert, key string) error {
	if cert == "" {
		return nil
	}
	certs, err := httpserver.NewCertReloader(cert, key)
	if err != nil {
		return err
	}
	hsrv.TLSConfig = certs.TLSConfig()
	return nil
}

// defaultCatalogName is the catalog directory's name when it can be a
// catalog's name in catalogd's URLs, else "catalog".
func defaultCatalogName(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	name := strings.ToLower(filepath.Base(dir))
	if httpserver.ValidCatalogName(name) != nil {
		return "catalog"
	}
	return name
}

// browseURL is the URL of the web page served on bound, to open in a
// browser: the bound address (IPv6 in brackets), or where the server
// listens on every address (":8088", "0.0.0.0:8088") the loopback one,
// 127.0.0.1 (::1 when "[::]" was asked for); a host name given in
// requested (the --http-addr) is kept, as a TLS certificate names it.
func browseURL(scheme, requested string, bound net.Addr) string {
	host, port, err := net.SplitHostPort(bound.String())
	if err != nil {
		return scheme + "://" + bound.String() + "/"
	}
	reqHost, _, _ := net.SplitHostPort(requested)
	ip := net.ParseIP(host)
	switch {
	case reqHost != "" && net.ParseIP(reqHost) == nil && !strings.Contains(reqHost, "%"):
		host = reqHost
	case ip != nil && ip.IsUnspecified():
		host = "127.0.0.1"
		if ip.To4() == nil && reqHost != "" {
			host = "::1"
		}
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port), Path: "/"}
	return u.String()
}

// listenAndServe serves hsrv (HTTPS when it has a TLS configuration) on
// lis, or on a listener of addr when lis is nil, in a goroutine; the
// webServer's served channel gets its end.
func listenAndServe(hsrv *http.Server, lis net.Listener, addr string, log *slog.Logger) (*webServer, net.Listener, string, error) {
	if lis == nil {
		var err error
		if lis, err = net.Listen("tcp", addr); err != nil {
			return nil, nil, "", fmt.Errorf("failed to listen on --http-addr: %w", err)
		}
	}
	w := &webServer{srv: hsrv, served: make(chan error, 1), log: log}
	scheme := "http"
	if hsrv.TLSConfig != nil {
		scheme = "https"
	}
	go func() {
		var err error
		if scheme == "https" {
			err = hsrv.ServeTLS(lis, "", "")
		} else {
			err = hsrv.Serve(lis)
		}
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		w.served <- err
	}()
	return w, lis, scheme, nil
}
