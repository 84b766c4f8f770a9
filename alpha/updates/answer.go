package updates

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/blang/semver/v4"

	"github.com/fastopm/fastopm/alpha/crdsafety"
	"github.com/fastopm/fastopm/alpha/model"
	"github.com/fastopm/fastopm/pkg/suggest"
)

// Query asks where OLM v0 moves an installed bundle of a channel, and the
// path from there to the channel head: `opm alpha query updates`, and the
// HTTP side's /api/v1/updates.
type Query struct {
	Model   model.Model
	Package string
	// Channel defaults to the package's default channel.
	Channel string
	// From names the installed bundle: a bundle name or a version.
	From string
	// Version, when not "", is the installed version of a From the
	// package does not hold (a virtual node), in place of the one read
	// from its name; for a bundle it holds, it must be that bundle's.
	Version string
	// CRDs, when set, compares the CRDs of the two bundles of each step
	// (alpha/crdsafety): a step OLM refuses. Run sets each step's CRDs,
	// RunAll each summary's next step's.
	CRDs func(pkg, from, to string) crdsafety.Result
}

// Summary is where OLM takes one installed bundle: its next step, the
// number of steps of its path, and whether the path reaches the head.
// RunAll answers with one for each bundle of a channel.
type Summary struct {
	Package        string `json:"package"`
	Channel        string `json:"channel"`
	DefaultChannel bool   `json:"defaultChannel"`
	// Head is the bundle OLM installs for a new subscription, where every
	// path should end (Graph.InstallHead); ChainHead is the first entry of
	// the channel when it differs (it has the olm.deprecated property).
	Head      *BundleRef   `json:"head"`
	ChainHead *BundleRef   `json:"chainHead,omitempty"`
	Installed InstalledRef `json:"installed"`
	// Next is the first step; RunAll leaves out its other candidates.
	Next        *StepRef `json:"next"`
	Steps       int      `json:"steps"`
	ReachesHead bool     `json:"reachesHead"`
	Problem     string   `json:"problem,omitempty"`

	installed Installed
	// didYouMean is a bundle of the package whose name is near that of an
	// installed bundle the catalog does not hold.
	didYouMean string
	// above: the installed bundle is above the head (Graph.Above).
	above bool
}

// Answer is the answer for one installed bundle: its summary and every
// step of its path. (A path is its first step followed by the path of the
// bundle it moves to, so RunAll gives summaries: the paths of a
// 10,000-bundle replaces chain would be 50 million steps.)
type Answer struct {
	Summary
	Path []StepRef `json:"path"`
}

// BundleRef names a bundle of the catalog.
type BundleRef struct {
	Name       string `json:"name"`
	Version    string `json:"version,omitempty"`
	Image      string `json:"image,omitempty"`
	Deprecated string `json:"deprecated,omitempty"`
	// OLMDeprecated: the bundle has the olm.deprecated property, and OLM
	// never installs it.
	OLMDeprecated bool `json:"olmDeprecated,omitempty"`
}

// InstalledRef is the installed bundle; InCatalog is false for a virtual
// node.
type InstalledRef struct {
	Name      string `json:"name,omitempty"`
	Version   string `json:"version,omitempty"`
	InCatalog bool   `json:"inCatalog"`
}

// StepRef is one update and the edges of the target's entry that allow it.
type StepRef struct {
	From   string      `json:"from"`
	To     BundleRef   `json:"to"`
	Edges  []string    `json:"edges"`
	Others []BundleRef `json:"otherCandidates,omitempty"`
	// CRDs are the incompatible changes of the step's CRDs, when the
	// query compares them (Query.CRDs).
	CRDs *crdsafety.Result `json:"crds,omitempty"`
}

func bundleRef(b *model.Bundle) BundleRef {
	r := BundleRef{Name: b.Name, Image: b.Image, OLMDeprecated: b.LegacyDeprecated}
	if b.HasBlob {
		r.Version = b.Version.String()
	}
	if b.Deprecation != nil {
		r.Deprecated = b.Deprecation.Message
	}
	return r
}

// stepRef describes st, with the comparison of its bundles' CRDs when
// crds is set.
func stepRef(st Step, crds func(pkg, from, to string) crdsafety.Result) StepRef {
	sr := StepRef{From: st.From.String(), To: bundleRef(st.To)}
	for _, e := range st.Edges {
		sr.Edges = append(sr.Edges, string(e))
	}
	for _, o := range st.Others {
		sr.Others = append(sr.Others, bundleRef(o))
	}
	if crds != nil {
		r := crds(st.To.Package.Name, st.From.Name, st.To.Name)
		sr.CRDs = &r
	}
	return sr
}

