package action

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/internal/imagetest"
)

// countingRegistry is an in-process registry that counts the manifest
// GETs per repository (pushing asks with HEAD).
type countingRegistry struct {
	mu     sync.Mutex
	counts map[string]int
	h      http.Handler
}

func (c *countingRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if i := strings.Index(r.URL.Path, "/manifests/"); i > 0 && r.Method == http.MethodGet {
		c.mu.Lock()
		c.counts[strings.TrimPrefix(r.URL.Path[:i], "/v2/")]++
		c.mu.Unlock()
	}
	c.h.ServeHTTP(w, r)
}

func (c *countingRegistry) count(repo string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[repo]
}

// TestTemplateBundleRenderer checks that the renderer gives what
// `opm render` gives for a bundle image, pulls each reference once however
// many goroutines ask for it, remembers failures, and refuses what is not
// a bundle image.
func TestTemplateBundleRenderer(t *testing.T) {
	t.Parallel()
	reg := &countingRegistry{counts: map[string]int{}, h: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	srv := httptest.NewServer(reg)
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	dirs := []string{"microcks-1.5.2", "aws-efs-operator-0.0.8", "deployment-validation-operator-0.7.12"}
	var refs []string
	for _, d := range dirs {
		ref := host + "/bundles/" + d + ":v1"
		imagetest.Push(t, ref, imagetest.BundleImage(t, filepath.Join("..", "..", "testdata", "bundles", d)))
		refs = append(refs, ref)
	}
	catalogRef := host + "/catalogs/example:v1"
	imagetest.Push(t, catalogRef, imagetest.Image(t, map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"},
		imagetest.LayerFromDir(t, exampleCatalog, "configs")))

	r := &TemplateBundleRenderer{Resolver: &Resolver{ImageOptions: anonymous, TempDir: t.TempDir()}}
	const callers = 16
	var wg sync.WaitGroup
	outs := make([][]string, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range refs {
				ref := refs[(i+j)%len(refs)]
				cfg, err := r.Render(context.Background(), ref)
				if err != nil {
					errs[i] = err
					return
				}
				var buf bytes.Buffer
				if err := cfg.WriteTo(&buf, declcfg.FormatJSON); err != nil {
					errs[i] = err
					return
				}
				outs[i] = append(outs[i], ref+"\n"+buf.String())
			}
		}()
	}
	wg.Wait()
	byRenderer := map[string]int{}
	for _, d := range dirs {
		byRenderer[d] = reg.count("bundles/" + d)
	}
	want := map[string]string{}
	for _, ref := range refs {
		// What `opm render` prints for the image, pulled separately.
		got, err := render(t, &Resolver{ImageOptions: anonymous}, ref)
		if err != nil {
			t.Fatal(err)
		}
		want[ref] = got
	}
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		for _, o := range outs[i] {
			ref, body, _ := strings.Cut(o, "\n")
			if body != want[ref] {
				t.Errorf("caller %d: render of %s differs from opm render's", i, ref)
			}
		}
	}
	for _, d := range dirs {
		// The renderer, asked by every caller, made the requests of one
		// pull: as many as the one reference render made.
		once := reg.count("bundles/"+d) - byRenderer[d]
		if byRenderer[d] != once || once == 0 {
			t.Errorf("%s: %d manifest requests for %d callers, %d for one render", d, byRenderer[d], callers, once)
		}
	}

	// A failure is remembered, and says which reference.
	missing := host + "/bundles/missing:v1"
	_, err1 := r.Render(context.Background(), missing)
	n := reg.count("bundles/missing")
	_, err2 := r.Render(context.Background(), missing)
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Fatalf("missing image: errors %v, %v", err1, err2)
	}
	if !strings.HasPrefix(err1.Error(), `render reference "`+missing+`": `) {
		t.Errorf("error %q does not name the reference as upstream does", err1)
	}
	if got := reg.count("bundles/missing"); got != n {
		t.Errorf("a failed reference was pulled again (%d requests, then %d)", n, got)
	}

	// Only bundle images.
	_, err := r.Render(context.Background(), catalogRef)
	if !errors.Is(err, ErrNotAllowed) {
		t.Errorf("catalog image: error %v, want ErrNotAllowed", err)
	}
	_, err = r.Render(context.Background(), exampleCatalog)
	if !errors.Is(err, ErrNotAllowed) {
		t.Errorf("catalog directory: error %v, want ErrNotAllowed", err)
	}

	// The config returned is the caller's to extend.
	a, _ := r.Render(context.Background(), refs[0])
	a.Bundles = append(a.Bundles[:0], declcfg.Bundle{Name: "changed"})
	b, _ := r.Render(context.Background(), refs[0])
	if b.Bundles[0].Name == "changed" {
		t.Error("a caller's change reached another caller")
	}
}
