package action

import (
	"context"
	"fmt"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// TemplateBundleRenderer renders the bundle images a catalog template
// names, as upstream's `opm alpha render-template` does: only bundle
// images are allowed, each is rendered as `opm render` renders it (its
// image is the reference as given; properties and related images in
// render's order; the migrations, if any, applied).
//
// It is safe for concurrent use, and memoized: each distinct reference is
// pulled and rendered once, however many times and from however many
// goroutines it is asked for (callers asking for a reference that is being
// rendered wait for that rendering). Errors are remembered too.
type TemplateBundleRenderer struct {
	// Resolver pulls and renders; its Allowed mask is ignored (bundle
	// images only) and it must not be changed once rendering started.
	Resolver *Resolver

	mu   sync.Mutex
	memo map[string]*renderCall
}

type renderCall struct {
	done chan struct{}
	cfg  *declcfg.DeclarativeConfig
	err  error
}

// Render returns the blobs of the bundle image ref. The config returned
// is the caller's: its slices may be appended to, but the bundles'
// contents are shared and must not be changed.
func (r *TemplateBundleRenderer) Render(ctx context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
	r.mu.Lock()
	if r.memo == nil {
		r.memo = map[string]*renderCall{}
	}
	c, ok := r.memo[ref]
	if !ok {
		c = &renderCall{done: make(chan struct{})}
		r.memo[ref] = c
	}
	r.mu.Unlock()
	if !ok {
		c.cfg, c.err = r.render(ctx, ref)
		if c.err != nil && ctx.Err() != nil {
			// A cancelled rendering is not remembered.
			r.mu.Lock()
			delete(r.memo, ref)
			r.mu.Unlock()
		}
		close(c.done)
	} else {
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	out := &declcfg.DeclarativeConfig{
		Packages:     append([]declcfg.Package(nil), c.cfg.Packages...),
		Channels:     append([]declcfg.Channel(nil), c.cfg.Channels...),
		Bundles:      append([]declcfg.Bundle(nil), c.cfg.Bundles...),
		Deprecations: append([]declcfg.Deprecation(nil), c.cfg.Deprecations...),
		Others:       append([]declcfg.Meta(nil), c.cfg.Others...),
	}
	return out, nil
}

func (r *TemplateBundleRenderer) render(ctx context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
	res := *r.Resolver
	res.Allowed = RefBundleImage
	src, err := res.Resolve(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("render reference %q: %w", ref, err)
	}
	if src.Close != nil {
		defer src.Close() //nolint:errcheck // best-effort cleanup of a temporary unpack
	}
	cfg := src.Config
	if cfg == nil {
		// Only bundle images are allowed, and they render in memory.
		return nil, fmt.Errorf("render reference %q: not a bundle image", ref)
	}
	for i := range cfg.Bundles {
		declcfg.PrepareForRender(&cfg.Bundles[i])
	}
	return cfg, nil
}