// channel finds the package and channel asked for, and orders the
// channel.
func (q Query) channel() (*model.Package, *Graph, error) {
	pkg, ok := q.Model[q.Package]
	if !ok {
		return nil, nil, fmt.Errorf("package %q not found in the catalog%s", q.Package, suggest.Hint(q.Package, slices.Collect(maps.Keys(q.Model))))
	}
	ch := pkg.DefaultChannel
	switch {
	case q.Channel != "":
		if ch, ok = pkg.Channels[q.Channel]; !ok {
			names := slices.Sorted(maps.Keys(pkg.Channels))
			return nil, nil, fmt.Errorf("channel %q not found in package %q (its channels: %s)%s", q.Channel, q.Package, strings.Join(names, ", "), suggest.Hint(q.Channel, names))
		}
	case ch == nil:
		return nil, nil, fmt.Errorf("package %q has no default channel: name one with --channel", q.Package)
	}
	g, err := NewGraph(ch)
	if err != nil {
		return nil, nil, err
	}
	if g.InstallHead() == nil {
		return nil, nil, &NoInstallableError{Package: pkg.Name, Channel: ch.Name}
	}
	return pkg, g, nil
}

// Run answers for q.From.
func (q Query) Run() (*Answer, error) {
	pkg, g, err := q.channel()
	if err != nil {
		return nil, err
	}
	in, err := ResolveFrom(pkg, g.Channel, q.From)
	if err != nil {
		return nil, err
	}
	if q.Version != "" {
		if in, err = withVersion(pkg, in, q.Version); err != nil {
			return nil, err
		}
	}
	a := &Answer{Summary: *newSummary(g, in), Path: []StepRef{}}
	steps, err := g.Path(in)
	if err != nil && !errors.Is(err, ErrLoop) {
		return nil, err
	}
	for _, st := range steps {
		a.Path = append(a.Path, stepRef(st, q.CRDs))
	}
	var end *model.Bundle
	if len(steps) > 0 {
		a.Next = &a.Path[0]
		end = steps[len(steps)-1].To
	}
	a.finish(g, len(steps), end, err)
	if !a.Installed.InCatalog && in.Name != "" {
		var names []string
		for _, c := range pkg.Channels {
			names = slices.AppendSeq(names, maps.Keys(c.Bundles))
		}
		a.didYouMean = suggest.Words(suggest.NearestBundle(in.Name, names))
	}
	return a, nil
}

// withVersion is in with the installed version given: in place of the
// one read from a virtual node's name, an error when the package holds
// the bundle (or from named a version) and its version is another.
func withVersion(pkg *model.Package, in Installed, version string) (Installed, error) {
	v, err := semver.ParseTolerant(version)
	if err != nil {
		return in, fmt.Errorf("installed version %q: %w", version, err)
	}
	held := false
	for _, c := range pkg.Channels {
		if _, ok := c.Bundles[in.Name]; ok {
			held = true
		}
	}
	switch {
	case in.Name == "" && !in.Version.EQ(v):
		return in, fmt.Errorf("installed version %s disagrees with the installed bundle's, %s", version, in.Version)
	case in.Name != "" && !held:
		in.Version = &v
	case in.Version != nil && !in.Version.EQ(v):
		return in, fmt.Errorf("installed version %s disagrees with the catalog: bundle %q has version %s", version, in.Name, in.Version)
	}
	return in, nil
}

// RunAll answers for every bundle of the channel, head first in OLM's
// order, then the bundles OLM never installs (skipped ones). The answers
// give each bundle's next step, without the other candidates, and the
// number of steps of its path, without the path: the time and the output
// grow with the channel, not with the sum of its paths.
func (q Query) RunAll() ([]*Summary, error) {
	_, g, err := q.channel()
	if err != nil {
		return nil, err
	}
	ch := g.Channel
	bundles := slices.Clone(g.Order)
	var rest []*model.Bundle
	for _, b := range ch.Bundles {
		if _, ok := g.ix().pos[b.Name]; !ok {
			rest = append(rest, b)
		}
	}
	slices.SortFunc(rest, func(a, b *model.Bundle) int {
		if c := a.Version.Compare(b.Version); c != 0 {
			return -c
		}
		return strings.Compare(a.Name, b.Name)
	})
	w := NewWalker(g)
	out := make([]*Summary, 0, len(ch.Bundles))
	for _, b := range append(bundles, rest...) {
		in := InstalledBundle(b)
		a := newSummary(g, in)
		o := w.Outcome(in)
		if o.Next != nil {
			sr := stepRef(*o.Next, q.CRDs)
			a.Next = &sr
		}
		a.finish(g, o.Steps, o.End, o.Loop)
		out = append(out, a)
	}
	return out, nil
}

