package updates

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fastopm/fastopm/alpha/model"
)

// Change is one difference between two catalogs.
type Change struct {
	Package string `json:"package"`
	Channel string `json:"channel,omitempty"`
	Bundle  string `json:"bundle,omitempty"`
	// Kind is what changed: package-added, package-removed,
	// default-channel, channel-added, channel-removed, head (the bundle a
	// new subscription gets), bundle-added, bundle-removed, edges, image,
	// deprecation-added, deprecation-removed, deprecation-changed,
	// olm-deprecated-added, olm-deprecated-removed (the bundle's
	// olm.deprecated property, which makes OLM never install it); and
	// what a bundle carries (DiffWith, with its Contents; Channel empty):
	// property-added, property-removed, property-changed (Property names
	// the type; Old and New its values, as canonical JSON, when at most
	// MaxShownValue bytes), object-added, object-removed, object-changed
	// (an olm.bundle.object; Object is its kind and name),
	// related-image-added, related-image-removed (Old or New: NAME=IMAGE,
	// or IMAGE).
	Kind     string `json:"kind"`
	Property string `json:"property,omitempty"`
	Object   string `json:"object,omitempty"`
	Old      string `json:"old,omitempty"`
	New      string `json:"new,omitempty"`
}

// Violation is a broken update rule found by Check.
type Violation struct {
	Package string `json:"package"`
	Channel string `json:"channel,omitempty"`
	Bundle  string `json:"bundle,omitempty"`
	// Rule is stranded, head-downgrade, channel-removed, package-removed,
	// skipped-only-way, no-single-chain, no-installable-entry, or
	// default-channel; `opm alpha diff --check` adds crd-upgrade and
	// uninstallable (alpha/action).
	Rule    string `json:"rule"`
	Message string `json:"message"`
	// Warning marks findings that are reported but do not fail the check
	// (a default channel that changes).
	Warning bool `json:"warning,omitempty"`
	// Already marks a stranded bundle that could not reach its head in
	// OLD either: a warning.
	Already bool `json:"alreadyInOld,omitempty"`
	// Undecided marks a question the rule could not decide within its
	// budget (uninstallable): a warning, and the check exits 2 when
	// nothing failed.
	Undecided bool `json:"undecided,omitempty"`
}

// Diff lists what changed from old to new, sorted by package, channel,
// bundle and kind. It does not look into the bundles: DiffWith does.
func Diff(old, new model.Model) []Change { return DiffWith(old, new, nil) }

// DiffWith is Diff, with the changes of what each bundle both catalogs
// hold carries (cd, from CompareContents; nil for none): its properties,
// objects and related images, listed after the package's own changes,
// bundle by bundle, before its channels'.
func DiffWith(old, new model.Model, cd *ContentDiff) []Change {
	var out []Change
	for _, name := range unionKeys(old, new) {
		op, np := old[name], new[name]
		switch {
		case op == nil:
			out = append(out, Change{Package: name, Kind: "package-added", New: defaultName(np)})
			continue
		case np == nil:
			out = append(out, Change{Package: name, Kind: "package-removed", Old: defaultName(op)})
			continue
		}
		if defaultName(op) != defaultName(np) {
			out = append(out, Change{Package: name, Kind: "default-channel", Old: defaultName(op), New: defaultName(np)})
		}
		out = appendDeprecation(out, Change{Package: name}, op.Deprecation, np.Deprecation)
		if cd != nil {
			out = append(out, cd.changes[name]...)
		}
		for _, chName := range unionKeys(op.Channels, np.Channels) {
			oc, nc := op.Channels[chName], np.Channels[chName]
			switch {
			case oc == nil:
				out = append(out, Change{Package: name, Channel: chName, Kind: "channel-added", New: headName(nc)})
				continue
			case nc == nil:
				out = append(out, Change{Package: name, Channel: chName, Kind: "channel-removed", Old: headName(oc)})
				continue
			}
			if oh, nh := headName(oc), headName(nc); oh != nh {
				out = append(out, Change{Package: name, Channel: chName, Kind: "head", Old: oh, New: nh})
			}
			out = appendDeprecation(out, Change{Package: name, Channel: chName}, oc.Deprecation, nc.Deprecation)
			for _, bName := range unionKeys(oc.Bundles, nc.Bundles) {
				ob, nb := oc.Bundles[bName], nc.Bundles[bName]
				at := Change{Package: name, Channel: chName, Bundle: bName}
				switch {
				case ob == nil:
					at.Kind, at.New = "bundle-added", versionOf(nb)
					out = append(out, at)
					continue
				case nb == nil:
					at.Kind, at.Old = "bundle-removed", versionOf(ob)
					out = append(out, at)
					continue
				}
				if !sameEdges(ob, nb) {
					at.Kind, at.Old, at.New = "edges", edgeString(ob), edgeString(nb)
					out = append(out, at)
				}
				if ob.Image != nb.Image {
					at.Kind, at.Old, at.New = "image", ob.Image, nb.Image
					out = append(out, at)
				}
				out = appendDeprecation(out, Change{Package: name, Channel: chName, Bundle: bName}, ob.Deprecation, nb.Deprecation)
				if ob.LegacyDeprecated != nb.LegacyDeprecated {
					at.Kind, at.Old, at.New = "olm-deprecated-added", "", ""
					if ob.LegacyDeprecated {
						at.Kind = "olm-deprecated-removed"
					}
					out = append(out, at)
				}
			}
		}
	}
	return out
}

