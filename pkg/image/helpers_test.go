package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/internal/testutil"
)

// ent is one entry of a test layer.
type ent struct {
	name string
	typ  byte // tar.TypeReg when zero
	body string
	link string
	mode int64
	size int64 // header size for bodies given by zeros; 0: len(body)
}

func file(name, body string) ent   { return ent{name: name, typ: tar.TypeReg, body: body} }
func dir(name string) ent          { return ent{name: name, typ: tar.TypeDir, mode: 0o755} }
func symlink(name, to string) ent  { return ent{name: name, typ: tar.TypeSymlink, link: to} }
func hardlink(name, to string) ent { return ent{name: name, typ: tar.TypeLink, link: to} }

// tarBytes builds an uncompressed tar archive of ents.
func tarBytes(t testing.TB, ents ...ent) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range ents {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Linkname: e.link, Mode: mode, Format: tar.FormatPAX}
		if typ == tar.TypeReg {
			hdr.Size = int64(len(e.body))
			if e.size > 0 {
				hdr.Size = e.size
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("tar header %q: %v", e.name, err)
		}
		if typ == tar.TypeReg {
			if e.size > 0 {
				if _, err := io.CopyN(tw, zeroReader{}, e.size); err != nil {
					t.Fatal(err)
				}
			} else if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// gz compresses b with gzip.
func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// layerOf returns a gzip layer holding ents.
func layerOf(t testing.TB, ents ...ent) v1.Layer {
	t.Helper()
	return rawLayer(t, gz(t, tarBytes(t, ents...)))
}

// rawLayer returns a layer whose (compressed or not) content is b.
func rawLayer(t testing.TB, b []byte) v1.Layer { return imagetest.LayerFromTar(t, b) }

// imageOf returns a linux/amd64 image of the layers with the labels.
func imageOf(t testing.TB, labels map[string]string, layers ...v1.Layer) v1.Image {
	return imagetest.Image(t, labels, layers...)
}

// testRegistry is an in-process registry that counts requests.
type testRegistry struct {
	*httptest.Server
	host     string
	requests atomic.Int64 // every request
	blobGets atomic.Int64 // GET .../blobs/...
}

// newRegistry starts a registry; wrap, when not nil, guards it (auth).
func newRegistry(t testing.TB, wrap func(http.Handler) http.Handler) *testRegistry {
	t.Helper()
	r := &testRegistry{}
	var h http.Handler = registry.New(registry.Logger(discardLogger()))
	if wrap != nil {
		h = wrap(h)
	}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests.Add(1)
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") {
			r.blobGets.Add(1)
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(r.Close)
	r.host = strings.TrimPrefix(r.URL, "http://")
	return r
}

// push writes img to the registry as repo:tag and returns the reference.
func (r *testRegistry) push(t testing.TB, repoTag string, img v1.Image, opts ...remote.Option) string {
	t.Helper()
	ref := r.host + "/" + repoTag
	tag, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img, opts...); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	return ref
}

// basicAuth guards a registry with HTTP basic authentication.
func basicAuth(user, pass string) func(http.Handler) http.Handler {
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != want {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// tokenAuth guards a registry with the token flow: /token exchanges basic
// credentials for a bearer token that the registry then requires.
func tokenAuth(user, pass string) func(http.Handler) http.Handler {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	const token = "test-token-1234"
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/token" {
				if r.Header.Get("Authorization") != basic {
					http.Error(w, "bad credentials", http.StatusUnauthorized)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]string{"token": token})
				return
			}
			if r.Header.Get("Authorization") != "Bearer "+token {
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="http://%s/token",service="test",scope="repository:x:pull"`, r.Host))
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// withDial routes every connection to addr, so that a test registry can be
// reached under a host name that is not loopback.
func withDial(addr string) Option {
	return func(o *options) error {
		o.dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
		return nil
	}
}

// isolateCredentials points every credential location at empty temporary
// directories and returns them.
func isolateCredentials(t *testing.T) (home, dockerConfig, runtimeDir, configHome string) {
	t.Helper()
	c := testutil.IsolateCredentials(t)
	return c.Home, c.DockerConfig, c.RuntimeDir, c.ConfigHome
}

// writeAuthFile writes an auth file with one auths entry.
func writeAuthFile(t *testing.T, path, key, user, pass string) {
	t.Helper()
	cfg := map[string]any{"auths": map[string]any{
		key: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))},
	}}
	writeJSON(t, path, cfg)
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// tree lists the files under dir as "path" (directories end in "/",
// symlinks read "path -> target"), sorted.
func tree(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out = append(out, rel+" -> "+target)
		case d.IsDir():
			out = append(out, rel+"/")
		default:
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func staticAuth(user, pass string) authn.Authenticator {
	return &authn.Basic{Username: user, Password: pass}
}

func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }
