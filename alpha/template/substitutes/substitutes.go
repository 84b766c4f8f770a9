// Package substitutes renders the substitutes catalog template
// (olm.template.substitutes) of `opm alpha render-template`, with upstream
// opm's semantics and error words.
//
// A template is a whole file-based catalog (its entries) plus a list of
// substitutions. Each substitution names a bundle image and a base bundle of
// the catalog; the bundle rendered from the image takes the base's place in
// every channel that lists it: the new entry inherits the base's replaces,
// skips and skipRange and also skips the base, the base's entry keeps no
// edges, and entries that replaced or skipped the base now point at the
// substitute. Substitutions apply in template order, so a later one may
// substitute for an earlier substitute.
package substitutes

import (
	"context"
	"fmt"
	"io"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// Schema is the template's schema.
const Schema = "olm.template.substitutes"

// Parallelism is how many bundle images Render renders at once.
const Parallelism = 8

// Render reads the template from r and returns the catalog it makes.
// renderBundle renders one bundle image reference; it is called once per
// distinct reference, up to Parallelism at a time. The result is the same
// whatever order the images arrive in; errors are the ones upstream
// reports, checked in template order.
func Render(ctx context.Context, r io.Reader, renderBundle func(context.Context, string) (*declcfg.DeclarativeConfig, error)) (*declcfg.DeclarativeConfig, error) {
	t, err := parse(r)
	if err != nil {
		return nil, fmt.Errorf("render: unable to parse template: %w", err)
	}
	cfg, err := load(t.entries)
	if err != nil {
		return nil, fmt.Errorf("render: unable to create declarative config from entries: %w", err)
	}
	if err := validate(cfg); err != nil {
		return nil, fmt.Errorf("render: entries are not valid FBC: %w", err)
	}
	rendered, err := renderAll(ctx, t.substitutions, renderBundle)
	if err != nil {
		return nil, err
	}
	seenBases := map[string]bool{}
	seenNames := map[string]string{}
	for _, s := range t.substitutions {
		if seenBases[s.Base] {
			return nil, fmt.Errorf("render: cannot reuse the same substitution base %q", s.Base)
		}
		seenBases[s.Base] = true
		if base, ok := seenNames[s.Name]; ok {
			return nil, fmt.Errorf("render: cannot reuse the same substitution %q for different bases (%q and %q)", s.Name, base, s.Base)
		}
		seenNames[s.Name] = s.Base
		if err := substitute(cfg, s, rendered[s.Name]); err != nil {
			return nil, fmt.Errorf("render: error processing substitution %q -> %q: %w", s.Base, s.Name, err)
		}
	}
	return cfg, nil
}

// result is a rendered bundle image, or why it could not be rendered.
type result struct {
	cfg *declcfg.DeclarativeConfig
	err error
}

// renderAll renders the distinct images of the substitutions that get as
// far as rendering (a name, a base, the two different), concurrently.
// Failures are kept for the substitution that meets them; only a cancelled
// context stops Render here.
func renderAll(ctx context.Context, subs []Substitute, renderBundle func(context.Context, string) (*declcfg.DeclarativeConfig, error)) (map[string]*result, error) {
	out := map[string]*result{}
	var refs []string
	for _, s := range subs {
		if s.Name == "" || s.Base == "" || s.Name == s.Base || out[s.Name] != nil {
			continue
		}
		out[s.Name] = &result{}
		refs = append(refs, s.Name)
	}
	var g errgroup.Group
	g.SetLimit(Parallelism)
	for _, ref := range refs {
		res := out[ref]
		g.Go(func() error {
			if ctx.Err() != nil {
				res.err = ctx.Err()
				return nil
			}
			res.cfg, res.err = renderBundle(ctx, ref)
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// substitute applies one substitution to cfg, as upstream does, and checks
// that the result is still a valid catalog.
func substitute(cfg *declcfg.DeclarativeConfig, s Substitute, res *result) error {
	switch {
	case s.Name == "":
		return fmt.Errorf("substitution name cannot be empty")
	case s.Base == "":
		return fmt.Errorf("substitution base cannot be empty")
	case s.Name == s.Base:
		return fmt.Errorf("substitution name and base cannot be the same")
	}
	if res.err != nil {
		return fmt.Errorf("failed to render bundle image reference %q: %w", s.Name, res.err)
	}
	if res.cfg == nil || len(res.cfg.Bundles) == 0 {
		return fmt.Errorf("rendered bundle image reference %q contains no bundles", s.Name)
	}
	// Only the first bundle counts, as upstream's.
	sub := res.cfg.Bundles[0]
	subVR, err := bundleVersionRelease(&sub)
	if err != nil {
		return fmt.Errorf("failed to get VersionRelease for substitute bundle %q: %v", s.Name, err)
	}
	i := slices.IndexFunc(cfg.Bundles, func(b declcfg.Bundle) bool { return b.Name == s.Base })
	if i < 0 {
		return fmt.Errorf("base bundle %q does not exist in catalog", s.Base)
	}
	baseVR, err := bundleVersionRelease(&cfg.Bundles[i])
	if err != nil {
		return fmt.Errorf("failed to get VersionRelease for base bundle %q: %v", s.Base, err)
	}
	if baseVR.compare(subVR) >= 0 {
		return fmt.Errorf("base bundle %q is not less than substitute bundle %q", s.Base, s.Name)
	}

	for ci := range cfg.Channels {
		rewireChannel(&cfg.Channels[ci], s.Base, sub.Name)
	}
	// Properties, related images and manifests stay shared with the
	// rendered image, which nothing modifies.
	cfg.Bundles = append(cfg.Bundles, sub)
	if err := validate(cfg); err != nil {
		return fmt.Errorf("resulting config is not valid FBC: %w", err)
	}
	return nil
}

// rewireChannel puts sub in base's place in one channel: for each entry of
// base, a new entry of sub (appended, in reverse order of base's entries)
// takes base's replaces, skips and skipRange and skips base, and base's
// entry loses them; then, among the channel's other entries, one that
// replaces base replaces sub and also skips base, and one that skips base
// skips sub instead.
func rewireChannel(ch *declcfg.Channel, base, sub string) {
	var at []int
	for j, e := range ch.Entries {
		if e.Name == base {
			at = append(at, j)
		}
	}
	original := len(ch.Entries)
	for k := len(at) - 1; k >= 0; k-- {
		old := &ch.Entries[at[k]]
		ch.Entries = append(ch.Entries, declcfg.ChannelEntry{
			Name:      sub,
			Replaces:  old.Replaces,
			Skips:     append(slices.Clip(old.Skips), base),
			SkipRange: old.SkipRange,
		})
		old = &ch.Entries[at[k]] // the append may have moved the entries
		old.Replaces, old.Skips, old.SkipRange = "", nil, ""
	}
	for j := range ch.Entries[:original] {
		e := &ch.Entries[j]
		switch {
		case e.Replaces == base:
			e.Replaces = sub
			e.Skips = append(slices.Clip(e.Skips), base)
		case slices.Contains(e.Skips, base):
			skips := append(slices.Clip(e.Skips), sub)
			e.Skips = slices.DeleteFunc(skips, func(s string) bool { return s == base })
		}
	}
}
