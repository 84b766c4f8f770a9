//go:build opm_lean

package cli

import "github.com/spf13/cobra"

// The lean opm's stubs of the commands only opm-full implements (full.go).

func newQueryCmd(Streams, *globalOptions) *cobra.Command  { return queryCommand.stub() }
func newDiffCmd(Streams, *globalOptions) *cobra.Command   { return diffCommand.stub() }
func newFilterCmd(Streams, *globalOptions) *cobra.Command { return filterCommand.stub() }
func newHubCmd(Streams, *globalOptions) *cobra.Command    { return hubCommand.stub() }
func newBundleExtractCmd(Streams) *cobra.Command          { return bundleExtractCommand.stub() }

// stub is the lean opm's command in place of c: it takes any flags and
// arguments and leaves them, and its help, to opm-full.
func (c fullCommand) stub() *cobra.Command {
	cmd := &cobra.Command{
		Use:                c.use,
		Short:              c.short,
		DisableFlagParsing: true,
		Annotations:        map[string]string{fullKey: "true"},
		RunE:               func(*cobra.Command, []string) error { return errRunFull },
	}
	if c.question {
		questionCommand(cmd)
	}
	return cmd
}
