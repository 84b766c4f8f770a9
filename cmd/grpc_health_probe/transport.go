package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/alts"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
)

// errSPIFFEUnsupported is returned for -spiffe: the SPIFFE Workload API
// client is not compiled in.
var errSPIFFEUnsupported = errors.New("SPIFFE is not supported by this build of grpc_health_probe")

// transportCredentials picks the transport security the flags ask for.
func transportCredentials(o *options) (credentials.TransportCredentials, error) {
	switch {
	case o.tls:
		return tlsCredentials(o)
	case o.alts:
		return alts.NewClientCreds(alts.DefaultClientOptions()), nil
	case o.spiffe:
		return nil, errSPIFFEUnsupported
	default:
		return insecure.NewCredentials(), nil
	}
}

// tlsCredentials builds the -tls credentials: an optional client key
// pair, and either no verification, the CAs of -tls-ca-cert, or the
// system roots.
func tlsCredentials(o *options) (credentials.TransportCredentials, error) {
	cfg := &tls.Config{ServerName: o.tlsServerName}
	if o.tlsClientCert != "" {
		pair, err := tls.LoadX509KeyPair(o.tlsClientCert, o.tlsClientKey)
		if err != nil {
			return nil, fmt.Errorf("failed to load tls client cert/key pair: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	switch {
	case o.tlsNoVerify:
		cfg.InsecureSkipVerify = true //nolint:gosec // asked for with -tls-no-verify
	case o.tlsCACert != "":
		pem, err := os.ReadFile(o.tlsCACert)
		if err != nil {
			return nil, fmt.Errorf("failed to load root CA certificates: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("no root CA certs parsed from file %s", o.tlsCACert)
		}
		cfg.RootCAs = pool
	}
	return credentials.NewTLS(cfg), nil
}

// dialTarget turns -addr into a gRPC target. Like upstream (which used
// grpc.Dial), a plain host:port goes to the passthrough resolver, so
// ":50051" dials the local host; a target with a registered scheme
// ("dns:///", "unix://", ...) is used as it is.
func dialTarget(addr string) string {
	if u, err := url.Parse(addr); err == nil && u.Scheme != "" && resolver.Get(u.Scheme) != nil {
		return addr
	}
	return "passthrough:///" + addr
}

// lastError remembers the most recent dial or handshake failure, so that a
// connect timeout can say why it never connected.
type lastError struct {
	mu  sync.Mutex
	err error
}

// record remembers err unless the attempt was merely cut short (ctx done,
// as when the probe gives up and closes the client): that would hide the
// real reason of the earlier attempts.
func (l *lastError) record(ctx context.Context, err error) {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = err
}

func (l *lastError) get() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// dial is the gRPC context dialer. gRPC hands a custom dialer "unix:" and
// "unix://" addresses verbatim and abstract socket names with a leading
// NUL; everything else is a TCP host:port.
func (l *lastError) dial(ctx context.Context, addr string) (net.Conn, error) {
	network, address := "tcp", addr
	switch {
	case strings.HasPrefix(addr, "unix://"):
		network, address = "unix", strings.TrimPrefix(addr, "unix://")
	case strings.HasPrefix(addr, "unix:"):
		network, address = "unix", strings.TrimPrefix(addr, "unix:")
	case strings.HasPrefix(addr, "\x00"):
		network = "unix"
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, address)
	if err != nil {
		l.record(ctx, err)
		return nil, err
	}
	return conn, nil
}

// recordingCreds wraps transport credentials to remember handshake
// failures (bad certificate, wrong server name, ...).
type recordingCreds struct {
	credentials.TransportCredentials
	last *lastError
}

// ClientHandshake implements credentials.TransportCredentials.
func (c recordingCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, raw)
	if err != nil {
		c.last.record(ctx, err)
	}
	return conn, info, err
}

// Clone implements credentials.TransportCredentials.
func (c recordingCreds) Clone() credentials.TransportCredentials {
	return recordingCreds{TransportCredentials: c.TransportCredentials.Clone(), last: c.last}
}