func appendDeprecation(out []Change, at Change, od, nd *model.Deprecation) []Change {
	switch {
	case od == nil && nd != nil:
		at.Kind, at.New = "deprecation-added", nd.Message
	case od != nil && nd == nil:
		at.Kind, at.Old = "deprecation-removed", od.Message
	case od != nil && nd != nil && od.Message != nd.Message:
		at.Kind, at.Old, at.New = "deprecation-changed", od.Message, nd.Message
	default:
		return out
	}
	return append(out, at)
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func defaultName(p *model.Package) string {
	if p.DefaultChannel == nil {
		return ""
	}
	return p.DefaultChannel.Name
}

// headName is the channel's head as OLM sees it: the bundle a new
// subscription gets (Graph.InstallHead), or the head of the graph when OLM
// cannot order the channel.
func headName(ch *model.Channel) string {
	if g, err := NewGraph(ch); err == nil {
		if h := g.InstallHead(); h != nil {
			return h.Name
		}
		return ""
	}
	h, err := ch.Head()
	if err != nil {
		return ""
	}
	return h.Name
}

func versionOf(b *model.Bundle) string {
	if !b.HasBlob {
		return ""
	}
	return b.Version.String()
}

// sameEdges reports whether two channel entries have the same edges
// (skips in any order), as edgeString would compare them.
func sameEdges(a, b *model.Bundle) bool {
	if a.Replaces != b.Replaces || a.SkipRange != b.SkipRange || len(a.Skips) != len(b.Skips) {
		return false
	}
	if slices.Equal(a.Skips, b.Skips) {
		return true
	}
	return edgeString(a) == edgeString(b)
}

// edgeString is a channel entry's edges as one comparable string.
func edgeString(b *model.Bundle) string {
	var parts []string
	if b.Replaces != "" {
		parts = append(parts, "replaces "+b.Replaces)
	}
	if len(b.Skips) > 0 {
		s := slices.Clone(b.Skips)
		slices.Sort(s)
		parts = append(parts, "skips "+strings.Join(s, ","))
	}
	if b.SkipRange != "" {
		parts = append(parts, "skipRange "+b.SkipRange)
	}
	return strings.Join(parts, "; ")
}

// Check applies the update rules (OpenShift's "Operator Lifecycle Manager
// workflow": every bundle a cluster may run from old still has a single
// update path in new; heads do not go back; no entry's only way forward is
// a bundle OLM never installs) and returns what breaks them. Its time is
// linear in the catalogs' channels (see Walker).
func Check(old, new model.Model) []Violation {
	var out []Violation
	gs := graphs{}
	for _, name := range slices.Sorted(maps.Keys(old)) {
		op, np := old[name], new[name]
		if np == nil {
			out = append(out, Violation{Package: name, Rule: "package-removed",
				Message: fmt.Sprintf("package %q is removed: clusters subscribed to it get no more updates", name)})
			continue
		}
		if o, n := defaultName(op), defaultName(np); o != n {
			out = append(out, Violation{Package: name, Rule: "default-channel", Warning: true,
				Message: fmt.Sprintf("default channel changes from %q to %q: new subscriptions without a channel follow %q", o, n, n)})
		}
		for _, chName := range slices.Sorted(maps.Keys(op.Channels)) {
			oc, nc := op.Channels[chName], np.Channels[chName]
			if nc == nil {
				out = append(out, Violation{Package: name, Channel: chName, Rule: "channel-removed",
					Message: fmt.Sprintf("channel %q of package %q is removed: clusters subscribed to it get no more updates", chName, name)})
				continue
			}
			out = checkChannel(out, gs, oc, nc)
		}
	}
	// The z-stream rule, on the new catalog itself: an entry whose every
	// edge forward leads to bundles another entry skips, or that have the
	// olm.deprecated property, has no update, as OLM never installs either.
	for _, name := range slices.Sorted(maps.Keys(new)) {
		for _, chName := range slices.Sorted(maps.Keys(new[name].Channels)) {
			var oc *model.Channel
			if op := old[name]; op != nil {
				oc = op.Channels[chName]
			}
			out = checkNewEntries(out, gs, oc, new[name].Channels[chName])
		}
	}
	slices.SortStableFunc(out, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Package, b.Package), cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Bundle, b.Bundle))
	})
	return dedupe(out)
}

