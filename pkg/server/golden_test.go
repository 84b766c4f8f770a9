package server

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/cache"
	"github.com/fastopm/fastopm/pkg/registry"
)

// TestGolden serves the catalogs of testdata/catalogs and compares every
// answer, recorded as ../shared/golden/README.md describes, with upstream
// opm's (testdata/golden, see testdata/README.md), and the bytes of every
// answer with upstream's where the catalog has a wire golden
// (testdata/golden/WIRE.md); invalid catalogs must be refused with
// upstream's validation message. The JSON comparison of the two largest
// catalogs (okderators, 5 MB, and percona-everest, 8 MB: two thirds of
// this package's time under -race) runs in the corpus build only;
// okderators' wire bytes are compared in every build, as it is the one
// catalog whose CSVs are synthesized from olm.csv.metadata.
func TestGolden(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir("../../testdata/catalogs")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatal("no catalogs in testdata/catalogs")
	}
	for _, e := range entries {
		name := e.Name()
		if !testutil.Corpus && name == "okderators" {
			t.Run(name+"/wire", func(t *testing.T) {
				t.Parallel()
				checkWire(t, serveDir(t, filepath.Join("../../testdata/catalogs", name)), filepath.Join("../../testdata/golden", name))
			})
			continue
		}
		if !testutil.Corpus && name == "percona-everest" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkGolden(t, filepath.Join("../../testdata/catalogs", name), filepath.Join("../../testdata/golden", name))
		})
	}
}

// checkGolden compares our answers for the catalog in dir with the golden
// files in goldenDir: api.json, api.json.gz or the api.json digest of
// sha256.txt, and wire.txt.gz if there is one, for a valid catalog;
// validate.txt for an invalid one.
func checkGolden(t *testing.T, dir, goldenDir string) {
	verdict, err := os.ReadFile(filepath.Join(goldenDir, "validate.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(string(verdict), "failed\n") {
		_, err := coldSnapshot(t.Context(), os.DirFS(dir), t.TempDir())
		var ice *registry.InvalidCatalogError
		if !errors.As(err, &ice) {
			t.Fatalf("serving an invalid catalog: got error %v, want an InvalidCatalogError", err)
		}
		lines := strings.SplitN(string(verdict), "\n", 3)
		want := strings.TrimSpace(strings.ReplaceAll(lines[2], "<CATALOG_DIR>", dir))
		// Upstream stops at its first problem; we report them all, so
		// upstream's message is one of ours.
		if got := err.Error(); !strings.Contains(got, want) {
			t.Errorf("error:\n%s\nwant it to contain upstream's:\n%s", got, want)
		}
		return
	}
	want, wantDigest := goldenAPI(t, goldenDir)
	conn := serveDir(t, dir)
	checkWire(t, conn, goldenDir)
	got, seen := recordAPI(t, conn)
	if seen[codes.Unknown] > 0 {
		t.Errorf("%d answers have code Unknown; every error must be NotFound or InvalidArgument", seen[codes.Unknown])
	}
	// A cache saved to a directory and opened again answers the same.
	cacheDir := t.TempDir()
	saved, err := savedSnapshot(t.Context(), os.DirFS(dir), cacheDir, "test")
	if err != nil {
		t.Fatal(err)
	}
	saved.Close()
	reopened, err := cache.OpenDir(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reopened.Close() })
	reconn, _ := serve(t, reopened, Options{})
	if again, _ := recordAPI(t, reconn); !bytes.Equal(again, got) {
		t.Errorf("answers from a saved cache differ from a cold start's:\n%s", firstDifference(again, got))
	}
	if want != nil {
		if !bytes.Equal(got, want) {
			t.Errorf("answers differ from upstream's:\n%s", firstDifference(got, want))
		}
		return
	}
	sum := sha256.Sum256(got)
	if hex.EncodeToString(sum[:]) != wantDigest {
		t.Errorf("answers differ from upstream's: sha256 %x, want %s (document: %d bytes)", sum, wantDigest, len(got))
	}
}

// goldenAPI returns the golden api.json, or only its digest.
func goldenAPI(t *testing.T, dir string) ([]byte, string) {
	if b, err := os.ReadFile(filepath.Join(dir, "api.json")); err == nil {
		return b, ""
	}
	if f, err := os.Open(filepath.Join(dir, "api.json.gz")); err == nil {
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return b, ""
	}
	sums, err := testutil.GoldenDigests(dir)
	if err != nil || sums["api.json"] == "" {
		t.Fatalf("no golden api.json in %s (%v)", dir, err)
	}
	return nil, sums["api.json"]
}

// firstDifference describes where two JSON documents first differ, by
// path, for a readable failure.
func firstDifference(got, want []byte) string {
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return "documents do not decode"
	}
	if p := diffPath("", g, w); p != "" {
		return p
	}
	return "documents differ in formatting only"
}

func diffPath(path string, g, w any) string {
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %s, want an object", path, short(g))
		}
		for k := range wv {
			if _, ok := gv[k]; !ok {
				return fmt.Sprintf("%s: missing key %q (want %s)", path, k, short(wv[k]))
			}
		}
		for k := range gv {
			if _, ok := wv[k]; !ok {
				return fmt.Sprintf("%s: extra key %q (got %s)", path, k, short(gv[k]))
			}
		}
		for k := range wv {
			if d := diffPath(path+"/"+k, gv[k], wv[k]); d != "" {
				return d
			}
		}
	case []any:
		gv, ok := g.([]any)
		if !ok {
			return fmt.Sprintf("%s: got %s, want a list", path, short(g))
		}
		for i := range min(len(gv), len(wv)) {
			if d := diffPath(fmt.Sprintf("%s[%d]", path, i), gv[i], wv[i]); d != "" {
				return d
			}
		}
		if len(gv) != len(wv) {
			return fmt.Sprintf("%s: %d elements, want %d", path, len(gv), len(wv))
		}
	default:
		if canonical(g) != canonical(w) {
			return fmt.Sprintf("%s: got %s, want %s", path, short(g), short(w))
		}
	}
	return ""
}

func short(v any) string {
	s := canonical(v)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
