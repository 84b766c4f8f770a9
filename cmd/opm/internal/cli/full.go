package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

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
	hubCommand           = fullCommand{use: "hub --catalog NAME=REF[,priority=N][,pollIntervalMinutes=M][,name=HUBNAME]... [--state PATH... | --kubeconfig FILE] --http-addr ADDR", short: "Serve several catalogs, and a cluster's operators, over HTTP: one API and web page for all", question: true}
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

// leanRoute returns the command of args that a lean opm hands to
// opm-full before running anything itself, else nil: the help or shell
// completions of a command only opm-full implements (`opm help alpha
// query`, `opm __complete alpha query install --`, `opm __complete help
// alpha query ""`), which opm-full gives, and `serve --http-addr ADDR`,
// whose flags opm-full parses (a deprecated flag is warned about once).
// The stubs of those commands hand themselves over when run (errRunFull).
func leanRoute(args []string) *cobra.Command {
	if !action.Lean || len(args) == 0 {
		return nil
	}
	switch args[0] {
	case "help", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
	default:
		// Nothing to look at (serve without --http-addr, which has no
		// short form, as catalog pods run it): build no tree.
		if !slices.Contains(args, "serve") || !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--http-addr") }) {
			return nil
		}
	}
	// A tree of its own, silent: parsing serve's flags here prints nothing.
	root := silentTree()
	path := args
	switch args[0] {
	case "help":
		path = args[1:]
	case cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		if path = args[1:]; len(path) > 0 && path[0] == "help" {
			path = path[1:]
		}
	}
	c, rest, err := root.Find(path)
	switch {
	case err != nil:
		return nil
	case c.Annotations[fullKey] != "":
		return c
	case len(path) == len(args) && c.Name() == "serve" && c.Parent() == root:
		// A command line that does not parse is serve's to report.
		if c.ParseFlags(rest) == nil {
			if addr, _ := c.Flags().GetString("http-addr"); addr != "" {
				return c
			}
		}
	}
	return nil
}

// runFull runs opm-full with args, for cmd, in place of this lean opm:
// the process itself becomes opm-full where it can (exec, execFull), so
// that signals, the process ID and the exit status are opm-full's, as a
// catalog pod's `opm serve --http-addr` needs. It returns, as a
// *commandError, why opm-full could not run (for serve, also written to
// its termination log, as serve's own errors are), or the exit code of an
// opm-full run as a child (a *childExit).
func runFull(ctx context.Context, s Streams, args []string, cmd *cobra.Command) error {
	err := execFullFor(ctx, s, args, cmd)
	var ce *childExit
	if err == nil || errors.As(err, &ce) {
		return err
	}
	if cmd.Name() == "serve" {
		if p, _ := cmd.Flags().GetString("termination-log"); p != "" {
			_ = os.WriteFile(p, []byte(err.Error()+"\n"), 0o644)
		}
	}
	return &commandError{err}
}

func execFullFor(ctx context.Context, s Streams, args []string, cmd *cobra.Command) error {
	what := cmd.CommandPath()
	if cmd.Name() == "serve" {
		what += " --http-addr"
	}
	self, _ := os.Executable()
	p, err := action.FindFull(self)
	if err != nil {
		return fmt.Errorf("%s needs %s, the opm that links every package (this lean opm leaves out Kubernetes' types, client-go, CEL and crdify, so that serve and validate start small): %w",
			what, action.FullProgram, err)
	}
	// A signal that came while this opm started is not passed on by the
	// exec: stop here, as the command would have.
	if err := ctx.Err(); err != nil {
		return err
	}
	env := append(os.Environ(), action.EnvFullRanFrom+"="+self, action.EnvFullBuild+"="+action.Build())
	code, err := execFull(s, p, args, env)
	switch {
	case err != nil:
		return fmt.Errorf("%s needs %s: run %s: %w", what, action.FullProgram, p, err)
	case code != 0:
		return &childExit{code}
	}
	return nil
}

// childExit is the exit code of opm-full run as a child, which reported
// its errors itself.
type childExit struct{ code int }

func (e *childExit) Error() string { return fmt.Sprintf("opm-full exited with %d", e.code) }

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
	return 0, err
}

// leanRanAsFull returns, in a lean opm that another lean opm ran as
// opm-full (a wrong $OPM_FULL), the command of args and an error that says
// so, whatever the command: it must not run itself again. Else nil, nil.
func leanRanAsFull(args []string) (*cobra.Command, error) {
	from := os.Getenv(action.EnvFullRanFrom)
	if !action.Lean || from == "" {
		return nil, nil
	}
	self, _ := os.Executable()
	root := silentTree()
	cmd, _, err := root.Find(args)
	if err != nil {
		cmd = root
	}
	return cmd, &commandError{fmt.Errorf("%s ran %s as %s, but it is a lean opm too: point %s at an opm built without the opm_lean tag (make build builds bin/%s)",
		from, self, action.FullProgram, action.EnvFull, action.FullProgram)}
}

// fullStarts, in opm-full, takes what the lean opm that ran it set in its
// environment out of it, so that nothing opm-full runs inherits it, and
// warns on s.Err when that lean opm is another build: the two are made to
// be one program.
func fullStarts(s Streams) {
	if action.Lean {
		return
	}
	build, set := os.LookupEnv(action.EnvFullBuild)
	os.Unsetenv(action.EnvFullRanFrom)
	os.Unsetenv(action.EnvFullBuild)
	if set && build != action.Build() {
		fmt.Fprintf(s.Err, "warning: %s is build %q, the opm that ran it %q: install both from one build\n", action.FullProgram, action.Build(), build)
	}
}

// silentTree is opm's command tree with nothing to read and nowhere to
// write, flag warnings included: to look a command line up in.
func silentTree() *cobra.Command {
	root := New(Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	flagWarningsTo(root, io.Discard)
	return root
}
