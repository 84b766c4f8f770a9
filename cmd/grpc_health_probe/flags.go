package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"

	"google.golang.org/grpc/metadata"
)

// options are the parsed command-line flags.
type options struct {
	addr        string
	service     string
	userAgent   string
	connTimeout time.Duration
	rpcTimeout  time.Duration
	headers     rpcHeaders

	tls           bool
	tlsNoVerify   bool
	tlsCACert     string
	tlsClientCert string
	tlsClientKey  string
	tlsServerName string
	alts          bool
	spiffe        bool

	verbose bool
	gzip    bool
	version bool
}

// parseFlags parses args (without the program name) with the flag set of
// upstream grpc_health_probe and checks that they make sense together.
// Flag syntax errors (and the usage) are also printed to stderr by the flag
// package; -h and -help return flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("grpc_health_probe", flag.ContinueOnError)
	fs.SetOutput(stderr)

	fs.StringVar(&o.addr, "addr", "", "(required) tcp host:port to connect")
	fs.StringVar(&o.service, "service", "", "service name to check (default: \"\")")
	fs.StringVar(&o.userAgent, "user-agent", "grpc_health_probe", "user-agent header value of health check requests")
	fs.Var(&o.headers, "rpc-header", "additional RPC headers in 'name: value' format. May specify more than one via multiple flags.")
	fs.DurationVar(&o.connTimeout, "connect-timeout", time.Second, "timeout for establishing connection")
	fs.DurationVar(&o.rpcTimeout, "rpc-timeout", time.Second, "timeout for health check rpc")
	fs.BoolVar(&o.tls, "tls", false, "use TLS (default: false, INSECURE plaintext transport)")
	fs.BoolVar(&o.tlsNoVerify, "tls-no-verify", false, "(with -tls) don't verify the certificate (INSECURE) presented by the server (default: false)")
	fs.StringVar(&o.tlsCACert, "tls-ca-cert", "", "(with -tls, optional) file containing trusted certificates for verifying server")
	fs.StringVar(&o.tlsClientCert, "tls-client-cert", "", "(with -tls, optional) client certificate for authenticating to the server (requires -tls-client-key)")
	fs.StringVar(&o.tlsClientKey, "tls-client-key", "", "(with -tls) client private key for authenticating to the server (requires -tls-client-cert)")
	fs.StringVar(&o.tlsServerName, "tls-server-name", "", "(with -tls) override the hostname used to verify the server certificate")
	fs.BoolVar(&o.alts, "alts", false, "use ALTS (default: false, INSECURE plaintext transport)")
	fs.BoolVar(&o.verbose, "v", false, "verbose logs")
	fs.BoolVar(&o.gzip, "gzip", false, "use GZIPCompressor for requests and GZIPDecompressor for response (default: false)")
	fs.BoolVar(&o.spiffe, "spiffe", false, "use SPIFFE to obtain mTLS credentials (not supported by this build)")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")

	if err := fs.Parse(args); err != nil {
		return nil, err //nolint:wrapcheck // the flag package's message is the message
	}
	if o.version {
		return o, nil
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return o, nil
}

// validate applies upstream's rules about which flags go together.
func (o *options) validate() error {
	switch {
	case o.addr == "":
		return errors.New("-addr not specified")
	case o.connTimeout <= 0:
		return fmt.Errorf("-connect-timeout must be greater than zero (specified: %v)", o.connTimeout)
	case o.rpcTimeout <= 0:
		return fmt.Errorf("-rpc-timeout must be greater than zero (specified: %v)", o.rpcTimeout)
	case !o.tls && o.tlsNoVerify:
		return errors.New("specified -tls-no-verify without specifying -tls")
	case !o.tls && o.tlsCACert != "":
		return errors.New("specified -tls-ca-cert without specifying -tls")
	case !o.tls && o.tlsClientCert != "":
		return errors.New("specified -tls-client-cert without specifying -tls")
	case !o.tls && o.tlsServerName != "":
		return errors.New("specified -tls-server-name without specifying -tls")
	case o.tlsClientCert != "" && o.tlsClientKey == "":
		return errors.New("specified -tls-client-cert without specifying -tls-client-key")
	case o.tlsClientCert == "" && o.tlsClientKey != "":
		return errors.New("specified -tls-client-key without specifying -tls-client-cert")
	case o.tlsNoVerify && o.tlsCACert != "":
		return errors.New("cannot specify -tls-ca-cert with -tls-no-verify (CA cert would not be used)")
	case o.tlsNoVerify && o.tlsServerName != "":
		return errors.New("cannot specify -tls-server-name with -tls-no-verify (server name would not be used)")
	case o.alts && o.spiffe:
		return errors.New("-alts and -spiffe are mutually incompatible")
	case o.tls && o.alts:
		return errors.New("cannot specify -tls with -alts")
	case o.tls && o.spiffe:
		return errors.New("-tls and -spiffe are mutually incompatible")
	}
	return nil
}

// logOptions prints the parsed options the way upstream's -v does.
func (o *options) logOptions(logf func(string, ...any)) {
	logf("parsed options:")
	logf("> addr=%s conn_timeout=%v rpc_timeout=%v", o.addr, o.connTimeout, o.rpcTimeout)
	if len(o.headers.md) > 0 {
		logf("> headers: %s", o.headers.String())
	}
	logf("> tls=%v", o.tls)
	if o.tls {
		logf("  > no-verify=%v ", o.tlsNoVerify)
		logf("  > ca-cert=%s", o.tlsCACert)
		logf("  > client-cert=%s", o.tlsClientCert)
		logf("  > client-key=%s", o.tlsClientKey)
		logf("  > server-name=%s", o.tlsServerName)
	}
	logf("> alts=%v", o.alts)
	logf("> spiffe=%v", o.spiffe)
}

// rpcHeaders is the repeatable -rpc-header flag: "name: value" pairs sent
// as metadata with the health check.
type rpcHeaders struct{ md metadata.MD }

// String implements flag.Value. It lists the header names only: values
// are often credentials and -v output ends up in pod events.
func (h *rpcHeaders) String() string {
	if h == nil || len(h.md) == 0 {
		return ""
	}
	names := slices.Sorted(maps.Keys(h.md))
	return strings.Join(names, ", ")
}

// Set implements flag.Value: it appends one "name: value" header. Spaces
// after the colon are dropped, as upstream does; the name is lower-cased
// (gRPC metadata keys are) and must be a valid metadata key.
func (h *rpcHeaders) Set(value string) error {
	name, val, ok := strings.Cut(value, ":")
	if !ok {
		return fmt.Errorf("invalid RPC header, expected 'key: value', got %q", value)
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if !validHeaderName(name) {
		return fmt.Errorf("invalid RPC header name %q (only 0-9 a-z - _ . are allowed)", name)
	}
	if h.md == nil {
		h.md = metadata.MD{}
	}
	h.md.Append(name, strings.TrimLeftFunc(val, unicode.IsSpace))
	return nil
}

// validHeaderName reports whether name is usable as a gRPC metadata key,
// so that a typo fails as a bad argument rather than as an RPC failure.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
		default:
			return false
		}
	}
	return true
}
