package cli

import (
	"crypto/x509"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/pkg/bundle"
	"github.com/fastopm/fastopm/pkg/image"
)

// newAlphaBundleCmd is `opm alpha bundle`.
func newAlphaBundleCmd(s Streams, g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Operator bundle commands",
		Long:  "Operator bundle commands",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(newBundleUnpackCmd(s))
	cmd.AddCommand(newBundleExtractCmd(s))
	cmd.AddCommand(newBundleGenerateCmd(s), newBundleBuildCmd(s, g))
	return cmd
}

// newBundleUnpackCmd is `opm alpha bundle unpack`. Like upstream's, it has
// its own --skip-tls-verify, --use-http and deprecated -s/--skip-tls
// flags, which take the place of opm's global ones.
func newBundleUnpackCmd(s Streams) *cobra.Command {
	var (
		debug, skipTLS, skipTLSVerify, useHTTP, skipValidation bool
		rootCA, out, cacheDir                                  string
	)
	cmd := &cobra.Command{
		Use:   "unpack BUNDLE_NAME[:TAG|@DIGEST]",
		Short: "Unpacks the content of an operator bundle",
		Long: `Unpacks the content of an operator bundle into a directory.

The image is pulled and unpacked into a temporary directory inside the output
directory, and, unless --skip-validation is given, checked against the
registry+v1 bundle rules (annotations with a package and a channel, exactly
one named ClusterServiceVersion, every owned CRD provided and served). Only
then is its content moved into the output directory, replacing files of the
same name.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref := args[0]
			if skipTLS {
				useHTTP = true
			}
			opts := []image.Option{image.WithSkipTLSVerify(skipTLSVerify), image.WithPlainHTTP(useHTTP)}
			if cacheDir != "" {
				opts = append(opts, image.WithCacheDir(cacheDir))
			}
			if rootCA != "" {
				pem, err := os.ReadFile(rootCA)
				if err != nil {
					return err
				}
				pool := x509.NewCertPool()
				if !pool.AppendCertsFromPEM(pem) {
					return fmt.Errorf("failed to fetch root CA from %s", rootCA)
				}
				opts = append(opts, image.WithRootCAs(pool))
			}
			if skipValidation {
				logLine(s.Err, "info", "skipping bundle validation")
			} else {
				opts = append(opts, image.WithCheck(func(dir string) error {
					_, warnings, err := bundle.Render(os.DirFS(dir), ref, bundle.Options{})
					for _, w := range warnings {
						logLine(s.Err, "warning", w.String())
					}
					if err != nil {
						return fmt.Errorf("bundle validation failed: %w", err)
					}
					return nil
				}))
			}
			if debug {
				logLine(s.Err, "debug", fmt.Sprintf("unpacking %s into %s", ref, out))
			}
			return image.UnpackBundle(cmd.Context(), ref, out, opts...)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&debug, "debug", "d", false, "enable debug log output")
	f.BoolVarP(&skipTLS, "skip-tls", "s", false, "use plain HTTP")
	f.BoolVar(&skipTLSVerify, "skip-tls-verify", false, "disable TLS verification")
	f.BoolVar(&useHTTP, "use-http", false, "use plain HTTP")
	f.BoolVarP(&skipValidation, "skip-validation", "v", false, "disable bundle validation")
	f.StringVarP(&rootCA, "root-ca", "c", "", "file path of a root CA to use when communicating with image registries")
	f.StringVarP(&out, "out", "o", "./", "directory in which to unpack operator bundle content")
	_ = f.MarkDeprecated("skip-tls", "use --use-http and --skip-tls-verify instead")
	addImageCacheFlag(cmd, &cacheDir)
	return cmd
}
