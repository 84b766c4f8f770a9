//go:build !opm_lean

package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/updates"
)

// newDiffCmd is `opm alpha diff`.
func newDiffCmd(s Streams, g *globalOptions) *cobra.Command {
	var (
		check    bool
		output   string
		cacheDir string
		timeout  time.Duration
		terms    int
	)
	cmd := &cobra.Command{
		Use:   diffCommand.use,
		Short: diffCommand.short,
		Long: `Show, per package, what changed from the catalog OLD to the catalog NEW
(directories or catalog images): packages, channels, default channels,
channel heads, bundles, upgrade edges, bundle images and deprecations,
and what each bundle both hold carries: its properties (each value added,
removed or changed: olm.gvk.required, olm.package.required, ...), the
objects of its olm.bundle.object properties (by kind and name: a CRD
changed) and its related images.

With --check, also apply OLM's update rules to the change, and exit 1 when
one is broken:
  - stranded: every bundle of a channel of OLD, which clusters may run, must
    still have an update path to the head of that channel in NEW (OLM v0's
    resolver rules, as in "opm alpha query updates");
  - head-downgrade: a channel head must not move to a lower version;
  - channel-removed, package-removed: subscriptions to them get no updates;
  - skipped-only-way: an entry of NEW whose every update is a bundle that
    another entry skips, or that has the olm.deprecated property (OLM
    installs neither), is stuck;
  - no-single-chain, no-installable-entry: a channel of NEW that OLM cannot
    order, or whose every entry has the olm.deprecated property;
  - default-channel (a warning, not a failure): the default channel
    changes;
  - crd-upgrade: on an update OLM v0 takes in NEW that OLD did not take
    (between the same two bundles, with the same images), a CRD change OLM
    v1's CRD upgrade-safety preflight or OLM v0 refuses (a scope change, a
    stored version removed, a field removed or newly required, an enum
    narrowed, a default changed, ...); a warning for a change neither OLM
    refuses (a served version removed). Only bundles whose catalog entries
    carry their objects (olm.bundle.object) can be compared;
  - uninstallable: a new Subscription to a channel, or starting at one of
    its bundles, that OLM v0's resolver installs from OLD (the catalog its
    only CatalogSource) and cannot install from NEW, a dependency's
    provider gone, say (as in "opm alpha query install"); one that could
    not be installed from OLD either is not reported.
The violations come first, then the warnings, then "N violations, M
warnings". Bundles that were already stranded in OLD are warnings; for a
package the change does not touch, they fold into one line, and so do the
uninstallable subscriptions of a channel (-o json lists each).

Exit codes: 0 when the check passes (or without --check), 1 when it finds a
violation, 2 when a catalog cannot be read or is invalid, or the command
line is wrong, or the report cannot be written, or (and nothing failed) a
question of the uninstallable rule was undecided within --timeout.`,
		Example: `  opm alpha diff ./catalog-v1 ./catalog-v2
  opm alpha diff quay.io/example/catalog:v1 ./catalog --check -o markdown > comment.md`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			s, done := answerOut(s, 2)
			defer done(&err)
			if output != "text" && output != "json" && output != "markdown" {
				return &ExitError{Code: 2, Err: fmt.Errorf("invalid --output value %q, expected (text|json|markdown)", output)}
			}
			res := &action.Resolver{ImageOptions: g.imageOptions(cacheDir), MaxFileSize: g.maxFileSize.limit(),
				Allowed: action.RefCatalogDir | action.RefCatalogImage}
			r, err := action.DiffCatalogs{Sources: res, Old: args[0], New: args[1], MaxFileSize: g.maxFileSize.limit(), Check: check, Budget: timeout, MaxTerms: maxTerms(terms)}.Run(cmd.Context())
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			rep := diffReport{Old: args[0], New: args[1], Changes: r.Changes, Violations: r.Violations}
			if rep.Changes == nil {
				rep.Changes = []updates.Change{}
			}
			switch output {
			case "json":
				err = encodeAnswer(s.Out, rep)
			case "markdown":
				err = rep.writeMarkdown(s.Out, check)
			default:
				err = rep.writeText(s.Out, check)
			}
			if err != nil {
				return err
			}
			if rep.failed() {
				return &ExitError{Code: 1}
			}
			return undecidedExit(rep.undecided(), timeout)
		},
	}
	cmd.Flags().BoolVar(&check, "check", false, "apply the update rules and exit 1 when one is broken")
	addTimeoutFlag(cmd, &timeout, &terms)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "Output format (text|json|markdown)")
	addImageCacheFlag(cmd, &cacheDir)
	return questionCommand(cmd)
}

type diffReport struct {
	Old        string              `json:"old"`
	New        string              `json:"new"`
	Changes    []updates.Change    `json:"changes"`
	Violations []updates.Violation `json:"violations,omitempty"`
}

