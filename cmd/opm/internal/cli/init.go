package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/declcfg"
)

// newInitCmd is `opm init`.
func newInitCmd(s Streams) *cobra.Command {
	var (
		init                      action.Init
		iconFile, descriptionFile string
		output                    string
	)
	cmd := &cobra.Command{
		Use:   "init <packageName>",
		Short: "Generate an olm.package declarative config blob",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			init.Package = args[0]
			if output != "json" && output != "yaml" {
				return fmt.Errorf("invalid --output value %q, expected (json|yaml)", output)
			}
			if iconFile != "" {
				f, err := os.Open(iconFile)
				if err != nil {
					return fmt.Errorf("open icon file: %v", err)
				}
				defer f.Close()
				init.IconReader = f
			}
			if descriptionFile != "" {
				f, err := os.Open(descriptionFile)
				if err != nil {
					return fmt.Errorf("open description file: %v", err)
				}
				defer f.Close()
				init.DescriptionReader = f
			}
			pkg, err := init.Run()
			if err != nil {
				return err
			}
			cfg := declcfg.DeclarativeConfig{Packages: []declcfg.Package{*pkg}}
			return cfg.WriteTo(s.Out, declcfg.Format(output))
		},
	}
	cmd.Flags().StringVarP(&init.DefaultChannel, "default-channel", "c", "", "The channel that subscriptions will default to if unspecified")
	cmd.Flags().StringVarP(&iconFile, "icon", "i", "", "Path to package's icon")
	cmd.Flags().StringVarP(&descriptionFile, "description", "d", "", "Path to the operator's README.md (or other documentation)")
	cmd.Flags().StringVarP(&output, "output", "o", "json", "Output format (json|yaml)")
	return cmd
}
