package cli

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/template/basic"
)

func newConvertTemplateCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "convert-template",
		Short: "Convert existing FBC to a supported template type",
	}
	cmd.AddCommand(newConvertBasicCmd(s))
	return cmd
}

func newConvertBasicCmd(s Streams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "basic [<fbc-file> | -]",
		Args:  cobra.MaximumNArgs(1),
		Short: "Generate a basic template from existing FBC",
		Long: `Generate a basic template from existing FBC.

This command outputs a basic catalog template to STDOUT from input FBC.
If no argument is specified or is '-' input is assumed from STDIN.
`,
		RunE: func(_ *cobra.Command, args []string) error {
			switch output {
			case "yaml", "json":
			default:
				// Upstream stops here with Go's standard logger.
				return &stdLogError{fmt.Errorf("invalid --output value %q, expected (json|yaml)", output)}
			}
			file := "-"
			if len(args) == 1 {
				file = args[0]
			}
			in, name, err := openFileOrStdin(s, file)
			if err != nil {
				return &usageReport{fmt.Errorf("unable to open input: %q", name)}
			}
			defer in.Close()
			var buf bytes.Buffer
			if err := basic.Convert(in, &buf, output); err != nil {
				return &usageReport{fmt.Errorf("converting: %v", err)}
			}
			_, err = s.Out.Write(buf.Bytes())
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "json", "Output format (json|yaml)")
	return cmd
}
