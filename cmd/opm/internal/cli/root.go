// Package cli is opm's command line: one small file per command, each
// parsing flags and calling one action. Commands take their IO from Streams
// and return errors; only Main turns them into exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fastopm/fastopm/pkg/interrupt"
)

// Streams are a command's standard input, output and error.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Terminal says that Err is a terminal a person reads: progress lines
	// and drawn reports go there only then (pkg/progress); scripts and logs
	// get upstream's plain output.
	Terminal bool
}

// ExitError ends the command with Code after its message (if any) has been
// printed.
type ExitError struct {
	Code int
	Err  error // already reported when nil
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// globalOptions are opm's persistent flags.
type globalOptions struct {
	skipTLSVerify bool
	useHTTP       bool
	// maxFileSize limits one catalog file (--max-catalog-file-size).
	maxFileSize byteSize
}

// New builds the opm command tree. As upstream, the alpha command and the
// --alpha-* flags are hidden from help unless HELP_ALPHA=true is set in the
// environment; they work either way.
func New(s Streams) *cobra.Command {
	showAlpha := os.Getenv("HELP_ALPHA") == "true"
	g := globalOptions{maxFileSize: defaultMaxFileSize}
	root := &cobra.Command{
		Use:   "opm",
		Short: "operator package manager",
		Long: `CLI to interact with operator-registry and build indexes of operator content.

To view help related to alpha features, set HELP_ALPHA=true in the environment.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.Err)
	pf := root.PersistentFlags()
	pf.BoolVar(&g.skipTLSVerify, "skip-tls-verify", false, "skip TLS certificate verification for container image registries while pulling bundles")
	pf.BoolVar(&g.useHTTP, "use-http", false, "use plain HTTP for container image registries while pulling bundles")
	pf.Var(&g.maxFileSize, "max-catalog-file-size", "refuse catalog files larger than this (e.g. 1GiB, 500M; 0 for no limit): a file that is not a catalog must not exhaust memory")
	pf.Bool("skip-tls", false, "skip TLS certificate verification for container image registries while pulling bundles or index")
	_ = pf.MarkDeprecated("skip-tls", "use --use-http and --skip-tls-verify instead")
	_ = pf.MarkHidden("skip-tls")
	// Upstream's root takes a hidden --debug, which changes nothing once a
	// command runs; `opm --debug` is accepted as there.
	root.Flags().Bool("debug", false, "enable debug logging")
	_ = root.Flags().MarkHidden("debug")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if pf.Changed("skip-tls") {
			v, _ := pf.GetBool("skip-tls")
			g.useHTTP = v
		}
		if g.skipTLSVerify && g.useHTTP {
			return errors.New("invalid flag combination: --use-http and --skip-tls-verify cannot both be true")
		}
		return nil
	}

	alpha := &cobra.Command{
		Use:    "alpha",
		Short:  "Run an alpha subcommand",
		Args:   cobra.NoArgs,
		Hidden: !showAlpha,
		RunE:   func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	alpha.AddCommand(newAlphaBundleCmd(s, &g), newListCmd(s, &g), newRenderGraphCmd(s, &g))
	alpha.AddCommand(newQueryCmd(s, &g), newDiffCmd(s, &g), newFilterCmd(s, &g))
	alpha.AddCommand(newRenderTemplateCmd(s, &g), newConvertTemplateCmd(s))
	alpha.AddCommand(newHubCmd(s, &g))
	root.AddCommand(
		newRenderCmd(s, &g),
		newValidateCmd(s, &g),
		newServeCmd(s, &g),
		newMigrateCmd(s, &g),
		newGenerateCmd(s, &g),
		newInitCmd(s),
		newVersionCmd(s),
		alpha,
	)
	configureAlphaFlags(root, !showAlpha)
	markCommandErrors(root)
	// cobra adds help and completion when it runs; added now, their
	// flags' warnings go to standard error too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	flagWarningsTo(root, s.Err)
	return root
}

// flagWarningsTo sends the warnings of flag parsing (a deprecated flag
// used) to w, standard error, as upstream's: cobra prints them on the
// command's output, which here is standard output (for help), where they
// would end up in a catalog redirected to a file.
func flagWarningsTo(c *cobra.Command, w io.Writer) {
	c.Flags().SetOutput(w)
	for _, sub := range c.Commands() {
		flagWarningsTo(sub, w)
	}
}

// configureAlphaFlags marks every --alpha-* flag as upstream does: its usage
// starts with a warning, and it is hidden from help unless hide is false.
func configureAlphaFlags(c *cobra.Command, hide bool) {
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if strings.HasPrefix(f.Name, "alpha-") {
			f.Hidden = f.Hidden || hide
			f.Usage = "(ALPHA: This flag will be removed or renamed in a future release, potentially without notice) " + f.Usage
		}
	})
	for _, sub := range c.Commands() {
		configureAlphaFlags(sub, hide)
	}
}

// stdLogError is an error upstream reports with Go's standard logger
// (`2006/01/02 15:04:05 message`) rather than as a logrus fatal line.
type stdLogError struct{ err error }

func (e *stdLogError) Error() string { return e.err.Error() }
func (e *stdLogError) Unwrap() error { return e.err }

// commandError is an error of a command's own code (its run or pre-run
// function). Any other error comes from cobra, checking the command line
// (unknown flags or commands, argument counts, exclusive flags), and is
// reported as cobra reports it for upstream: "Error: ..." and the usage.
type commandError struct{ err error }

func (e *commandError) Error() string { return e.err.Error() }
func (e *commandError) Unwrap() error { return e.err }

// usageReport is a command's error that upstream returns to cobra, which
// prints it with the usage, as it does command-line errors.
type usageReport struct{ err error }

func (e *usageReport) Error() string { return e.err.Error() }
func (e *usageReport) Unwrap() error { return e.err }

// questionKey is the annotation of the commands upstream does not have
// that answer a question (query, diff, filter; set it with
// questionCommand). They follow one exit-code convention
// (docs/exit-codes.md): 0 yes, 1 the answer is no (an *ExitError with
// code 1, the answer written), 2 the question, a flag or the input is
// wrong, or the answer could not be given or written: every error that
// is not an answer, cobra's errors of the command line included, so that
// a script never takes a typo for an answer. Their errors print as
// "Error: message", without the log decoration upstream's commands use.
const questionKey = "fastopm/question"

// questionCommand marks cmd and its subcommands as question commands.
func questionCommand(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[questionKey] = "true"
	for _, sub := range cmd.Commands() {
		questionCommand(sub)
	}
	return cmd
}

// errorExit is the exit code of an error of a question command that is
// not an answer.
const errorExit = 2

// markCommandErrors wraps the errors of every run and pre-run function in
// the tree in a *commandError.
func markCommandErrors(c *cobra.Command) {
	mark := func(f func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
		if f == nil {
			return nil
		}
		return func(cmd *cobra.Command, args []string) error {
			if err := f(cmd, args); err != nil {
				return &commandError{err}
			}
			return nil
		}
	}
	c.RunE = mark(c.RunE)
	c.PersistentPreRunE = mark(c.PersistentPreRunE)
	c.PreRunE = mark(c.PreRunE)
	for _, sub := range c.Commands() {
		markCommandErrors(sub)
	}
}

// Main runs opm with args and returns the process exit code.
func Main(ctx context.Context, s Streams, args []string) int {
	fullStarts(s)
	var (
		cmd *cobra.Command
		err error
	)
	if cmd, err = leanRanAsFull(args); err != nil {
		// Reported below, as cmd's errors.
	} else if cmd = leanRoute(args); cmd != nil {
		err = runFull(ctx, s, args, cmd)
	} else {
		root := New(s)
		root.SetArgs(args)
		cmd, err = root.ExecuteContextC(ctx)
		if errors.Is(err, errRunFull) {
			err = runFull(ctx, s, args, cmd)
		}
	}
	if err == nil {
		return 0
	}
	// opm-full, run as a child, said why itself.
	if ce := (*childExit)(nil); errors.As(err, &ce) {
		return ce.code
	}
	// A command stopped by SIGINT or SIGTERM says so, whatever error its
	// cancelled work returned, and exits as the shell reports a signal.
	if sig := interrupt.Cause(ctx); sig != nil {
		fmt.Fprintf(s.Err, "Error: %v\n", sig)
		return sig.ExitCode()
	}
	var ce *commandError
	var ur *usageReport
	if !errors.As(err, &ce) || errors.As(err, &ur) {
		fmt.Fprintf(s.Err, "Error: %v\n%s\n", err, cmd.UsageString())
		if cmd.Annotations[questionKey] != "" {
			return errorExit
		}
		return 1
	}
	err = ce.err
	if cmd.Annotations[questionKey] != "" {
		var ee *ExitError
		code := errorExit
		if errors.As(err, &ee) {
			code, err = ee.Code, ee.Err
		}
		if err != nil {
			fmt.Fprintf(s.Err, "Error: %v\n", err)
		}
		return code
	}
	var le *stdLogError
	if errors.As(err, &le) {
		fmt.Fprintf(s.Err, "%s %v\n", time.Now().Format("2006/01/02 15:04:05"), le.err)
		return 1
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			logFatal(s.Err, ee.Err)
		}
		return ee.Code
	}
	logFatal(s.Err, err)
	return 1
}

// logFatal prints err the way upstream's logrus does for fatal errors
// (`time="..." level=fatal msg="..."`), so tools that read opm's logs keep
// working.
func logFatal(w io.Writer, err error) {
	logLine(w, "fatal", err.Error())
}

func logLine(w io.Writer, level, msg string) {
	fmt.Fprintf(w, "time=%q level=%s msg=%s\n", time.Now().Format(time.RFC3339), level, logValue(msg))
}

// logValue quotes a value unless it only holds characters logrus leaves
// bare.
func logValue(s string) string {
	if s == "" {
		return `""`
	}
	for _, c := range s {
		if !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			strings.ContainsRune("-._/@^+", c)) {
			return strconv.Quote(s)
		}
	}
	return s
}
