package action

import (
	"context"
	"strings"
	"testing"
)

// heldResolver holds the resolution of one reference until release is
// closed (or the load's context ends).
type heldResolver struct {
	inner   SourceResolver
	held    string
	started chan struct{}
	release chan struct{}
}

func (h *heldResolver) Resolve(ctx context.Context, ref string) (*Source, error) {
	if ref == h.held {
		close(h.started)
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.inner.Resolve(ctx, ref)
}

// TestHubClusterWhileLoading: while a catalog that gives a CatalogSource
// its content is still loading, the cluster's answers are not given
// (503, naming the catalog): OLM would reach that CatalogSource, and
// answering as if it could not (every namespace that sees it failing)
// is not query cluster's answer for the same input. Once it is served,
// the answers come.
func TestHubClusterWhileLoading(t *testing.T) {
	state := []string{"../../testdata/cluster/states/several-subscriptions.yaml"}
	flags := installFlags()
	held := &heldResolver{inner: DirResolver{}, held: flags[1].Ref, started: make(chan struct{}), release: make(chan struct{})}
	r := startHub(t, &Hub{Catalogs: flags, State: state, Sources: held})
	<-held.started
	r.waitFor(t, "/readyz", func(_ int, body []byte) bool {
		return strings.Contains(string(body), "catalog community: serving") && strings.Contains(string(body), "catalog marketplace: serving")
	})
	for _, path := range []string{"/api/v1/cluster", "/api/v1/cluster?namespace=team-a&plan=true", "/api/v1/cluster/installed"} {
		code, body := r.get(t, path)
		if code != 503 || !strings.Contains(string(body), "certified") || !strings.Contains(string(body), "loading") {
			t.Errorf("%s while catalog certified loads: %d %s", path, code, body)
		}
	}
	close(held.release)
	r.ready(t)
	for _, path := range []string{"/api/v1/cluster", "/api/v1/cluster/installed"} {
		if code, body := r.get(t, path); code != 200 {
			t.Errorf("%s once every catalog is served: %d %s", path, code, body)
		}
	}
}

// TestHubStoppedReadingState: a stop (SIGTERM) while the state is read
// is a graceful stop, as serve's while it loads: Run returns nil (exit
// 0), not the reading's "context canceled" (exit 2).
func TestHubStoppedReadingState(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := &Hub{Catalogs: installFlags(), State: []string{"../../testdata/cluster/states/several-subscriptions.yaml"}, HTTPAddr: "127.0.0.1:0",
		Sources: DirResolver{}, TempDir: t.TempDir()}
	if err := a.Run(ctx); err != nil {
		t.Errorf("stopped while reading the state: %v", err)
	}
}
