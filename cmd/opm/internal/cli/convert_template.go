package cli

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	alphatemplate "github.com/fastopm/fastopm/alpha/template"
)

func newConvertTemplateCmd(s Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "convert-template",
		Short: "Convert existing FBC to a supported template type",
	}
	for _, typ := range alphatemplate.ConvertTypes {
		cmd.AddCommand(newConvertCmd(s, typ))
	}
	return cmd
}

// newConvertCmd is `opm alpha convert-template TYPE`, with upstream's
// texts, flags and errors.
func newConvertCmd(s Streams, typ string) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   typ + " [<fbc-file> | -]",
		Args:  cobra.MaximumNArgs(1),
		Short: "Generate a " + typ + " template from existing FBC",
		Long: `Generate a ` + typ + ` template from existing FBC.

This command outputs a ` + typ + ` catalog template to STDOUT from input FBC.
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
			if err := alphatemplate.Convert(in, &buf, typ, output); err != nil {
				return &usageReport{fmt.Errorf("converting: %v", err)}
			}
			_, err = s.Out.Write(buf.Bytes())
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "json", "Output format (json|yaml)")
	return cmd
}
