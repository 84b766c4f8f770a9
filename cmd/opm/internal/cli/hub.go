//go:build !opm_lean

package cli

import (
	"context"
	"errors"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/pkg/httpserver"
	"github.com/fastopm/fastopm/pkg/image"
)

// newHubCmd is `opm alpha hub`: several catalogs, and a cluster's state,
// over HTTP in one process.
func newHubCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		a        action.Hub
		catalogs []string
		cacheDir string
		timeout  olmFlags
		debugLog bool

		kubeconfig, kubeContext string
		pullBundles             bool
	)
	cmd := &cobra.Command{
		Use:   hubCommand.use,
		Short: hubCommand.short,
		Long: `Serve several catalogs at once over HTTP, as a cluster holds them: OLM takes
a Subscription's dependencies from every CatalogSource, by priority.

Each --catalog [NAMESPACE/]NAME=REF is a catalog directory or catalog
image, loaded in parallel into the snapshots "opm serve" uses, and served
under /catalogs/NAME/ as "opm serve --http-addr" serves one catalog
(catalogd's API /api/v1/all and /api/v1/metas, the JSON answers, the page).
At the root, the answers take every catalog into account: the package
list merged (a package once, with the catalogs that offer it and the one
a Subscription without a source uses: the highest priority, then the
name), what a new Subscription installs with its dependencies from any
catalog (as "opm alpha query install" with several catalogs), and the web
page over all of them. ,priority=N sets a catalog's priority (higher is
preferred); ,pollIntervalMinutes=M polls an image by tag for a new digest
every M minutes, as catalogd polls a ClusterCatalog, and serves the new
content once it is loaded; a load that fails leaves the last good content
served, and says so (/readyz, the page). ,name=HUBNAME names the catalog
in the hub (its URLs, the page, the answers) when that must differ from
NAME, its CatalogSource's name: two CatalogSources of one name in two
namespaces are given as --catalog team-a/my-catalog=REF1,name=my-catalog-a
--catalog team-b/my-catalog=REF2,name=my-catalog-b.

--state reads a cluster's objects (as "opm alpha query cluster"): each
catalog gives the content of the state's CatalogSource of its NAME
(NAMESPACE/NAME when several have it; its priority the CatalogSource's
unless given); a CatalogSource without a catalog is one OLM cannot reach.
The hub then answers query cluster's questions over its catalogs
(/api/v1/cluster, /api/v1/cluster/installed), and the page shows the
installed operators, what OLM's next sync does in each namespace, and what
installing a package into a namespace would do. --pull-bundles pulls the
images of the bundles such a what-if's InstallPlan needs that the catalog
gives by image only, for its steps and permissions (as "opm alpha query
cluster --plan --pull-bundles").

--kubeconfig FILE (or $KUBECONFIG, with --context NAME) reads the objects
from a live cluster instead of --state, as "opm alpha query cluster" does,
and reads them again every --state-interval (default 3m): a state that
changed is swapped in atomically, as a reloaded catalog is; a reading that
fails leaves the last good state served, and says so (/readyz, the page).
--state and --kubeconfig do not go together.

/healthz answers while the process serves; /readyz once every catalog is
served; /metrics has each catalog's size, loads and requests by catalog.
It stops gracefully on SIGTERM or SIGINT.

Exit codes: 0 after a stop signal; 2 when the command line or the state is
wrong (a catalog name that is not a DNS-1123 subdomain, two catalogs of one
name in the hub, a state that does not read) or HTTP cannot be served.`,
		Example: `  opm alpha hub --catalog community=./community-operators --catalog certified=quay.io/example/certified:v4.16,priority=10 --http-addr :8080
  opm alpha hub --catalog team-a/my-catalog=./catalog-a,name=my-catalog-a --catalog team-b/my-catalog=./catalog-b,name=my-catalog-b --state must-gather.local.123 --http-addr :8080
  opm alpha hub --catalog redhat-operators=registry.redhat.io/redhat/redhat-operator-index:v4.16,pollIntervalMinutes=60 --state must-gather.local.123 --http-addr :8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(catalogs) == 0 {
				return &usageReport{errors.New("give at least one catalog: --catalog NAME=REF")}
			}
			if a.HTTPAddr == "" {
				return &usageReport{errors.New("--http-addr is required (e.g. :8080)")}
			}
			if len(a.State) > 0 && (kubeconfig != "" || kubeContext != "") {
				return &usageReport{errors.New("--state and --kubeconfig (--context) do not go together: the objects are read from files or from a cluster")}
			}
			if cmd.Flags().Changed("state-interval") && a.StateInterval <= 0 {
				return &usageReport{errors.New("--state-interval must be a positive duration (e.g. 3m)")}
			}
			if len(a.State) == 0 && (kubeconfig != "" || kubeContext != "") {
				cfg, err := clusterConfig(kubeconfig, kubeContext)
				if err != nil {
					return err
				}
				a.Cluster = cfg
			} else if cmd.Flags().Changed("state-interval") {
				return &usageReport{errors.New("--state-interval reads a live cluster again: it needs --kubeconfig (files given by --state are read once)")}
			}
			for _, c := range catalogs {
				f, err := action.ParseHubCatalog(c)
				if err != nil {
					return &usageReport{err}
				}
				a.Catalogs = append(a.Catalogs, f)
			}
			opts := g.imageOptions(cacheDir)
			a.Sources = &action.Resolver{ImageOptions: opts, MaxFileSize: g.maxFileSize.limit(),
				Allowed: action.RefCatalogDir | action.RefCatalogImage}
			if pullBundles {
				a.BundleImages = &action.Resolver{ImageOptions: opts, Allowed: action.RefBundleImage}
			}
			a.Digest = func(ctx context.Context, ref string) (string, string, error) { return image.Digest(ctx, ref, opts...) }
			a.MaxFileSize = g.maxFileSize.limit()
			a.Budget, a.MaxTerms = timeout.timeout, maxTerms(timeout.terms)
			if a.Budget == 0 {
				a.Budget = 1 << 62 // no limit
			}
			level := slog.LevelInfo
			if debugLog {
				level = slog.LevelDebug
			}
			a.Logger = newLogger(s, level)
			if err := a.Run(cmd.Context()); err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&catalogs, "catalog", nil, "a catalog as [NAMESPACE/]NAME=REF[,priority=N][,pollIntervalMinutes=M][,name=HUBNAME], REF a catalog directory or image, NAME its CatalogSource's name, HUBNAME its name in the hub when another (default NAME) (repeatable)")
	f.StringArrayVar(&a.State, "state", nil, "a cluster's objects: a file, a directory or a must-gather (repeatable)")
	f.StringVar(&kubeconfig, "kubeconfig", "", "read the objects from the live cluster of this kubeconfig instead of --state, and again every --state-interval")
	f.StringVar(&kubeContext, "context", "", "the kubeconfig's context to use (default: its current context)")
	f.DurationVar(&a.StateInterval, "state-interval", action.DefaultStateInterval, "with --kubeconfig, how often the cluster's objects are read again")
	f.BoolVar(&pullBundles, "pull-bundles", false, "pull the images of the bundles a what-if's InstallPlan needs that the catalog gives by image only, for their steps")
	f.StringVar(&a.GlobalNamespace, "global-namespace", "", "OLM's global catalog namespace (default: openshift-marketplace when the state has CatalogSources there, else olm)")
	f.StringVar(&a.HTTPAddr, "http-addr", "", "the address to serve HTTP on (addr:port, e.g. :8080)")
	f.StringVar(&a.HTTPTLSCert, "http-tls-cert", "", "serve HTTPS with this certificate file (PEM; reloaded when it changes); needs --http-tls-key")
	f.StringVar(&a.HTTPTLSKey, "http-tls-key", "", "the private key file (PEM) of --http-tls-cert")
	f.BoolVar(&debugLog, "debug", false, "enable debug logging")
	f.DurationVar(&timeout.timeout, "timeout", httpserver.DefaultBudget,
		"the time each question may take; past it the answer is 503, undecided (0: no limit)")
	f.IntVar(&timeout.terms, "max-terms", httpserver.DefaultMaxTerms,
		"the size each install question's problem may reach; past it the answer is 503, undecided (0: no limit)")
	addImageCacheFlag(cmd, &cacheDir)
	return questionCommand(cmd)
}
