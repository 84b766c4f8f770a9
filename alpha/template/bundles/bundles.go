// Package bundles renders the bundle references of a catalog template in
// parallel, each distinct reference once, so that a template can then be
// assembled sequentially, in its own deterministic order, from results
// that are already at hand.
package bundles

import (
	"context"
	"sync"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

// Renderer renders one bundle reference (a bundle image) into the blobs it
// stands for. It must be safe for concurrent use.
type Renderer = func(ctx context.Context, ref string) (*declcfg.DeclarativeConfig, error)

// DefaultParallelism bounds the references rendered at the same time.
const DefaultParallelism = 16

// Result is the outcome of rendering one reference.
type Result struct {
	Config *declcfg.DeclarativeConfig
	Err    error
}

// RenderAll renders every distinct reference of refs with render, at most
// parallelism (DefaultParallelism when < 1) at a time, and returns the
// outcome of each. It never stops early: the caller decides which error,
// in its own order, is the one to report. A cancelled context leaves the
// references not yet started with ctx's error.
func RenderAll(ctx context.Context, refs []string, render Renderer, parallelism int) map[string]Result {
	if parallelism < 1 {
		parallelism = DefaultParallelism
	}
	out := make(map[string]Result, len(refs))
	var distinct []string
	for _, ref := range refs {
		if _, ok := out[ref]; !ok {
			out[ref] = Result{}
			distinct = append(distinct, ref)
		}
	}
	if len(distinct) == 1 {
		cfg, err := render(ctx, distinct[0])
		out[distinct[0]] = Result{cfg, err}
		return out
	}
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		sem = make(chan struct{}, parallelism)
	)
	for _, ref := range distinct {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			mu.Lock()
			out[ref] = Result{Err: ctx.Err()}
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			cfg, err := render(ctx, ref)
			mu.Lock()
			out[ref] = Result{cfg, err}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}