func newSummary(g *Graph, in Installed) *Summary {
	ch := g.Channel
	head := bundleRef(g.InstallHead())
	a := &Summary{
		Package: ch.Package.Name, Channel: ch.Name, DefaultChannel: ch.Package.DefaultChannel == ch,
		Head: &head, Installed: InstalledRef{Name: in.Name},
		installed: in,
	}
	if g.Head() != g.InstallHead() {
		ch := bundleRef(g.Head())
		a.ChainHead = &ch
	}
	if in.Version != nil {
		a.Installed.Version = in.Version.String()
	}
	if in.Name != "" {
		_, a.Installed.InCatalog = ch.Bundles[in.Name]
		if !a.Installed.InCatalog {
			for _, c := range ch.Package.Channels {
				if _, ok := c.Bundles[in.Name]; ok {
					a.Installed.InCatalog = true
				}
			}
		}
	}
	return a
}

// finish sets the verdict: whether the path of steps steps, ending at end
// (nil without steps) or looping, reaches the head, and the problem when
// it does not.
func (a *Summary) finish(g *Graph, steps int, end *model.Bundle, loop error) {
	in, ch, head := a.installed, g.Channel, g.InstallHead()
	a.Steps = steps
	at := end // where OLM leaves the installed bundle
	if at == nil {
		at = ch.Bundles[in.Name]
	}
	switch {
	case loop != nil:
		a.Problem = loop.Error()
	case at == head:
		a.ReachesHead = true
	case steps == 0 && at != nil && g.Above(at):
		a.above = true
		a.Problem = fmt.Sprintf("it is above the head %s: the entries of channel %q nearer its first entry %s have the olm.deprecated property, OLM never installs them, and nothing OLM installs replaces, skips or covers %s", head.Name, ch.Name, g.Head().Name, in.Name)
	case steps == 0 && at == nil && in.Version != nil && head.HasBlob && in.Version.GT(head.Version):
		a.Problem = fmt.Sprintf("version %s is newer than the channel head %s (%s): nothing in channel %q updates it", in.Version, head.Name, head.Version, ch.Name)
	case steps == 0:
		a.Problem = stuck(g, in) + ": it cannot be updated"
	default:
		a.Problem = fmt.Sprintf("the path stops at %s and never reaches the head %s: %s", end.Name, head.Name, stuck(g, InstalledBundle(end)))
	}
}

// stuck says why OLM keeps in where it is: its own entry comes first,
// the entries that would move it have the olm.deprecated property or are
// skipped by another entry, or nothing points at it.
func stuck(g *Graph, in Installed) string {
	if g.Keeps(in) {
		b := g.Order[g.own(in)]
		return fmt.Sprintf("OLM keeps %s where it is, as its own entry is its first candidate: its skipRange %q includes its own version, and no entry nearer the head replaces, skips or covers it", in.Name, b.SkipRange)
	}
	withheld, skipped := bundleNames(g.Withheld(in)), bundleNames(g.Skipped(in))
	all := append(slices.Clone(withheld), skipped...)
	only := func(n int) string {
		return fmt.Sprintf("only %s %s, skip%s or cover%s %s", strings.Join(all, ", "), plural(n, "replaces", "replace"), plural(n, "s", ""), plural(n, "s", ""), describeInstalled(in))
	}
	switch {
	case len(withheld) > 0 && len(skipped) > 0:
		return fmt.Sprintf("%s; %s the olm.deprecated property and %s skipped by another entry: OLM installs neither", only(len(all)),
			strings.Join(withheld, ", ")+plural(len(withheld), " has", " have"), strings.Join(skipped, ", ")+plural(len(skipped), " is", " are"))
	case len(withheld) > 0:
		return fmt.Sprintf("%s, and %s the olm.deprecated property: OLM never installs such a bundle", only(len(all)), plural(len(all), "it has", "they have"))
	case len(skipped) > 0:
		return fmt.Sprintf("%s, and another entry skips %s: OLM never installs a skipped bundle", only(len(all)), plural(len(all), "it", "them"))
	}
	return fmt.Sprintf("nothing in channel %q replaces or skips %s, and no skipRange covers it", g.Channel.Name, describeInstalled(in))
}

func bundleNames(bs []*model.Bundle) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func describeInstalled(in Installed) string {
	if in.Name == "" {
		return in.String()
	}
	if in.Version != nil {
		return fmt.Sprintf("%s (version %s)", in.Name, in.Version)
	}
	return in.Name
}

