package updates

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/fastopm/fastopm/alpha/crdsafety"
	"github.com/fastopm/fastopm/alpha/model"
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
	// CRDs, when set, compares the CRDs of the two bundles of each step
	// (alpha/crdsafety): a step OLM refuses.
	CRDs func(pkg, from, to string) crdsafety.Result
}

// Answer is the answer for one installed bundle.
type Answer struct {
	Package        string       `json:"package"`
	Channel        string       `json:"channel"`
	DefaultChannel bool         `json:"defaultChannel"`
	Head           *BundleRef   `json:"head"`
	Installed      InstalledRef `json:"installed"`
	Next           *StepRef     `json:"next"`
	Path           []StepRef    `json:"path"`
	ReachesHead    bool         `json:"reachesHead"`
	Problem        string       `json:"problem,omitempty"`

	installed Installed
}

// BundleRef names a bundle of the catalog.
type BundleRef struct {
	Name       string `json:"name"`
	Version    string `json:"version,omitempty"`
	Image      string `json:"image,omitempty"`
	Deprecated string `json:"deprecated,omitempty"`
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
	r := BundleRef{Name: b.Name, Image: b.Image}
	if b.HasBlob {
		r.Version = b.Version.String()
	}
	if b.Deprecation != nil {
		r.Deprecated = b.Deprecation.Message
	}
	return r
}

// channel finds the package and channel asked for.
func (q Query) channel() (*model.Package, *model.Channel, error) {
	pkg, ok := q.Model[q.Package]
	if !ok {
		return nil, nil, fmt.Errorf("package %q not found in the catalog", q.Package)
	}
	if q.Channel == "" {
		if pkg.DefaultChannel == nil {
			return nil, nil, fmt.Errorf("package %q has no default channel: name one with --channel", q.Package)
		}
		return pkg, pkg.DefaultChannel, nil
	}
	ch, ok := pkg.Channels[q.Channel]
	if !ok {
		names := make([]string, 0, len(pkg.Channels))
		for n := range pkg.Channels {
			names = append(names, n)
		}
		slices.Sort(names)
		return nil, nil, fmt.Errorf("channel %q not found in package %q (its channels: %s)", q.Channel, q.Package, strings.Join(names, ", "))
	}
	return pkg, ch, nil
}

// Run answers for q.From.
func (q Query) Run() (*Answer, error) {
	pkg, ch, err := q.channel()
	if err != nil {
		return nil, err
	}
	g, err := NewGraph(ch)
	if err != nil {
		return nil, err
	}
	in, err := ResolveFrom(pkg, ch, q.From)
	if err != nil {
		return nil, err
	}
	return answer(g, in, q.CRDs)
}

