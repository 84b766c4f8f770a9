package substitutes_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fastopm/fastopm/alpha/action"
	"github.com/fastopm/fastopm/alpha/declcfg"
	"github.com/fastopm/fastopm/alpha/template/substitutes"
	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/image"
)

const (
	root      = "../../.."
	fixtures  = root + "/testdata/templates/substitutes"
	goldenDir = root + "/testdata/golden/templates/substitutes"
	// placeholder stands for the registry's host:port in fixtures and
	// goldens (see hack/substitutesgolden).
	placeholder = "REGISTRY_HOST"
)

// substitutesTestRenderer renders bundle images as `opm alpha
// render-template` does: through the Resolver, bundle images only, then
// render's normalisation of each bundle. It counts the renders of each
// reference.
type substitutesTestRenderer struct {
	res   action.Resolver
	mu    sync.Mutex
	calls map[string]int
}

func (r *substitutesTestRenderer) render(ctx context.Context, ref string) (*declcfg.DeclarativeConfig, error) {
	r.mu.Lock()
	r.calls[ref]++
	r.mu.Unlock()
	src, err := r.res.Resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	if src.Close != nil {
		defer src.Close() //nolint:errcheck // a temporary unpack
	}
	if src.Config == nil {
		return nil, errors.New("not a bundle image")
	}
	for i := range src.Config.Bundles {
		declcfg.PrepareForRender(&src.Config.Bundles[i])
	}
	return src.Config, nil
}

// pushImages builds the bundle images the fixtures use (IMAGES) into an
// in-process registry and returns its host:port.
func pushImages(t *testing.T) string {
	t.Helper()
	host := imagetest.Registry(t)
	f, err := os.Open(filepath.Join(fixtures, "IMAGES"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			t.Fatalf("IMAGES: bad line %q", sc.Text())
		}
		imagetest.Push(t, host+"/"+fields[1], imagetest.BundleImage(t, filepath.Join(root, fields[0])))
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("IMAGES lists no image")
	}
	return host
}

// upstreamError is the error message upstream printed, from a recorded
// stderr: what follows "Error: rendering template: " up to cobra's usage.
func upstreamError(t *testing.T, rec []byte) string {
	t.Helper()
	s := string(rec)
	if !strings.HasPrefix(s, "exit 1\nError: rendering template: ") {
		t.Fatalf("unexpected record:\n%s", s)
	}
	s = strings.TrimPrefix(s, "exit 1\nError: rendering template: ")
	msg, _, ok := strings.Cut(s, "\nUsage:\n")
	if !ok {
		t.Fatalf("no usage after the error:\n%s", s)
	}
	return msg
}

// TestGoldenUpstream renders every fixture with bundle images from real
// bundle directories and compares the output, JSON and YAML, or the error,
// with upstream opm's, recorded by hack/substitutesgolden.
func TestGoldenUpstream(t *testing.T) {
	testutil.IsolateCredentials(t)
	host := pushImages(t)
	names, err := filepath.Glob(filepath.Join(fixtures, "*.*"))
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for _, fixture := range names {
		base := filepath.Base(fixture)
		ext := filepath.Ext(base)
		if ext != ".yaml" && ext != ".json" {
			continue
		}
		stem := strings.TrimSuffix(base, ext)
		cases++
		t.Run(stem, func(t *testing.T) {
			data, err := os.ReadFile(fixture)
			if err != nil {
				t.Fatal(err)
			}
			data = bytes.ReplaceAll(data, []byte(placeholder), []byte(host))
			r := &substitutesTestRenderer{
				res: action.Resolver{
					Allowed:      action.RefBundleImage,
					ImageOptions: []image.Option{image.WithPlainHTTP(true)},
					TempDir:      t.TempDir(),
				},
				calls: map[string]int{},
			}
			cfg, err := substitutes.Render(context.Background(), bytes.NewReader(data), r.render)
			for ref, n := range r.calls {
				if n != 1 {
					t.Errorf("%s rendered %d times", ref, n)
				}
			}
			for _, format := range []declcfg.Format{declcfg.FormatJSON, declcfg.FormatYAML} {
				golden := filepath.Join(goldenDir, stem+"."+string(format))
				want, werr := os.ReadFile(golden)
				rec, rerr := os.ReadFile(golden + ".err")
				switch {
				case werr == nil && rerr == nil:
					t.Fatalf("%s: both an output and an error recorded", golden)
				case werr == nil:
					if err != nil {
						t.Fatalf("-o %s: %v\nupstream renders it", format, err)
					}
					var buf bytes.Buffer
					if err := cfg.WriteTo(&buf, format); err != nil {
						t.Fatal(err)
					}
					got := bytes.ReplaceAll(buf.Bytes(), []byte(host), []byte(placeholder))
					if !bytes.Equal(got, want) {
						t.Errorf("-o %s differs from upstream's %s:\n%s", format, golden, firstDiff(got, want))
					}
				case rerr == nil:
					wantMsg := upstreamError(t, rec)
					if err == nil {
						t.Fatalf("-o %s: rendered; upstream fails with: %s", format, wantMsg)
					}
					got := strings.ReplaceAll(err.Error(), host, placeholder)
					if got != wantMsg {
						t.Errorf("-o %s error:\n got: %s\nwant: %s", format, got, wantMsg)
					}
				default:
					t.Fatalf("no golden for %s -o %s", base, format)
				}
			}
		})
	}
	if cases < 10 {
		t.Fatalf("only %d fixtures", cases)
	}
}

// firstDiff shows where two outputs part.
func firstDiff(got, want []byte) string {
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + trunc(g) + "\nwant: " + trunc(w)
		}
	}
	return "(same lines)"
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