func (r *diffReport) failed() bool {
	for _, v := range r.Violations {
		if !v.Warning {
			return true
		}
	}
	return false
}

// undecided counts the questions the check could not decide.
func (r *diffReport) undecided() int {
	n := 0
	for _, v := range r.Violations {
		if v.Undecided {
			n++
		}
	}
	return n
}

// describe says a change in words.
func describe(c updates.Change) string {
	switch c.Kind {
	case "package-added":
		return fmt.Sprintf("package added (default channel %s)", c.New)
	case "package-removed":
		return "package removed"
	case "default-channel":
		return fmt.Sprintf("default channel %s → %s", c.Old, c.New)
	case "channel-added":
		return fmt.Sprintf("channel %s added (head %s)", c.Channel, c.New)
	case "channel-removed":
		return fmt.Sprintf("channel %s removed (its head was %s)", c.Channel, c.Old)
	case "head":
		return fmt.Sprintf("channel %s: head %s → %s", c.Channel, c.Old, c.New)
	case "bundle-added":
		return fmt.Sprintf("channel %s: %s added (%s)", c.Channel, c.Bundle, c.New)
	case "bundle-removed":
		return fmt.Sprintf("channel %s: %s removed (%s)", c.Channel, c.Bundle, c.Old)
	case "edges":
		return fmt.Sprintf("channel %s: %s edges %q → %q", c.Channel, c.Bundle, c.Old, c.New)
	case "image":
		return fmt.Sprintf("channel %s: %s image %s → %s", c.Channel, c.Bundle, c.Old, c.New)
	case "olm-deprecated-added":
		return fmt.Sprintf("channel %s: %s gets the olm.deprecated property (OLM no longer installs it)", c.Channel, c.Bundle)
	case "olm-deprecated-removed":
		return fmt.Sprintf("channel %s: %s loses the olm.deprecated property", c.Channel, c.Bundle)
	case updates.PropertyAdded:
		return fmt.Sprintf("bundle %s: property %s added%s", c.Bundle, c.Property, value(": ", c.New))
	case updates.PropertyRemoved:
		return fmt.Sprintf("bundle %s: property %s removed%s", c.Bundle, c.Property, value(": ", c.Old))
	case updates.PropertyChanged:
		if c.Old == "" || c.New == "" {
			return fmt.Sprintf("bundle %s: property %s changed", c.Bundle, c.Property)
		}
		return fmt.Sprintf("bundle %s: property %s %s → %s", c.Bundle, c.Property, c.Old, c.New)
	case updates.ObjectAdded:
		return fmt.Sprintf("bundle %s: object %s added", c.Bundle, c.Object)
	case updates.ObjectRemoved:
		return fmt.Sprintf("bundle %s: object %s removed", c.Bundle, c.Object)
	case updates.ObjectChanged:
		return fmt.Sprintf("bundle %s: object %s changed", c.Bundle, c.Object)
	case updates.RelatedImageAdded:
		return fmt.Sprintf("bundle %s: related image %s added", c.Bundle, c.New)
	case updates.RelatedImageRemoved:
		return fmt.Sprintf("bundle %s: related image %s removed", c.Bundle, c.Old)
	}
	where := "package"
	switch {
	case c.Bundle != "":
		where = "bundle " + c.Bundle
	case c.Channel != "":
		where = "channel " + c.Channel
	}
	switch c.Kind {
	case "deprecation-added":
		return fmt.Sprintf("%s deprecated: %s", where, c.New)
	case "deprecation-removed":
		return fmt.Sprintf("%s no longer deprecated", where)
	}
	return fmt.Sprintf("%s deprecation message changed: %s", where, c.New)
}

// value is sep and a property's value, or "" when the change does not
// carry it (longer than updates.MaxShownValue).
func value(sep, v string) string {
	if v == "" {
		return ""
	}
	return sep + v
}