// WriteText writes the answer for people.
func (a *Answer) WriteText(w io.Writer) error {
	var b strings.Builder
	def := ""
	if a.DefaultChannel {
		def = ", the default channel"
	}
	fmt.Fprintf(&b, "package %s, channel %s%s; %s\n", a.Package, a.Channel, def, a.describeHead())
	where := ""
	switch {
	case !a.Installed.InCatalog && a.didYouMean != "":
		where = fmt.Sprintf(" (not in the catalog; did you mean %s?)", a.didYouMean)
	case !a.Installed.InCatalog:
		where = " (not in the catalog)"
	}
	fmt.Fprintf(&b, "installed: %s%s\n", describeInstalled(a.installed), where)
	switch {
	case a.Installed.Name == a.Head.Name && a.Steps == 0:
		b.WriteString("up to date: it is the channel head\n")
	case a.Next != nil:
		fmt.Fprintf(&b, "next: %s, by %s\n", describeBundle(a.Next.To), strings.Join(a.Next.Edges, ", "))
		if len(a.Next.Others) > 0 {
			var os []string
			for _, o := range a.Next.Others {
				os = append(os, o.Name)
			}
			fmt.Fprintf(&b, "  (also replacing, skipping or covering it, but further from the head: %s)\n", strings.Join(os, ", "))
		}
		b.WriteString("path:\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, st := range a.Path {
			fmt.Fprintf(tw, "  %s\t-> %s\t%s\n", st.From, describeBundle(st.To), strings.Join(st.Edges, ", "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if a.Problem != "" {
		fmt.Fprintf(&b, "problem: %s\n", a.Problem)
	}
	writeCRDs(&b, a.Path, true, true)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCRDs lists the steps whose CRDs change incompatibly, each change on
// a line, and with unknown (a whole path), how many steps' CRDs were
// compared and found compatible, and how many could not be compared: a
// path whose CRDs were checked says so even when nothing is refused. It
// writes the "crds:" heading when header is set and it has a line.
func writeCRDs(b *strings.Builder, path []StepRef, unknown, header bool) {
	var lines []string
	n, clean, changed := 0, 0, 0
	for _, st := range path {
		switch {
		case st.CRDs == nil:
		case st.CRDs.Unknown != "":
			n++
		case len(st.CRDs.Changes) > 0:
			changed++
			lines = append(lines, fmt.Sprintf("  %s -> %s: %s", st.From, st.To.Name, st.CRDs.Summary()))
			for _, c := range st.CRDs.Changes {
				lines = append(lines, "    "+c.String())
			}
		default:
			clean++
		}
	}
	if unknown && clean > 0 {
		steps := "step"
		if clean > 1 {
			steps = "steps"
		}
		switch {
		case clean == len(path):
			lines = append(lines, fmt.Sprintf("  every step compared (%d %s): no incompatible change", clean, steps))
		case changed > 0:
			lines = append(lines, fmt.Sprintf("  %d other %s compared: no incompatible change", clean, steps))
		default:
			lines = append(lines, fmt.Sprintf("  %d %s compared: no incompatible change", clean, steps))
		}
	}
	if unknown && n > 0 {
		lines = append(lines, fmt.Sprintf("  %d step(s) not compared: a bundle carries no objects (olm.bundle.object) or is not in the catalog", n))
	}
	if len(lines) > 0 {
		if header {
			b.WriteString("crds:\n")
		}
		b.WriteString(strings.Join(lines, "\n"))
		b.WriteString("\n")
	}
}

func describeBundle(r BundleRef) string {
	s := r.Name
	if r.Version != "" {
		s += " (" + r.Version + ")"
	}
	if r.Deprecated != "" {
		s += " [deprecated]"
	}
	if r.OLMDeprecated {
		s += " [olm.deprecated]"
	}
	return s
}

// describeHead is "head NAME (VERSION)", and the channel's first entry
// when OLM never installs it.
func (a *Summary) describeHead() string {
	s := "head " + describeBundle(*a.Head)
	if a.ChainHead != nil {
		s += fmt.Sprintf(" (the channel's first entry, %s, has the olm.deprecated property: OLM never installs it)", a.ChainHead.Name)
	}
	return s
}

// WriteTable writes --all's table: each bundle, its next update,
// how many steps to the end of its path, and whether that is the head
// ("head" for the head itself, "above" for an entry above it that OLM
// never installs).
func WriteTable(w io.Writer, as []*Summary) error {
	if len(as) == 0 {
		return nil
	}
	a0 := as[0]
	if _, err := fmt.Fprintf(w, "package %s, channel %s; %s\n", a0.Package, a0.Channel, a0.describeHead()); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BUNDLE\tVERSION\tNEXT\tBY\tSTEPS\tREACHES HEAD")
	for _, a := range as {
		next, by := "-", "-"
		if a.Next != nil {
			next, by = a.Next.To.Name, strings.Join(a.Next.Edges, ",")
		}
		reach := "yes"
		switch {
		case a.above:
			reach = "above"
		case !a.ReachesHead:
			reach = "NO"
		case a.Installed.Name == a.Head.Name:
			reach = "head"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", a.Installed.Name, a.Installed.Version, next, by, a.Steps, reach)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The next steps whose CRDs change incompatibly, below the table.
	var b strings.Builder
	for _, a := range as {
		if a.Next != nil {
			writeCRDs(&b, []StepRef{*a.Next}, false, false)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(w, "crds:\n"+b.String())
	return err
}