// RunAll answers for every bundle of the channel, head first in OLM's
// order, then the bundles OLM never installs (skipped ones).
func (q Query) RunAll() ([]*Answer, error) {
	_, ch, err := q.channel()
	if err != nil {
		return nil, err
	}
	g, err := NewGraph(ch)
	if err != nil {
		return nil, err
	}
	bundles := slices.Clone(g.Order)
	var rest []*model.Bundle
	for _, b := range ch.Bundles {
		if !slices.Contains(bundles, b) {
			rest = append(rest, b)
		}
	}
	slices.SortFunc(rest, func(a, b *model.Bundle) int {
		if c := a.Version.Compare(b.Version); c != 0 {
			return -c
		}
		return strings.Compare(a.Name, b.Name)
	})
	var out []*Answer
	for _, b := range append(bundles, rest...) {
		a, err := answer(g, InstalledBundle(b), q.CRDs)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func answer(g *Graph, in Installed, crds func(pkg, from, to string) crdsafety.Result) (*Answer, error) {
	ch := g.Channel
	head := bundleRef(g.Head())
	a := &Answer{
		Package: ch.Package.Name, Channel: ch.Name, DefaultChannel: ch.Package.DefaultChannel == ch,
		Head: &head, Installed: InstalledRef{Name: in.Name}, Path: []StepRef{},
		installed: in,
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
	steps, err := g.Path(in)
	for _, st := range steps {
		sr := StepRef{From: st.From.String(), To: bundleRef(st.To)}
		for _, e := range st.Edges {
			sr.Edges = append(sr.Edges, string(e))
		}
		for _, o := range st.Others {
			sr.Others = append(sr.Others, bundleRef(o))
		}
		if crds != nil {
			r := crds(ch.Package.Name, st.From.Name, st.To.Name)
			sr.CRDs = &r
		}
		a.Path = append(a.Path, sr)
	}
	if len(a.Path) > 0 {
		a.Next = &a.Path[0]
	}
	switch {
	case errors.Is(err, ErrLoop):
		a.Problem = err.Error()
	case err != nil:
		return nil, err
	case in.Name == head.Name:
		a.ReachesHead = true
	case len(steps) > 0 && steps[len(steps)-1].To == g.Head():
		a.ReachesHead = true
	case len(steps) == 0:
		a.Problem = fmt.Sprintf("nothing in channel %q replaces or skips %s, and no skipRange covers it: it cannot be updated", ch.Name, describeInstalled(in))
	default:
		last := steps[len(steps)-1].To
		a.Problem = fmt.Sprintf("the path stops at %s, which nothing in channel %q replaces, skips or covers: it never reaches the head %s", last.Name, ch.Name, head.Name)
	}
	return a, nil
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
	fmt.Fprintf(&b, "package %s, channel %s%s; head %s\n", a.Package, a.Channel, def, describeBundle(*a.Head))
	where := ""
	if !a.Installed.InCatalog {
		where = " (not in the catalog)"
	}
	fmt.Fprintf(&b, "installed: %s%s\n", describeInstalled(a.installed), where)
	switch {
	case a.Installed.Name == a.Head.Name:
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
	writeCRDs(&b, a.Path, true)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCRDs lists the steps whose CRDs change incompatibly, each change on
// a line, and with unknown, how many steps' CRDs could not be compared.
func writeCRDs(b *strings.Builder, path []StepRef, unknown bool) {
	var lines []string
	n := 0
	for _, st := range path {
		switch {
		case st.CRDs == nil:
		case st.CRDs.Unknown != "":
			n++
		case len(st.CRDs.Changes) > 0:
			lines = append(lines, fmt.Sprintf("  %s -> %s: %s", st.From, st.To.Name, st.CRDs.Summary()))
			for _, c := range st.CRDs.Changes {
				lines = append(lines, "    "+c.String())
			}
		}
	}
	if unknown && n > 0 {
		lines = append(lines, fmt.Sprintf("  %d step(s) not compared: a bundle carries no objects (olm.bundle.object) or is not in the catalog", n))
	}
	if len(lines) > 0 {
		b.WriteString("crds:\n")
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
	return s
}

// WriteTable writes --all's table: each bundle, its next update,
// how many steps to the head, and whether it gets there.
func WriteTable(w io.Writer, as []*Answer) error {
	if len(as) == 0 {
		return nil
	}
	a0 := as[0]
	if _, err := fmt.Fprintf(w, "package %s, channel %s; head %s\n", a0.Package, a0.Channel, describeBundle(*a0.Head)); err != nil {
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
		case a.Installed.Name == a.Head.Name:
			reach = "head"
		case !a.ReachesHead:
			reach = "NO"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", a.Installed.Name, a.Installed.Version, next, by, len(a.Path), reach)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The next steps whose CRDs change incompatibly.
	var b strings.Builder
	for _, a := range as {
		if a.Next != nil {
			writeCRDs(&b, []StepRef{*a.Next}, false)
		}
	}
	s := strings.ReplaceAll(b.String(), "crds:\n", "")
	if s != "" {
		s = "crds:\n" + s
	}
	_, err := io.WriteString(w, s)
	return err
}
