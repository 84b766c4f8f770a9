package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/model"
)

// validationOutput is upstream's structured result, plus every problem.
type validationOutput struct {
	Passed   bool             `json:"passed"`
	Error    *validationError `json:"error,omitempty"`
	Problems model.Problems   `json:"problems,omitempty"`
}

type validationError struct {
	Message string `json:"message"`
}

func newValidateCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		output string
		strict bool
	)
	cmd := &cobra.Command{
		Use:   "validate <directory>",
		Short: "Validate the declarative index config",
		Long: `Validate the declarative config JSON and YAML files in a directory: every
file parses, every blob meets the file-based catalog schema, and the upgrade
graph of every package is sound. Every problem is reported in one run.

Exit status: 0 when the catalog is valid, 1 when it is not.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && output != "json" && output != "yaml" {
				return fmt.Errorf("invalid --output value %q, expected (json|yaml)", output)
			}
			dir := args[0]
			st, err := os.Stat(dir)
			if err != nil {
				return err
			}
			if !st.IsDir() {
				return fmt.Errorf("%q is not a directory", dir)
			}
			res, err := action.Validate{FS: os.DirFS(dir), Strict: strict, MaxFileSize: g.maxFileSize.limit()}.Run(cmd.Context())
			if err != nil {
				return err
			}
			for _, w := range res.Problems.Warnings() {
				if s.Terminal {
					fmt.Fprintf(s.Err, "warning: %s\n", w.Message)
				} else {
					logLine(s.Err, "warning", w.Message)
				}
			}
			verr := res.Err()
			if verr != nil {
				// A bundle directory: one line, not a problem for each
				// of its files. With -o, the structured result still
				// (upstream prints one for every directory it reads),
				// its error saying so.
				if berr := action.BundleNotCatalog(dir); berr != nil {
					if output == "" {
						return berr
					}
					verr = berr
				}
			}
			if output == "" {
				switch {
				case verr == nil:
					return nil
				case s.Terminal:
					// The tree drawn, one problem a line, in words;
					// scripts get upstream's one log line.
					fmt.Fprint(s.Err, res.Problems.Report())
					return &ExitError{Code: 1}
				}
				return &ExitError{Code: 1, Err: verr}
			}
			out := validationOutput{Passed: verr == nil, Problems: res.Problems}
			if verr != nil {
				out.Error = &validationError{Message: verr.Error()}
			}
			var data []byte
			if output == "json" {
				data, err = json.MarshalIndent(out, "", "  ")
			} else {
				data, err = yaml.Marshal(out)
			}
			if err != nil {
				return fmt.Errorf("failed to marshal output: %w", err)
			}
			if _, err := fmt.Fprintln(s.Out, string(data)); err != nil {
				return fmt.Errorf("failed to write output: %w", err)
			}
			if verr != nil {
				return &ExitError{Code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format for validation results (json|yaml)")
	cmd.Flags().BoolVar(&strict, "strict", false, "Treat warnings (schema checks stricter than upstream opm, files other tools read differently) as errors")
	return cmd
}
