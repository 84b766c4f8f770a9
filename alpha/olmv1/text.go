package olmv1

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
)

// Question is the ClusterExtension in words.
func (a *Answer) Question() string {
	s := a.Spec
	var b strings.Builder
	fmt.Fprintf(&b, "a ClusterExtension for package %s", s.Package)
	if len(s.Channels) > 0 {
		fmt.Fprintf(&b, ", channels %s", strings.Join(s.Channels, ", "))
	}
	if s.Version != "" {
		fmt.Fprintf(&b, ", version %q", s.Version)
	}
	if s.UpgradeConstraintPolicy == SelfCertified {
		b.WriteString(", policy SelfCertified")
	}
	if s.Selector != "" {
		fmt.Fprintf(&b, ", catalogs %q", s.Selector)
	}
	if in := a.Installed; in != nil {
		fmt.Fprintf(&b, ", installed %s (%s)", in.Name, in.Version)
	}
	return b.String()
}

// WriteText writes the answer for people: the bundle or the error, why,
// what each catalog offered, and whether the bundle installs.
func (a *Answer) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "OLM v1: %s\n", a.Question())
	if r := a.Bundle; r != nil {
		verb := "resolves to"
		if !a.Resolved {
			verb = "picks"
		}
		fmt.Fprintf(&b, "%s: %s (%s), catalog %s, channels %s\n", verb, r.Name, orDash(r.Version), r.Catalog, strings.Join(r.Channels, ", "))
		if a.Installed != nil && r.Name == a.Installed.Name {
			b.WriteString("  (no upgrade: it is the installed bundle)\n")
		}
		for _, by := range r.By {
			fmt.Fprintf(&b, "  by: %s\n", by)
		}
		for _, d := range r.Deprecations {
			fmt.Fprintf(&b, "  deprecated: %s\n", d)
		}
	}
	if a.Error != "" {
		fmt.Fprintf(&b, "does not resolve: %s\n", a.Error)
	}
	if len(a.Catalogs) > 0 {
		b.WriteString("catalogs:\n")
		for _, c := range a.Catalogs {
			fmt.Fprintf(&b, "  %s (priority %d): %s\n", c.Catalog, c.Priority, c.summary())
		}
	}
	if in := a.Installable; in != nil {
		in.writeText(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (c CatalogStat) summary() string {
	switch {
	case !c.Selected:
		return "not selected"
	case !c.PackageFound:
		return "no such package"
	case c.Best == nil:
		return fmt.Sprintf("none of its %d bundles matches", c.TotalBundles)
	}
	s := fmt.Sprintf("%d of %d bundles match; best %s (%s)", c.MatchedBundles, c.TotalBundles, c.Best.Name, c.Best.Version)
	if c.Best.Deprecated {
		s += " [deprecated]"
	}
	if c.Outcome != "" {
		s += ": " + c.Outcome
	}
	return s
}

func (in *Installability) writeText(b *strings.Builder) {
	switch in.Status {
	case Installable:
		fmt.Fprintf(b, "OLM v1 can install %s (checked: %s)\n", in.Bundle, in.Checked)
	case NotInstallable:
		fmt.Fprintf(b, "OLM v1 cannot install %s (checked: %s):\n", in.Bundle, in.Checked)
	default:
		fmt.Fprintf(b, "OLM v1 may or may not install %s (checked: %s)\n", in.Bundle, in.Checked)
	}
	for _, r := range in.Reasons {
		fmt.Fprintf(b, "  - %s\n", r)
	}
	for _, n := range in.Notes {
		fmt.Fprintf(b, "  note: %s\n", n)
	}
}

// WriteText writes the installability of one bundle.
func (in *Installability) WriteText(w io.Writer) error {
	var b strings.Builder
	in.writeText(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteTable writes the report: one line per package and channel, the
// bundle OLM v1 resolves to and whether it installs, every reason why not
// (the first on the row, the others on lines of their own below it), and a
// summary of the reasons.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tCHANNEL\tBUNDLE\tSTATUS\tWHY NOT")
	for _, row := range r.Rows {
		bundle := "-"
		if row.Bundle != "" {
			bundle = row.Bundle
		}
		whyNot := row.WhyNot()
		why := ""
		if len(whyNot) > 0 {
			why = whyNot[0]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", row.Package, row.Channel, bundle, row.Status, why)
		// Every further reason on a line of its own, under the first.
		for _, more := range whyNot[min(1, len(whyNot)):] {
			fmt.Fprintf(tw, "\t\t\t\t%s\n", more)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	c := r.Counts()
	channels := "channels"
	if len(r.Rows) == 1 {
		channels = "channel"
	}
	fmt.Fprintf(w, "\n%d %s: %d installable, %d not installable, %d unknown (no bundle objects), %d do not resolve\n",
		len(r.Rows), channels, c[string(Installable)], c[string(NotInstallable)], c[string(Unknown)], c[StatusNoResolution])
	if rs := r.ReasonCounts(); len(rs) > 0 {
		fmt.Fprintln(w, "\nreasons (channels):")
		for _, rc := range rs {
			fmt.Fprintf(w, "  %4d  %s\n", rc.Count, rc.Reason)
		}
	}
	return nil
}

// WhyNot is what a table's WHY NOT column says for the row: its reasons;
// for a row whose installability is unknown, which has none, why it is
// unknown (WhyUnknown).
func (r *Row) WhyNot() []string {
	if len(r.Reasons) > 0 || r.Status != string(Unknown) {
		return r.Reasons
	}
	return []string{WhyUnknown(r.Checked, r.Notes)}
}

// WhyUnknown says why a bundle's installability is unknown, from its
// Installability's Checked and Notes: its image could not be read
// (--pull-bundles), or the catalog carries no bundle objects and its
// image was not pulled.
func WhyUnknown(checked string, notes []string) string {
	for _, n := range notes {
		if strings.HasPrefix(n, "the bundle image ") {
			return n
		}
	}
	if checked == "" {
		checked = "properties only"
	}
	return fmt.Sprintf("the catalog carries no bundle objects (checked: %s); --pull-bundles pulls the bundle image to check it", checked)
}

// ReasonCount is how many rows give a kind of reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

var quoted = regexp.MustCompile(`"[^"]*"|'[^']*'|\[[^\]]*\]`)

// ReasonCounts groups the rows' reasons by kind (names left out), most
// frequent first.
func (r *Report) ReasonCounts() []ReasonCount {
	counts := map[string]int{}
	for _, row := range r.Rows {
		seen := map[string]bool{}
		for _, why := range row.Reasons {
			k := quoted.ReplaceAllString(why, "…")
			if !seen[k] {
				seen[k] = true
				counts[k]++
			}
		}
	}
	out := make([]ReasonCount, 0, len(counts))
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		out = append(out, ReasonCount{Reason: k, Count: counts[k]})
	}
	slices.SortStableFunc(out, func(a, b ReasonCount) int { return b.Count - a.Count })
	return out
}
