package install

import (
	"bytes"
	"context"
	"slices"
)

// changedPackages returns the packages whose data the resolver reads
// differs between two versions of a catalog: added, removed, or with
// another default channel, channels, channel entries or bundles (image,
// version, properties). A package with an entry of the same channel and
// bundle name as one of theirs counts too: OLM tells bundles apart by
// catalog, channel and name only, so a bundle of that name added or
// removed elsewhere changes its answers.
func changedPackages(old, new *Catalog) map[string]bool {
	changed := map[string]bool{}
	for name, op := range old.packages {
		if np := new.packages[name]; np == nil || !samePackage(op, np) {
			changed[name] = true
		}
	}
	for name := range new.packages {
		if old.packages[name] == nil {
			changed[name] = true
		}
	}
	if len(changed) == 0 {
		return changed
	}
	// The channel and bundle names of the changed packages, in either
	// version, and the other packages that have an entry of one of them.
	names := map[[2]string]bool{}
	for _, c := range []*Catalog{old, new} {
		for name := range changed {
			if p := c.packages[name]; p != nil {
				for _, es := range p.byChannel {
					for _, e := range es {
						names[[2]string{e.Channel, e.Name()}] = true
					}
				}
			}
		}
	}
	for _, c := range []*Catalog{old, new} {
		for _, e := range c.entries {
			if names[[2]string{e.Channel, e.Name()}] {
				changed[e.Package()] = true
			}
		}
	}
	return changed
}

func samePackage(a, b *pkgInfo) bool {
	if a.defaultChannel != b.defaultChannel || !slices.Equal(a.channels, b.channels) {
		return false
	}
	for _, ch := range a.channels {
		ea, eb := a.byChannel[ch], b.byChannel[ch]
		if len(ea) != len(eb) {
			return false
		}
		for i := range ea {
			if !sameEntry(ea[i], eb[i]) {
				return false
			}
		}
	}
	return true
}

func sameEntry(a, b *Entry) bool {
	return a.Channel == b.Channel && a.Default == b.Default && a.Replaces == b.Replaces &&
		slices.Equal(a.Skips, b.Skips) && a.SkipRange == b.SkipRange && sameBundle(a.Bundle, b.Bundle)
}

// sameBundle compares what the resolver reads of two bundles (their
// source, which only its messages name, left out).
func sameBundle(a, b *Bundle) bool {
	if a.Name != b.Name || a.Package != b.Package || a.Image != b.Image || a.Version != b.Version ||
		a.own != b.own || len(a.Properties) != len(b.Properties) {
		return false
	}
	for i, p := range a.Properties {
		if p.Type != b.Properties[i].Type || !bytes.Equal(p.Value, b.Properties[i].Value) {
			return false
		}
	}
	return true
}

// dependents returns the packages of the resolver's catalogs whose answers
// a change to the packages of changed may alter: those packages, and
// every package with a bundle that has a dependency a bundle of one of
// them may satisfy, directly or through other packages. An answer depends
// only on the bundles a resolution visits: the subscription's package's
// and, transitively, those that match its bundles' dependencies.
//
// The error is ctx's, or a CEL rule's past its cost limit.
func (r *Resolver) dependents(ctx context.Context, changed map[string]bool) (map[string]bool, error) {
	x := &eval{ctx: ctx}
	// users[q] are the packages with a bundle that may depend on one of
	// package q.
	users := map[string]map[string]bool{}
	seen := map[*Bundle]bool{}
	for _, e := range r.all {
		if seen[e.Bundle] {
			continue
		}
		seen[e.Bundle] = true
		// A bundle whose dependencies OLM cannot read fails every
		// resolution that visits it, whatever the other packages hold.
		preds, _, err := r.compiler.dependencies(e.Bundle.Properties[:e.Bundle.own])
		if err != nil {
			continue
		}
		for _, p := range preds {
			// Every match, not only the candidates: a matching channel
			// that OLM cannot order fails the resolution too.
			ms := r.find(x, p)
			if x.err != nil {
				return nil, x.err
			}
			for _, m := range ms {
				u := users[m.Package()]
				if u == nil {
					u = map[string]bool{}
					users[m.Package()] = u
				}
				u[e.Package()] = true
			}
		}
	}
	out := map[string]bool{}
	var queue []string
	for p := range changed {
		out[p] = true
		queue = append(queue, p)
	}
	for len(queue) > 0 {
		q := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for p := range users[q] {
			if !out[p] {
				out[p] = true
				queue = append(queue, p)
			}
		}
	}
	return out, nil
}
