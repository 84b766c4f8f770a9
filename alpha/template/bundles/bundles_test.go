package bundles

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fastopm/fastopm/alpha/declcfg"
)

func TestRenderAll(t *testing.T) {
	var (
		mu      sync.Mutex
		calls   = map[string]int{}
		running atomic.Int32
		peak    atomic.Int32
	)
	// Renders wait until three run at once, the limit, so that the peak
	// is 3 whatever the machine's speed, and a fourth, running meanwhile,
	// would show. (A serial RenderAll would wait for the hang guard, then
	// fail the check.)
	full := make(chan struct{})
	var fullOnce sync.Once
	render := func(_ context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		mu.Lock()
		calls[ref]++
		mu.Unlock()
		if n >= 3 {
			fullOnce.Do(func() { close(full) })
		}
		select {
		case <-full:
		case <-time.After(time.Minute):
		}
		if ref == "bad" {
			return nil, errors.New("no such image")
		}
		return &declcfg.DeclarativeConfig{Bundles: []declcfg.Bundle{{Image: ref}}}, nil
	}
	var refs []string
	for i := range 20 {
		refs = append(refs, fmt.Sprintf("img%d", i%10)) // each twice
	}
	refs = append(refs, "bad")
	got := RenderAll(context.Background(), refs, render, 3)
	if len(got) != 11 {
		t.Fatalf("%d results, want 11", len(got))
	}
	for ref, n := range calls {
		if n != 1 {
			t.Errorf("%s rendered %d times", ref, n)
		}
	}
	if p := peak.Load(); p != 3 {
		t.Errorf("peak parallelism %d, want 3", p)
	}
	for i := range 10 {
		ref := fmt.Sprintf("img%d", i)
		if r := got[ref]; r.Err != nil || r.Config.Bundles[0].Image != ref {
			t.Errorf("%s: %+v", ref, r)
		}
	}
	if got["bad"].Err == nil {
		t.Error("the failure is lost")
	}

	// A cancelled context reaches the renderer or stops the rest.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got = RenderAll(ctx, []string{"a", "b", "c"}, func(ctx context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
		return nil, ctx.Err()
	}, 1)
	for ref, r := range got {
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", ref, r.Err)
		}
	}
}
