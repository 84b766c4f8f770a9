package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
)

// The commands that only opm-full implements (alpha/action/full.go: the
// lean opm, built with the opm_lean tag, leaves out the packages they
// need). Both builds take their names and summaries from here: in the
// lean one each is a stub (full_lean.go) that runs opm-full with the
// whole command line, help included, so that both list the same
// commands.
var (
	queryCommand         = fullCommand{use: "query", short: "Answer questions about a catalog: where OLM updates a bundle, what it installs", question: true}
	diffCommand          = fullCommand{use: "diff OLD NEW", short: "Show what changed between two catalogs, and check that no installed bundle is stranded", question: true}
	filterCommand        = fullCommand{use: "filter INDEX [OUTPUT_DIR] --config FILE [-o json|yaml]", short: "Keep part of a catalog (packages, channels, versions) as a catalog that still validates", question: true}
	hubCommand           = fullCommand{use: "hub --catalog NAME=REF[,priority=N][,pollIntervalMinutes=M]... [--state PATH... | --kubeconfig FILE] --http-addr ADDR", short: "Serve several catalogs, and a cluster's operators, over HTTP: one API and web page for all", question: true}
	bundleExtractCommand = fullCommand{use: "extract", short: "Extracts the data in a bundle directory via ConfigMap"}
)

// fullCommand is the name line and summary of a command only opm-full
// implements; question says it is a question command (questionCommand).
type fullCommand struct {
	use, short string
	question   bool
}

// errRunFull is returned by a lean opm's command that opm-full must run:
// Main then runs it with the same arguments (runFull).
var errRunFull = errors.New("this command needs opm-full")

// fullKey annotates the lean opm's stubs of the commands opm-full
// implements.
const fullKey = "fastopm/full"

// leanHelp returns the lean opm's stub of a command only opm-full
// implements when args ask for its help or shell completions (`opm help
// alpha query`, `opm __complete alpha query install --`), which opm-full
// then gives; else nil.
func leanHelp(root *cobra.Command, args []string) *cobra.Command {
	if !action.Lean || len(args) == 0 {
		return nil
	}
	switch args[0] {
	case "help", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
	default:
		return nil
	}
	if c, _, err := root.Find(args[1:]); err == nil && c.Annotations[fullKey] != "" {
		return c
	}
	return nil
}

// runFull runs opm-full with args, for cmd, in place of this lean opm:
// the process itself becomes opm-full where it can (exec, execFull), so
// that signals, the process ID and the exit status are opm-full's, as a
// catalog pod's `opm serve --http-addr` needs. It returns, as a
// *commandError, why opm-full could not run, or the exit code of an
// opm-full run as a child.
func runFull(s Streams, args []string, cmd *cobra.Command) error {
	what := cmd.CommandPath()
	if cmd.Name() == "serve" {
		what += " --http-addr"
	}
	self, _ := os.Executable()
	if from := os.Getenv(action.EnvFullRanFrom); from != "" {
		return &commandError{fmt.Errorf("%s ran %s as opm-full, but it is a lean opm too: point %s at an opm built without the opm_lean tag (make build builds bin/%s)", from, self, action.EnvFull, action.FullProgram)}
	}
	p, err := action.FindFull(self)
	if err != nil {
		return &commandError{fmt.Errorf("%s needs %s, the opm that links every package (this lean opm leaves out Kubernetes' types, client-go, CEL and crdify, so that serve and validate start small): %w",
			what, action.FullProgram, err)}
	}
	code, err := execFull(s, p, args, append(os.Environ(), action.EnvFullRanFrom+"="+self))
	switch {
	case err != nil:
		return &commandError{fmt.Errorf("run %s: %w", p, err)}
	case code != 0:
		// Reported by opm-full.
		return &commandError{&ExitError{Code: code}}
	}
	return nil
}

// execChild runs p with args as a child process on s's streams and
// returns its exit code.
func execChild(s Streams, p string, args []string, env []string) (int, error) {
	c := exec.Command(p, args...)
	c.Stdin, c.Stdout, c.Stderr, c.Env = s.In, s.Out, s.Err, env
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 0, err
	}
	return 0, nil
}