// checkChannel checks a channel that both catalogs have: its head, and
// the update path of every bundle of old.
func checkChannel(out []Violation, gs graphs, oc, nc *model.Channel) []Violation {
	name, chName := nc.Package.Name, nc.Name
	g, err := gs.of(nc)
	if err != nil {
		return append(out, Violation{Package: name, Channel: chName, Rule: "no-single-chain", Message: err.Error()})
	}
	og, _ := NewGraph(oc)
	var oldHead *model.Bundle
	switch {
	case og != nil:
		oldHead = og.InstallHead()
	default:
		oldHead, _ = oc.Head()
	}
	nh := g.InstallHead()
	if nh == nil {
		if oldHead == nil {
			return out // already so: nothing this change does
		}
		return append(out, Violation{Package: name, Channel: chName, Rule: "no-installable-entry",
			Message: (&NoInstallableError{Package: name, Channel: chName}).Error()})
	}
	if oldHead != nil && oldHead.HasBlob && nh.HasBlob && nh.Version.LT(oldHead.Version) {
		msg := fmt.Sprintf("channel head goes back from %s (%s) to %s (%s)", oldHead.Name, oldHead.Version, nh.Name, nh.Version)
		if nb := nc.Bundles[oldHead.Name]; nb != nil && nb.LegacyDeprecated {
			msg += fmt.Sprintf(": %s has the olm.deprecated property, and OLM never installs it", oldHead.Name)
		}
		out = append(out, Violation{Package: name, Channel: chName, Bundle: nh.Name, Rule: "head-downgrade", Message: msg})
	}
	nw := NewWalker(g)
	var ow *Walker
	if og != nil && og.InstallHead() != nil {
		ow = NewWalker(og)
	}
	// The order of the bundles does not matter: Check sorts what it finds.
	for _, b := range oc.Bundles {
		in := InstalledBundle(b)
		o := nw.Outcome(in)
		if reaches(g, in, o) {
			continue
		}
		if nb := nc.Bundles[b.Name]; nb != nil && o.Steps == 0 && g.Above(nb) {
			continue // above the head: head-downgrade says why
		}
		// A bundle OLD already stranded is not this change's doing:
		// a warning, so that a catalog with old mistakes can still
		// gate its changes.
		already := ow != nil && !reaches(og, in, ow.Outcome(in))
		msg := fmt.Sprintf("a cluster running %s cannot reach the head %s: ", b.Name, nh.Name)
		switch {
		case o.Loop != nil:
			msg += o.Loop.Error()
		case o.Steps == 0:
			msg += stuck(g, in)
		default:
			msg += fmt.Sprintf("its path stops at %s: %s", o.End.Name, stuck(g, InstalledBundle(o.End)))
		}
		if already {
			msg += " (already so in the old catalog)"
		}
		out = append(out, Violation{Package: name, Channel: chName, Bundle: b.Name, Rule: "stranded", Message: msg, Warning: already, Already: already})
	}
	return out
}

