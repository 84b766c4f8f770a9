package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/fastopm/fastopm/internal/imagetest"
	"github.com/fastopm/fastopm/internal/testutil"
	"github.com/fastopm/fastopm/pkg/bundle"
	"github.com/fastopm/fastopm/pkg/image"
)

const (
	exampleCatalog = goldenRoot + "/example"
	smallBundle    = bundleTestdata + "/bundles/hyperfoil-bundle-0.26.0"
)

// isolateCredentials points every credential location at an empty
// directory, so that image tests never read the credentials of whoever
// runs them. Tests that call it cannot be parallel.
func isolateCredentials(t *testing.T) {
	t.Helper()
	testutil.IsolateCredentials(t)
	t.Setenv(imageCacheEnv, "")
}

// execute runs a command outside the opm tree (for commands the root may
// not list yet) and returns its stdout, stderr and error.
func execute(t *testing.T, newCmd func(Streams) *cobra.Command, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := newCmd(Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

// TestCommandsWired checks that opm lists the commands of this file's
// tests.
func TestCommandsWired(t *testing.T) {
	t.Parallel()
	root := New(Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}})
	for _, path := range [][]string{
		{"render"}, {"migrate"}, {"generate", "dockerfile"}, {"generate", "image"}, {"alpha", "bundle", "unpack"},
	} {
		cmd, rest, err := root.Find(path)
		if err != nil || len(rest) != 0 || cmd.Name() != path[len(path)-1] {
			t.Errorf("opm %s is not wired into the command tree", strings.Join(path, " "))
		}
	}
}

// TestRenderImages renders catalog and bundle images from an in-process
// registry, alone and mixed with directories, through `opm render`. The
// catalog image holds the example catalog (JSON, YAML, an .indexignore);
// the corpus build also renders a real catalog of 3 MB (34 YAML files)
// as an image.
func TestRenderImages(t *testing.T) {
	isolateCredentials(t)
	host := imagetest.Registry(t)
	catalogs := []string{exampleCatalog}
	if testutil.Corpus {
		catalogs = append(catalogs, goldenRoot+"/catalogs/submariner-v4.14")
	}
	var catalogRef string
	for _, catalog := range catalogs {
		catalogRef = host + "/catalogs/" + filepath.Base(catalog) + ":v1"
		imagetest.Push(t, catalogRef, imagetest.Image(t, map[string]string{image.ConfigsLabel: "/configs"},
			imagetest.LayerFromDir(t, catalog, "configs")))
		for _, format := range []string{"json", "yaml"} {
			code, want, errOut := run(t, "render", catalog, "-o", format)
			if code != 0 {
				t.Fatalf("render dir: %s", errOut)
			}
			code, got, errOut := run(t, "render", catalogRef, "-o", format)
			if code != 0 {
				t.Fatalf("render image: %s", errOut)
			}
			if got != want {
				t.Errorf("%s -o %s: render of the catalog image differs from render of its directory", filepath.Base(catalog), format)
			}
		}
	}
	catalogRef = host + "/catalogs/example:v1"

	bundleRef := host + "/bundles/hyperfoil@" // completed below with the digest
	bundleImg := imagetest.BundleImage(t, smallBundle)
	d, err := bundleImg.Digest()
	if err != nil {
		t.Fatal(err)
	}
	bundleRef += d.String()
	imagetest.Push(t, bundleRef, bundleImg)
	plainRef := host + "/plain:v1"
	imagetest.Push(t, plainRef, imagetest.Image(t, nil, imagetest.LayerFromFiles(t, map[string]string{"x": "y"})))

	// A bundle image renders like its directory with the image reference
	// as template.
	code, want, errOut := run(t, "render", smallBundle, "--alpha-image-ref-template", bundleRef)
	if code != 0 {
		t.Fatal(errOut)
	}
	code, got, errOut := run(t, "render", bundleRef)
	if code != 0 {
		t.Fatal(errOut)
	}
	if got != want {
		t.Errorf("bundle image render:\n%.400s\nwant:\n%.400s", got, want)
	}

	// Mixed: one stream in upstream's order (packages by name: the
	// bundles' between the catalog's two).
	code, mixed, errOut := run(t, "render", bundleRef, catalogRef, smallBundle)
	if code != 0 {
		t.Fatal(errOut)
	}
	i, j, k := strings.Index(mixed, `"package": "example-operator"`), strings.Index(mixed, `"package": "hyperfoil-bundle"`), strings.Index(mixed, `"package": "memcached"`)
	if i < 0 || j < 0 || k < 0 || i > j || j > k {
		t.Errorf("mixed render lacks a package or is out of order (example-operator at %d, hyperfoil at %d, memcached at %d)", i, j, k)
	}

	// The images are pulled at once; on a terminal a status line counts
	// them and a summary ends it, and the output is the same. Not on a
	// terminal: nothing on stderr.
	if strings.Contains(errOut, "pulled") {
		t.Errorf("progress written when stderr is not a terminal: %q", errOut)
	}
	var tout, terr bytes.Buffer
	if code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: &tout, Err: &terr, Terminal: true},
		[]string{"render", bundleRef, catalogRef, smallBundle}); code != 0 || tout.String() != mixed {
		t.Errorf("render on a terminal: exit %d, stdout equal: %v; stderr %q", code, tout.String() == mixed, terr.String())
	}
	if e := terr.String(); !strings.Contains(e, "pulling images: ") || !strings.Contains(e, "pulled 2 images in ") {
		t.Errorf("stderr on a terminal: %q, want the pulls counted and summed up", e)
	}

	// Neither catalog nor bundle: exit 1, the reason on stderr, nothing on
	// stdout.
	code, out, errOut := run(t, "render", exampleCatalog, plainRef)
	if code != 1 || out != "" || !strings.Contains(errOut, "image type could not be determined: image has no labels") {
		t.Errorf("exit %d, stdout %d bytes, stderr %q", code, len(out), errOut)
	}
}

