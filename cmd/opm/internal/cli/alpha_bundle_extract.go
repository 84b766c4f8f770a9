//go:build !opm_lean

package cli

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/pkg/configmap"
)

// serviceAccountDir is where the in-cluster configuration is read from;
// tests point it at their own token and CA.
var serviceAccountDir = configmap.ServiceAccountDir

// newBundleExtractCmd is `opm alpha bundle extract`, which OLM's
// bundle-unpack Jobs run (`opm alpha bundle extract -m /bundle/ -n NS -c
// NAME -z`) to put a bundle's files into a ConfigMap. Flags, defaults,
// log lines and errors are upstream's.
func newBundleExtractCmd(s Streams) *cobra.Command {
	var (
		debug, gz                                 bool
		kubeconfig, dir, configMapName, namespace string
		dataLimit                                 uint64
	)
	cmd := &cobra.Command{
		Use:   bundleExtractCommand.use,
		Short: bundleExtractCommand.short,
		Long:  "Extract takes as input a directory containing manifests and writes the per file contents to a ConfigMap",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := extractLogger(s.Err, debug)
			cfg, err := configmap.RESTConfig(configmap.ConfigOptions{
				Kubeconfig: kubeconfig, ServiceAccountDir: serviceAccountDir, Log: log,
			})
			if err == nil {
				var client configmap.ConfigMaps
				client, err = configmap.Client(cfg, namespace)
				if err == nil {
					err = configmap.Write(cmd.Context(), client, namespace, configMapName, func() (*configmap.Content, error) {
						return configmap.Read(dir, gz, dataLimit, log)
					}, os.Getenv(configmap.EnvContainerImage), log)
					if err != nil {
						return &usageReport{fmt.Errorf("error loading manifests from directory: %s", err)}
					}
					return nil
				}
			}
			return fmt.Errorf("cluster config failed: %v", err)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&debug, "debug", false, "enable debug logging")
	f.StringVarP(&kubeconfig, "kubeconfig", "k", "", "absolute path to kubeconfig file")
	f.StringVarP(&dir, "manifestsdir", "m", "/", "path to directory containing manifests")
	f.StringVarP(&configMapName, "configmapname", "c", "", "name of configmap to write bundle data")
	f.StringVarP(&namespace, "namespace", "n", "openshift-operator-lifecycle-manager", "namespace to write configmap data")
	f.Uint64VarP(&dataLimit, "datalimit", "l", 1<<20, "maximum limit in bytes for total bundle data")
	f.BoolVarP(&gz, "gzip", "z", false, "enable gzip compression of configmap data")
	return cmd
}

// extractLogger writes extract's log lines as upstream's logrus does:
// `time=... level=... msg=...` and the fields sorted by key; debug lines
// only with --debug (upstream's extract writes none, nor does ours today).
func extractLogger(w io.Writer, debug bool) configmap.Logger {
	return func(level, msg string, kv ...string) {
		if level == "debug" && !debug {
			return
		}
		type field struct{ k, v string }
		fields := make([]field, 0, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			fields = append(fields, field{kv[i], kv[i+1]})
		}
		sort.SliceStable(fields, func(i, j int) bool { return fields[i].k < fields[j].k })
		var b strings.Builder
		fmt.Fprintf(&b, "time=%q level=%s msg=%s", time.Now().Format(time.RFC3339), level, logValue(msg))
		for _, f := range fields {
			b.WriteString(" " + f.k + "=" + logValue(f.v))
		}
		b.WriteByte('\n')
		_, _ = io.WriteString(w, b.String())
	}
}