// graphs keeps the graphs of the new catalog's channels, which both
// checks read.
type graphs map[*model.Channel]graphResult

type graphResult struct {
	g   *Graph
	err error
}

func (gs graphs) of(ch *model.Channel) (*Graph, error) {
	r, ok := gs[ch]
	if !ok {
		r.g, r.err = NewGraph(ch)
		gs[ch] = r
	}
	return r.g, r.err
}

// reaches reports whether in, whose outcome in g is o, is the install
// head of g or updates to it.
func reaches(g *Graph, in Installed, o Outcome) bool {
	head := g.InstallHead()
	switch {
	case o.Loop != nil:
		return false
	case o.Steps == 0:
		return in.Name == head.Name
	}
	return o.End == head
}

// checkNewEntries applies the z-stream rule to the entries of nc that oc
// (nil for a new channel) does not have, and reports a new channel OLM
// cannot order or install from.
func checkNewEntries(out []Violation, gs graphs, oc, nc *model.Channel) []Violation {
	name, chName := nc.Package.Name, nc.Name
	g, err := gs.of(nc)
	switch {
	case err != nil && oc == nil:
		return append(out, Violation{Package: name, Channel: chName, Rule: "no-single-chain", Message: err.Error()})
	case err != nil:
		return out // reported by checkChannel
	case g.InstallHead() == nil:
		if oc == nil {
			out = append(out, Violation{Package: name, Channel: chName, Rule: "no-installable-entry",
				Message: (&NoInstallableError{Package: name, Channel: chName}).Error()})
		}
		return out
	}
	var outside []*model.Bundle // entries not in OLM's order: skipped, or off the chain
	outsideDone := false
	for _, b := range nc.Bundles { // in any order: Check sorts what it finds
		if oc != nil && oc.Bundles[b.Name] != nil {
			continue // checked as a bundle of old by checkChannel
		}
		in := InstalledBundle(b)
		if b == g.InstallHead() || g.Above(b) || g.firstStep(in) != nil {
			continue
		}
		if !outsideDone {
			for _, o := range sortedBundles(nc) {
				if _, ok := g.ix().pos[o.Name]; !ok {
					outside = append(outside, o)
				}
			}
			outsideDone = true
		}
		var skipped, withheld []string
		for _, o := range outside {
			if o != b && len(edges(o, in)) > 0 {
				skipped = append(skipped, o.Name)
			}
		}
		for _, o := range g.Withheld(in) {
			withheld = append(withheld, o.Name)
		}
		var why string
		switch {
		case len(skipped) > 0 && len(withheld) > 0:
			why = fmt.Sprintf("are skipped by other entries (%s) or have the olm.deprecated property (%s), and OLM installs neither", strings.Join(skipped, ", "), strings.Join(withheld, ", "))
		case len(skipped) > 0:
			why = fmt.Sprintf("(%s) are skipped by other entries, and OLM never installs a skipped bundle", strings.Join(skipped, ", "))
		case len(withheld) > 0:
			why = fmt.Sprintf("(%s) have the olm.deprecated property, and OLM never installs such a bundle", strings.Join(withheld, ", "))
		default:
			continue // stranded in new itself: opm validate reports it
		}
		out = append(out, Violation{Package: name, Channel: chName, Bundle: b.Name, Rule: "skipped-only-way",
			Message: fmt.Sprintf("the only updates of %s %s", b.Name, why)})
	}
	return out
}

func dedupe(vs []Violation) []Violation {
	return slices.CompactFunc(vs, func(a, b Violation) bool { return a == b })
}

func sortedBundles(ch *model.Channel) []*model.Bundle {
	bs := slices.Collect(maps.Values(ch.Bundles))
	slices.SortFunc(bs, func(a, b *model.Bundle) int { return strings.Compare(a.Name, b.Name) })
	return bs
}
