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

// leansHelp says whether args ask a lean opm for the help or the shell
// completions of a command only opm-full implements (`opm help alpha
// query`, `opm __complete alpha query install --`), which opm-full then
// gives.
func leansHelp(root *cobra.Command, args []string) bool {
	if !action.Lean || len(args) == 0 {
		return false
	}
	switch args[0] {
	case "help", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
	default:
		return false
	}
	c, _, err := root.Find(args[1:])
	return err == nil && c.Annotations[fullKey] != ""
}

// runFull runs opm-full with args in place of this lean opm and returns
// its exit code: the process itself becomes opm-full where it can
// (exec, execFull), so that signals, the process ID and the exit status
// are opm-full's, as a catalog pod's `opm serve --http-addr` needs.
func runFull(s Streams, args []string) int {
	// As a question command's errors, or upstream's.
	code, what := 1, "this command"
	named := args
	if leansHelp(New(s), args) {
		named = args[1:]
	}
	if c, _, err := New(s).Find(named); err == nil {
		if what = c.CommandPath(); c.Name() == "serve" {
			what += " --http-addr"
		}
		if c.Annotations[questionKey] != "" {
			code = errorExit
		}
	}
	self, _ := os.Executable()
	if from := os.Getenv(action.EnvFullRanFrom); from != "" {
		fmt.Fprintf(s.Err, "Error: %s ran %s as opm-full, but it is a lean opm too: point %s at an opm built without the opm_lean tag (make build builds bin/%s)\n", from, self, action.EnvFull, action.FullProgram)
		return code
	}
	p, err := action.FindFull(self)
	if err != nil {
		fmt.Fprintf(s.Err, "Error: %s needs %s, the opm that links every package (this lean opm leaves out Kubernetes' types, client-go, CEL and crdify, so that serve and validate start small): %v\n",
			what, action.FullProgram, err)
		return code
	}
	env := append(os.Environ(), action.EnvFullRanFrom+"="+self)
	n, err := execFull(s, p, args, env)
	if err != nil {
		fmt.Fprintf(s.Err, "Error: run %s: %v\n", p, err)
		return code
	}
	return n
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