func TestRenderFlags(t *testing.T) {
	t.Parallel()
	noChannel := t.TempDir()
	if err := os.CopyFS(noChannel, os.DirFS(smallBundle)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(noChannel, "metadata", "annotations.yaml"),
		[]byte("annotations:\n  operators.operatorframework.io.bundle.package.v1: hyperfoil-bundle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const tmpl = "quay.io/x/{{.Package}}:v{{.Version}}"
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    []string // substrings of stdout
		wantNotOut []string
		wantErr    string // substring of stderr
	}{
		{name: "migrate level", args: []string{smallBundle, "--alpha-image-ref-template", tmpl, "--migrate-level", "bundle-object-to-csv-metadata"},
			wantOut: []string{`"type": "olm.csv.metadata"`, `"image": "quay.io/x/hyperfoil-bundle:v0.26.0"`}, wantNotOut: []string{`"olm.bundle.object"`}},
		{name: "migrate all", args: []string{smallBundle, "--alpha-image-ref-template", tmpl, "--migrate"},
			wantOut: []string{`"type": "olm.csv.metadata"`}, wantNotOut: []string{`"olm.bundle.object"`}},
		{name: "migrate none", args: []string{smallBundle, "--alpha-image-ref-template", tmpl, "--migrate-level", "none"},
			wantOut: []string{`"olm.bundle.object"`}, wantNotOut: []string{`"olm.csv.metadata"`}},
		{name: "migrate without image leaves objects", args: []string{smallBundle, "--migrate"},
			wantOut: []string{`"olm.bundle.object"`, `"image": ""`}},
		{name: "both migrate flags", args: []string{smallBundle, "--migrate", "--migrate-level", "none"}, wantCode: 1, wantErr: "migrate"},
		{name: "unknown level", args: []string{smallBundle, "--migrate-level", "v2"}, wantCode: 1, wantErr: `unknown migration level "v2"`},
		{name: "bad template", args: []string{smallBundle, "--alpha-image-ref-template", "{{.Package"}, wantCode: 1, wantErr: "invalid image reference template"},
		{name: "bad output", args: []string{smallBundle, "-o", "xml"}, wantCode: 1, wantErr: `invalid --output value "xml", expected (json|yaml)`},
		{name: "lenient bundle warns", args: []string{noChannel},
			wantOut: []string{`"name": "hyperfoil-operator.v0.26.0"`}, wantErr: "level=warning"},
		{name: "strict bundle fails", args: []string{noChannel, "--strict"}, wantCode: 1, wantErr: "no channel in annotations"},
	}
	// References are resolved at once; their warnings still come in the
	// order of the references.
	other := t.TempDir()
	if err := os.CopyFS(other, os.DirFS(noChannel)); err != nil {
		t.Fatal(err)
	}
	for _, order := range [][]string{{noChannel, other}, {other, noChannel}} {
		for range 3 {
			code, _, errOut := run(t, "render", order[0], order[1])
			i, j := strings.Index(errOut, order[0]+`\"`), strings.Index(errOut, order[1]+`\"`)
			if code != 0 || i < 0 || j < 0 || i > j {
				t.Fatalf("render %v: exit %d, warnings out of order:\n%s", order, code, errOut)
			}
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := run(t, append([]string{"render"}, tt.args...)...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.wantCode, errOut)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q", w)
				}
			}
			for _, w := range tt.wantNotOut {
				if strings.Contains(out, w) {
					t.Errorf("stdout has %q", w)
				}
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q lacks %q", errOut, tt.wantErr)
			}
			if tt.wantCode != 0 && out != "" {
				t.Errorf("failed render wrote %d bytes to stdout", len(out))
			}
			// Upstream's render logs its errors with Go's standard logger;
			// command-line errors come from cobra.
			if tt.wantCode != 0 && !regexp.MustCompile(`^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d |Error: )`).MatchString(errOut) {
				t.Errorf("stderr %q is not in upstream's format", errOut)
			}
		})
	}
}

