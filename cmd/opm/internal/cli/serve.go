package cli

import (
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
)

func newServeCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		a        action.Serve
		enforce  bool
		debugLog bool
	)
	cmd := &cobra.Command{
		Use:   "serve <source_path>",
		Short: "serve declarative configs",
		Long: `This command serves declarative configs via a GRPC server.

NOTE: The declarative config directory is loaded by the serve command at
startup. Changes made to the declarative config after the this command starts
will not be reflected in the served content.

The server answers the Registry API of OLM catalog images, the standard gRPC
health service (SERVING for any service name once the catalog is loaded) and
server reflection. It stops gracefully on SIGTERM or SIGINT. Unlike upstream
opm, the pprof endpoint is off unless --pprof-addr is given an address.

With --http-addr the same process also serves the catalog over HTTP, from
the same snapshot: OLM v1 catalogd's API (/api/v1/all, /api/v1/metas, also
under /catalogs/NAME/), JSON answers (/api/v1/packages, /api/v1/updates),
/healthz, /readyz, Prometheus /metrics and a web page at /.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.CatalogDir = args[0]
			a.MaxFileSize = g.maxFileSize.limit()
			if cmd.Flags().Changed("cache-enforce-integrity") {
				a.Enforce = action.EnforceOff
				if enforce {
					a.Enforce = action.EnforceOn
				}
			}
			level := slog.LevelInfo
			if debugLog {
				level = slog.LevelDebug
			}
			a.Logger = newLogger(s, level)
			if action.Lean && a.HTTPAddr != "" {
				// The HTTP side is opm-full's (alpha/action/full.go).
				return errRunFull
			}
			return a.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.BoolVar(&debugLog, "debug", false, "enable debug logging")
	f.StringVarP(&a.TerminationLog, "termination-log", "t", "/dev/termination-log", "path to a container termination log file")
	f.StringVarP(&a.Port, "port", "p", "50051", "port number to serve on")
	f.StringVar(&a.PprofAddr, "pprof-addr", "", "address of startup profiling endpoint (addr:port format); empty (the default) disables it")
	f.BoolVar(&a.PprofCaptureProfiles, "pprof-capture-profiles", false, "capture pprof CPU profiles")
	f.StringVar(&a.CacheDir, "cache-dir", "", "if set, sync and persist server cache directory")
	f.BoolVar(&a.CacheOnly, "cache-only", false, "sync the serve cache and exit without serving")
	f.BoolVar(&a.CacheHTTP, "cache-http", false, "also store the catalog's JSON lines, what --http-addr serves, in a cache this command builds in --cache-dir, which it needs (without them --http-addr derives them at start)")
	f.StringVar(&a.HTTPAddr, "http-addr", "", "also serve the catalog over HTTP on this address (addr:port, e.g. :8080); empty (the default) disables it")
	f.StringVar(&a.HTTPCatalogName, "http-catalog-name", "", "the catalog's name in catalogd's URLs /catalogs/NAME/api/v1/... (default: the catalog directory's name)")
	f.StringVar(&a.HTTPTLSCert, "http-tls-cert", "", "serve HTTPS with this certificate file (PEM; reloaded when it changes); needs --http-tls-key")
	f.StringVar(&a.HTTPTLSKey, "http-tls-key", "", "the private key file (PEM) of --http-tls-cert")
	f.BoolVar(&enforce, "cache-enforce-integrity", false, "exit with error if cache is not present or has been invalidated. (default: true when --cache-dir is set and --cache-only is false, false otherwise), ")
	return cmd
}

// newLogger writes logs in logrus' text layout (time, lower-case level,
// msg, then fields), as upstream opm's logs look.
func newLogger(s Streams, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(s.Err, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.TimeKey:
				return slog.String(slog.TimeKey, a.Value.Time().Format(time.RFC3339))
			case slog.LevelKey:
				lvl := strings.ToLower(a.Value.String())
				if lvl == "warn" {
					lvl = "warning"
				}
				return slog.String(slog.LevelKey, lvl)
			}
			return a
		},
	}))
}