func (r *diffReport) writeText(w io.Writer, check bool) error {
	var b strings.Builder
	if len(r.Changes) == 0 {
		b.WriteString("no changes\n")
	}
	last := ""
	for _, c := range r.Changes {
		if c.Package != last {
			fmt.Fprintf(&b, "package %s\n", c.Package)
			last = c.Package
		}
		fmt.Fprintf(&b, "  %s\n", describe(c))
	}
	if check {
		for _, l := range r.checkLines() {
			fmt.Fprintf(&b, "%s [%s] %s: %s\n", l.kind(), l.Rule, location(l.Violation), l.Message)
		}
		b.WriteString(r.verdict() + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// checkLine is a line of the check's report: a violation or warning, or
// several warnings folded into one.
type checkLine struct {
	updates.Violation
}

func (l checkLine) kind() string {
	if l.Warning {
		return "warning"
	}
	return "violation"
}

// foldShown is how many bundles a folded line names.
const foldShown = 3

// checkLines orders the check's findings for people: the violations (a
// channel's uninstallable subscriptions on one line), then the warnings,
// then, one line per package, the bundles already stranded in OLD of the
// packages the change does not touch.
func (r *diffReport) checkLines() []checkLine {
	touched := map[string]bool{}
	for _, c := range r.Changes {
		touched[c.Package] = true
	}
	var fails, warns []checkLine
	folded := map[string][]updates.Violation{}
	var foldOrder []string
	// A channel's uninstallable subscriptions: the line of the first, at
	// its place, says how many more.
	type channelKey struct{ pkg, ch string }
	uninstallable := map[channelKey][]updates.Violation{}
	first := map[channelKey]int{}
	for _, v := range r.Violations {
		switch {
		case !v.Warning && v.Rule == "uninstallable":
			k := channelKey{v.Package, v.Channel}
			if _, ok := first[k]; !ok {
				first[k] = len(fails)
				fails = append(fails, checkLine{v})
			}
			uninstallable[k] = append(uninstallable[k], v)
		case !v.Warning:
			fails = append(fails, checkLine{v})
		case v.Already && !touched[v.Package]:
			if folded[v.Package] == nil {
				foldOrder = append(foldOrder, v.Package)
			}
			folded[v.Package] = append(folded[v.Package], v)
		default:
			warns = append(warns, checkLine{v})
		}
	}
	for k, i := range first {
		vs := uninstallable[k]
		if len(vs) == 1 {
			continue
		}
		if len(vs) == 2 {
			fails[i].Message += fmt.Sprintf("; nor does one starting at %s (-o json gives its reason)", vs[1].Bundle)
			continue
		}
		var names []string
		for _, v := range vs[1:min(len(vs), foldShown+1)] {
			names = append(names, v.Bundle)
		}
		if len(vs)-1 > foldShown {
			names = append(names, fmt.Sprintf("and %d more", len(vs)-1-foldShown))
		}
		// The first line is the channel's own Subscription (no starting
		// bundle) or one starting at a bundle: only then are the others
		// "more" of its bundles.
		more := ""
		if vs[0].Bundle != "" {
			more = " more"
		}
		fails[i].Message += fmt.Sprintf("; nor do those starting at %d%s of its bundles (%s; -o json gives each one's reason)",
			len(vs)-1, more, strings.Join(names, ", "))
	}
	for _, pkg := range foldOrder {
		vs := folded[pkg]
		if len(vs) == 1 {
			warns = append(warns, checkLine{vs[0]})
			continue
		}
		var names []string
		for _, v := range vs[:min(len(vs), foldShown)] {
			names = append(names, v.Channel+"/"+v.Bundle)
		}
		if len(vs) > foldShown {
			names = append(names, fmt.Sprintf("and %d more", len(vs)-foldShown))
		}
		warns = append(warns, checkLine{updates.Violation{Package: pkg, Rule: "stranded", Warning: true, Already: true,
			Message: fmt.Sprintf("%d bundles could not reach their channel head in the old catalog either, and the change does not touch the package (%s; -o json lists them)", len(vs), strings.Join(names, ", "))}})
	}
	return append(fails, warns...)
}

// verdict is the check's last line: "check passed: 0 violations, 2
// warnings".
func (r *diffReport) verdict() string {
	n := 0
	for _, v := range r.Violations {
		if !v.Warning {
			n++
		}
	}
	word := "passed"
	switch {
	case n > 0:
		word = "failed"
	case r.undecided() > 0:
		word = "undecided"
	}
	return fmt.Sprintf("check %s: %d %s, %d %s", word, n, plural(n, "violation", "violations"), len(r.Violations)-n, plural(len(r.Violations)-n, "warning", "warnings"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func location(v updates.Violation) string {
	s := v.Package
	if v.Channel != "" {
		s += "/" + v.Channel
	}
	if v.Bundle != "" {
		s += "/" + v.Bundle
	}
	return s
}

// mdCell escapes a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}

func (r *diffReport) writeMarkdown(w io.Writer, check bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### Catalog changes: `%s` → `%s`\n\n", mdCell(r.Old), mdCell(r.New))
	if len(r.Changes) == 0 {
		b.WriteString("No changes.\n")
	} else {
		b.WriteString("| package | change |\n|---|---|\n")
		for _, c := range r.Changes {
			fmt.Fprintf(&b, "| %s | %s |\n", mdCell(c.Package), mdCell(describe(c)))
		}
	}
	if check {
		if lines := r.checkLines(); len(lines) > 0 {
			b.WriteString("\n| | rule | where | what |\n|---|---|---|---|\n")
			for _, l := range lines {
				mark := "❌"
				if l.Warning {
					mark = "⚠️"
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mark, l.Rule, mdCell(location(l.Violation)), mdCell(l.Message))
			}
		}
		fmt.Fprintf(&b, "\n**%s**\n", r.verdict())
	}
	_, err := io.WriteString(w, b.String())
	return err
}