func TestMigrateCmd(t *testing.T) {
	t.Parallel()
	newCmd := func(s Streams) *cobra.Command { return newMigrateCmd(s, &globalOptions{}) }
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, err := execute(t, newCmd, exampleCatalog, out, "-o", "yaml", "--migrate-level", "bundle-object-to-csv-metadata")
	if err != nil {
		t.Fatal(err)
	}
	if stdout != "" || !strings.Contains(stderr, `level=info msg="rendering index `) || !strings.Contains(stderr, "wrote rendered file-based catalog") {
		t.Errorf("stdout %q stderr %q", stdout, stderr)
	}
	for _, f := range []string{"example-operator/catalog.yaml", "memcached/catalog.yaml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	// The same output directory again: refused, as upstream refuses it.
	if _, _, err := execute(t, newCmd, exampleCatalog, out); err == nil || !strings.Contains(err.Error(), "must be empty") {
		t.Errorf("error %v, want a refusal of the non-empty output directory", err)
	}
	if _, _, err := execute(t, newCmd, exampleCatalog, filepath.Join(t.TempDir(), "x"), "-o", "toml"); err == nil || !strings.Contains(err.Error(), `invalid --output value "toml"`) {
		t.Errorf("error %v", err)
	}
	if _, _, err := execute(t, newCmd, exampleCatalog); err == nil {
		t.Error("one argument accepted")
	}
}

func TestGenerateDockerfileCmd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantErr  string
		wantHave []string // lines of the Dockerfile
	}{
		{name: "defaults", wantHave: []string{"FROM quay.io/operator-framework/opm:latest as builder", "FROM quay.io/operator-framework/opm:latest", "ADD catalog /configs"}},
		{name: "scratch base, labels", args: []string{"-i", "scratch", "-b", "quay.io/me/opm:v1", "-l", "b=2,a=1", "-l", "c=3"},
			wantHave: []string{"FROM quay.io/me/opm:v1 as builder", "FROM scratch", "#       catalogDir: /configs", `LABEL "a"="1"` + "\n" + `LABEL "b"="2"` + "\n" + `LABEL "c"="3"`}},
		{name: "binary image alone sets the builder", args: []string{"--binary-image", "quay.io/me/opm:v2"},
			wantHave: []string{"FROM quay.io/me/opm:v2 as builder", "FROM quay.io/me/opm:v2\n"}},
		{name: "binary and base image", args: []string{"--binary-image", "a", "--base-image", "b"}, wantErr: "binary-image"},
		{name: "scratch builder", args: []string{"-b", "scratch"}, wantErr: `invalid builder image: "scratch"`},
		{name: "bad label", args: []string{"-l", "novalue"}, wantErr: `invalid label "novalue"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			dir := filepath.Join(parent, "catalog")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			_, _, err := execute(t, func(Streams) *cobra.Command { return newGenerateDockerfileCmd() }, append([]string{dir}, tt.args...)...)
			dockerfile := filepath.Join(parent, "catalog.Dockerfile")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if _, err := os.Stat(dockerfile); err == nil {
					t.Error("failed run wrote a Dockerfile")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(dockerfile)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.wantHave {
				if !strings.Contains(string(data), w) {
					t.Errorf("Dockerfile lacks %q:\n%s", w, data)
				}
			}
			// A second run refuses to overwrite.
			if _, _, err := execute(t, func(Streams) *cobra.Command { return newGenerateDockerfileCmd() }, dir); err == nil || !strings.Contains(err.Error(), "file already exists") {
				t.Errorf("second run: error %v, want a refusal", err)
			}
		})
	}
}

func TestGenerateImageCmd(t *testing.T) {
	isolateCredentials(t)
	host := imagetest.Registry(t)
	baseRef := host + "/opm:latest"
	imagetest.Push(t, baseRef, imagetest.Image(t, nil, imagetest.LayerFromFiles(t, map[string]string{"bin/opm": "opm"})))
	stub := func(configsDir, cacheDir string) error {
		if err := os.Mkdir(cacheDir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(cacheDir, "stub"), []byte("stub"), 0o644)
	}
	g := &globalOptions{}
	newCmd := func(s Streams) *cobra.Command { return newGenerateImageCmd(s, g, stub) }
	const catalog = exampleCatalog // the flags are tested; alpha/action builds a real catalog

	first, stderr, err := execute(t, newCmd, catalog, "--base-image", baseRef, "--tag", host+"/catalog:v1", "-l", "team=olm")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first, "sha256:") || !strings.Contains(stderr, "wrote catalog image "+host+"/catalog:v1@sha256:") {
		t.Fatalf("stdout %q stderr %q", first, stderr)
	}
	second, _, err := execute(t, newCmd, catalog, "-i", baseRef, "-t", host+"/catalog:v2", "-l", "team=olm")
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Errorf("two builds: %s and %s", strings.TrimSpace(first), strings.TrimSpace(second))
	}

	// On a terminal each step is shown and summed up; not on one (above),
	// stderr has the final line only.
	if strings.Contains(stderr, "wrote the catalog layer") {
		t.Errorf("progress written when stderr is not a terminal: %q", stderr)
	}
	var tout, terr bytes.Buffer
	tcmd := newCmd(Streams{In: strings.NewReader(""), Out: &tout, Err: &terr, Terminal: true})
	tcmd.SilenceUsage, tcmd.SilenceErrors = true, true
	tcmd.SetArgs([]string{catalog, "-i", baseRef, "-t", host + "/catalog:v9", "-l", "team=olm"})
	if err := tcmd.ExecuteContext(context.Background()); err != nil || tout.String() != first {
		t.Fatalf("build on a terminal: %v, digest %q want %q", err, tout.String(), first)
	}
	for _, want := range []string{"built the serve cache in ", "wrote the catalog layer (", "wrote the serve cache layer (", "pushed " + host + "/catalog:v9 ("} {
		if !strings.Contains(terr.String(), want) {
			t.Errorf("stderr on a terminal lacks %q:\n%q", want, terr.String())
		}
	}

	// opm render of the pushed image equals opm render of the directory.
	code, want, errOut := run(t, "render", catalog)
	if code != 0 {
		t.Fatal(errOut)
	}
	code, got, errOut := run(t, "render", host+"/catalog@"+strings.TrimSpace(first))
	if code != 0 {
		t.Fatal(errOut)
	}
	if got != want {
		t.Error("render of the built image differs from render of the catalog directory")
	}

	layoutDir := filepath.Join(t.TempDir(), "oci")
	third, _, err := execute(t, newCmd, catalog, "-i", baseRef, "--output", "oci-layout:"+layoutDir, "-l", "team=olm")
	if err != nil {
		t.Fatal(err)
	}
	if third != first {
		t.Errorf("layout build %s, want %s", third, first)
	}
	if _, err := os.Stat(filepath.Join(layoutDir, "index.json")); err != nil {
		t.Error(err)
	}

	failures := []struct {
		name    string
		newCmd  func(Streams) *cobra.Command
		args    []string
		wantErr string
	}{
		{name: "no destination", newCmd: newCmd, args: []string{catalog, "-i", baseRef}, wantErr: "tag output"},
		// Without -i the base is built from the running opm (the test
		// binary), which has no grpc_health_probe next to it.
		{name: "no base image, no grpc_health_probe", newCmd: newCmd, args: []string{catalog, "-t", host + "/a:v1"}, wantErr: "no grpc_health_probe next to this opm"},
		{name: "two destinations", newCmd: newCmd, args: []string{catalog, "-i", baseRef, "-t", host + "/a:v1", "--output", "oci-layout:" + layoutDir}, wantErr: "none of the others can be"},
		{name: "bad platform", newCmd: newCmd, args: []string{catalog, "-i", baseRef, "-t", host + "/a:v1", "--platform", "linux/amd64/v1/x/y"}, wantErr: "invalid --platform"},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := execute(t, tt.newCmd, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			if out != "" {
				t.Errorf("stdout %q", out)
			}
		})
	}

	t.Run("SOURCE_DATE_EPOCH", func(t *testing.T) {
		t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
		out, _, err := execute(t, newCmd, catalog, "-i", baseRef, "-t", host+"/catalog:v3", "-l", "team=olm")
		if err != nil {
			t.Fatal(err)
		}
		if out == first {
			t.Error("SOURCE_DATE_EPOCH does not change the image")
		}
		t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
		if _, _, err := execute(t, newCmd, catalog, "-i", baseRef, "-t", host+"/catalog:v3"); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
			t.Errorf("error %v", err)
		}
	})
}

func TestAlphaBundleUnpackCmd(t *testing.T) {
	isolateCredentials(t)
	host := imagetest.Registry(t)
	good := host + "/bundles/hyperfoil:v0.26.0"
	imagetest.Push(t, good, imagetest.BundleImage(t, smallBundle))
	// A bundle image whose CSV is missing.
	bad := host + "/bundles/broken:v1"
	imagetest.Push(t, bad, imagetest.Image(t, map[string]string{bundle.AnnotationPackage: "broken"}, imagetest.LayerFromFiles(t, map[string]string{
		"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.package.v1: broken\n  operators.operatorframework.io.bundle.channels.v1: alpha\n",
		"manifests/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
	})))
	newCmd := func(s Streams) *cobra.Command { return newAlphaBundleCmd(s, nil) }

	tests := []struct {
		name      string
		args      []string
		wantErr   string
		wantFiles []string
	}{
		{name: "valid bundle", args: []string{"unpack", good}, wantFiles: []string{
			"manifests/hyperfoil-operator.clusterserviceversion.yaml", "metadata/annotations.yaml", "tests/scorecard/config.yaml"}},
		{name: "invalid bundle", args: []string{"unpack", bad}, wantErr: "bundle validation failed"},
		{name: "invalid bundle, validation skipped", args: []string{"unpack", bad, "-v"}, wantFiles: []string{"manifests/cm.yaml", "metadata/annotations.yaml"}},
		{name: "missing root CA", args: []string{"unpack", good, "-c", "/no/such/ca.pem"}, wantErr: "no such file"},
		{name: "no image", args: []string{"unpack"}, wantErr: "accepts 1 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, _, err := execute(t, newCmd, append(tt.args, "-o", out)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if ents, _ := os.ReadDir(out); len(ents) != 0 {
					t.Errorf("failed unpack left %s in the output directory", ents[0].Name())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tt.wantFiles {
				want, err := os.ReadFile(filepath.Join(smallBundle, f))
				if tt.name != "valid bundle" {
					want, err = nil, nil
				}
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Errorf("unpacked bundle lacks %s: %v", f, err)
					continue
				}
				if want != nil && !bytes.Equal(got, want) {
					t.Errorf("%s differs from the bundle's", f)
				}
			}
		})
	}
}
