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
	// default-channel, channel-added, channel-removed, head, bundle-added,
	// bundle-removed, edges, image, deprecation-added, deprecation-removed.
	Kind string `json:"kind"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
}

// Violation is a broken update rule found by Check.
type Violation struct {
	Package string `json:"package"`
	Channel string `json:"channel,omitempty"`
	Bundle  string `json:"bundle,omitempty"`
	// Rule is stranded, head-downgrade, channel-removed, package-removed,
	// skipped-only-way, or no-single-chain.
	Rule    string `json:"rule"`
	Message string `json:"message"`
	// Warning marks findings that are reported but do not fail the check
	// (a default channel that changes).
	Warning bool `json:"warning,omitempty"`
}

// Diff lists what changed from old to new, sorted by package, channel,
// bundle and kind.
func Diff(old, new model.Model) []Change {
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
				if oe, ne := edgeString(ob), edgeString(nb); oe != ne {
					at.Kind, at.Old, at.New = "edges", oe, ne
					out = append(out, at)
				}
				if ob.Image != nb.Image {
					at.Kind, at.Old, at.New = "image", ob.Image, nb.Image
					out = append(out, at)
				}
				out = appendDeprecation(out, Change{Package: name, Channel: chName, Bundle: bName}, ob.Deprecation, nb.Deprecation)
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

func headName(ch *model.Channel) string {
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
// a bundle OLM never installs) and returns what breaks them.
func Check(old, new model.Model) []Violation {
	var out []Violation
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
			g, err := NewGraph(nc)
			if err != nil {
				out = append(out, Violation{Package: name, Channel: chName, Rule: "no-single-chain", Message: err.Error()})
				continue
			}
			if oh, err := oc.Head(); err == nil {
				nh := g.Head()
				if oh.HasBlob && nh.HasBlob && nh.Version.LT(oh.Version) {
					out = append(out, Violation{Package: name, Channel: chName, Bundle: nh.Name, Rule: "head-downgrade",
						Message: fmt.Sprintf("channel head goes back from %s (%s) to %s (%s)", oh.Name, oh.Version, nh.Name, nh.Version)})
				}
			}
			og, _ := NewGraph(oc)
			for _, b := range sortedBundles(oc) {
				in := InstalledBundle(b)
				if reachesHead(g, in) {
					continue
				}
				// A bundle OLD already stranded is not this change's doing:
				// a warning, so that a catalog with old mistakes can still
				// gate its changes.
				already := og != nil && !reachesHead(og, in)
				path, err := g.Path(in)
				msg := fmt.Sprintf("a cluster running %s cannot reach the head %s: ", b.Name, g.Head().Name)
				switch {
				case err != nil:
					msg += err.Error()
				case len(path) == 0:
					msg += "nothing in the new channel replaces or skips it, and no skipRange covers its version"
				default:
					msg += fmt.Sprintf("its path stops at %s", path[len(path)-1].To.Name)
				}
				if already {
					msg += " (already so in the old catalog)"
				}
				out = append(out, Violation{Package: name, Channel: chName, Bundle: b.Name, Rule: "stranded", Message: msg, Warning: already})
			}
		}
	}
	// The z-stream rule, on the new catalog itself: an entry whose every
	// edge forward leads to bundles another entry skips has no update, as
	// OLM never installs a skipped bundle.
	for _, name := range slices.Sorted(maps.Keys(new)) {
		for _, chName := range slices.Sorted(maps.Keys(new[name].Channels)) {
			nc := new[name].Channels[chName]
			g, err := NewGraph(nc)
			if err != nil {
				if op := old[name]; op == nil || op.Channels[chName] == nil {
					out = append(out, Violation{Package: name, Channel: chName, Rule: "no-single-chain", Message: err.Error()})
				}
				continue
			}
			var oc *model.Channel
			if op := old[name]; op != nil {
				oc = op.Channels[chName]
			}
			for _, b := range sortedBundles(nc) {
				if b == g.Head() || g.Next(InstalledBundle(b)) != nil {
					continue
				}
				if oc != nil && oc.Bundles[b.Name] != nil {
					continue // reported as stranded above
				}
				var via []string
				for _, o := range sortedBundles(nc) {
					if o != b && len(edges(o, InstalledBundle(b))) > 0 {
						via = append(via, o.Name)
					}
				}
				if len(via) == 0 {
					continue // stranded in new itself: opm validate reports it
				}
				out = append(out, Violation{Package: name, Channel: chName, Bundle: b.Name, Rule: "skipped-only-way",
					Message: fmt.Sprintf("the only updates of %s (%s) are skipped by other entries, and OLM never installs a skipped bundle", b.Name, strings.Join(via, ", "))})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Package, b.Package), cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Bundle, b.Bundle))
	})
	return dedupe(out)
}

// reachesHead reports whether in is the head of g or updates to it.
func reachesHead(g *Graph, in Installed) bool {
	if in.Name == g.Head().Name {
		return true
	}
	path, err := g.Path(in)
	return err == nil && len(path) > 0 && path[len(path)-1].To == g.Head()
}

func dedupe(vs []Violation) []Violation {
	return slices.CompactFunc(vs, func(a, b Violation) bool { return a == b })
}

func sortedBundles(ch *model.Channel) []*model.Bundle {
	bs := slices.Collect(maps.Values(ch.Bundles))
	slices.SortFunc(bs, func(a, b *model.Bundle) int { return strings.Compare(a.Name, b.Name) })
	return bs
}
