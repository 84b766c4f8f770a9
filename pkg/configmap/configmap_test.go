package configmap

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestKey(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"plain.yaml":           "plain.yaml",
		"Under_score-dash.yml": "Under_score-dash.yml",
		".hidden":              ".hidden",
		"a b:c+d.json":         "a-b-c-d.json",
		"café.yaml":            "caf-.yaml",    // one rune, one dash
		"日本.yaml":              "--.yaml",      // runes, not bytes
		"bad\xff\xfe.yaml":     "bad--.yaml",   // each invalid byte
		"tab\tnew\nline":       "tab-new-line", // control characters
		"x/y":                  "x-y",          // cannot be a file name, still translated
		"~tilde!":              "-tilde-",      // punctuation
	} {
		if got := Key(name); got != want {
			t.Errorf("Key(%q) = %q, want %q", name, got, want)
		}
	}
}

// bundleDir writes files (relative path → content) under a new directory
// and returns it with a trailing slash, as OLM passes it.
func bundleDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"manifests", "metadata"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir + "/"
}

// gzipBase64 is the encoding upstream's GzipBase64Encode produces, the
// whole file at once.
func gzipBase64(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	b64 := base64.NewEncoder(base64.StdEncoding, &buf)
	zw := gzip.NewWriter(b64)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b64.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadGzipMatchesWholeFileEncoding(t *testing.T) {
	t.Parallel()
	// Large enough for several deflate blocks and partial base64 groups.
	var big strings.Builder
	for i := 0; big.Len() < 300_000; i++ {
		big.WriteString(strings.Repeat("x", i%97) + "\n")
	}
	files := map[string]string{
		"manifests/big.yaml":   big.String(),
		"manifests/empty.yaml": "",
		"manifests/one.yaml":   "a",
		"metadata/two.yaml":    "ab",
	}
	dir := bundleDir(t, files)
	c, err := Read(dir, true, 1<<30, nil)
	if err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		key := filepath.Base(p)
		want := gzipBase64(t, []byte(content))
		if !bytes.Equal(c.Data[key], want) {
			t.Errorf("%s: encoding differs from the whole-file encoding (%d vs %d bytes)", key, len(c.Data[key]), len(want))
		}
		r, err := gzip.NewReader(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(c.Data[key])))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil || string(got) != content {
			t.Errorf("%s: does not decode to the file (%v)", key, err)
		}
	}
}

// TestReadLimit checks the limit on both sides of its boundary, in both
// encodings: the data may take exactly limit bytes, not one more, and
// annotations.yaml does not count.
func TestReadLimit(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"manifests/a.yaml":          strings.Repeat("a", 100),
		"manifests/b.yaml":          strings.Repeat("b", 50),
		"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n" + strings.Repeat("# padding\n", 100),
	}
	dir := bundleDir(t, files)
	gzSize := uint64(len(gzipBase64(t, []byte(files["manifests/a.yaml"]))) + len(gzipBase64(t, []byte(files["manifests/b.yaml"]))))
	for _, tc := range []struct {
		gz   bool
		size uint64
	}{{false, 150}, {true, gzSize}} {
		if _, err := Read(dir, tc.gz, tc.size, nil); err != nil {
			t.Errorf("gzip %v, limit %d (the exact size): %v", tc.gz, tc.size, err)
		}
		_, err := Read(dir, tc.gz, tc.size-1, nil)
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != tc.size-1 || err.Error() != "bundle files exceeded "+strconv.FormatUint(tc.size-1, 10)+" bytes limit" {
			t.Errorf("gzip %v, limit %d: %v, want a LimitError", tc.gz, tc.size-1, err)
		}
	}
}

// TestReadStopsAtLimit reads a 1 GiB (sparse) file under a 1 MiB limit:
// the limit is found without reading it, where upstream reads it whole.
func TestReadStopsAtLimit(t *testing.T) {
	t.Parallel()
	dir := bundleDir(t, nil)
	f, err := os.Create(filepath.Join(dir, "manifests", "huge.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var logged []string
	_, err = Read(dir, false, 1<<20, func(level, msg string, kv ...string) {
		logged = append(logged, level+" "+msg+" "+strings.Join(kv, " "))
	})
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("%v, want a LimitError", err)
	}
	want := "error Bundle files exceeded 1048576 bytes limit file " + dir + "manifests/huge.yaml"
	if len(logged) != 2 || logged[1] != want {
		t.Errorf("logged %q, want the reading line and %q", logged, want)
	}
}

func TestReadAnnotations(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml string
		want       map[string]string
		err        string
	}{
		{
			name: "all six, others ignored",
			yaml: "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: p\n  operators.operatorframework.io.bundle.channels.v1: a,b\n  operators.operatorframework.io.bundle.channel.default.v1: a\n  other: x\n",
			want: map[string]string{annotationMediaType: "registry+v1", annotationManifests: "manifests/", annotationMetadata: "metadata/", annotationPackage: "p", annotationChannels: "a,b", annotationDefaultChannel: "a"},
		},
		{
			name: "missing ones are empty",
			yaml: "annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n",
			want: map[string]string{annotationMediaType: "", annotationManifests: "", annotationMetadata: "", annotationPackage: "p", annotationChannels: "", annotationDefaultChannel: ""},
		},
		{
			name: "empty file",
			yaml: "",
			want: map[string]string{annotationMediaType: "", annotationManifests: "", annotationMetadata: "", annotationPackage: "", annotationChannels: "", annotationDefaultChannel: ""},
		},
		{
			name: "not a mapping",
			yaml: "annotations: [a]\n",
			err:  "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go struct field AnnotationsFile.annotations of type struct",
		},
	} {
		dir := bundleDir(t, map[string]string{"metadata/annotations.yaml": tc.yaml})
		c, err := Read(dir, false, 1<<20, nil)
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %s...", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(c.Annotations) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, c.Annotations, tc.want)
		}
		for k, v := range tc.want {
			if got, ok := c.Annotations[k]; !ok || got != v {
				t.Errorf("%s: %s = %q, want %q", tc.name, k, got, v)
			}
		}
		if _, ok := c.Data["annotations.yaml"]; ok {
			t.Errorf("%s: annotations.yaml is in the data", tc.name)
		}
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	old := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name: "cm", Namespace: "ns", Labels: map[string]string{"l": "v"},
				Annotations: map[string]string{"kept": "without annotations.yaml", EncodingAnnotation: EncodingGzip},
			},
			Data:       map[string]string{"old": "x"},
			BinaryData: map[string][]byte{"oldbin": []byte("y")},
		}
	}
	bundleAnn := map[string]string{annotationPackage: "p"}

	cm := old()
	Apply(cm, &Content{Data: map[string][]byte{"k": []byte("v")}, Annotations: bundleAnn}, "img")
	if len(cm.Data) != 1 || cm.Data["k"] != "v" || len(cm.BinaryData) != 0 {
		t.Errorf("plain: data %v, binaryData %v", cm.Data, cm.BinaryData)
	}
	if len(cm.Annotations) != 2 || cm.Annotations[annotationPackage] != "p" || cm.Annotations[SourceImageAnnotation] != "img" {
		t.Errorf("plain: annotations %v, want the bundle's and the source image only", cm.Annotations)
	}
	if cm.Labels["l"] != "v" {
		t.Errorf("labels lost: %v", cm.Labels)
	}
	bundleAnn[annotationPackage] = "changed"
	if cm.Annotations[annotationPackage] != "p" {
		t.Error("Apply shares the content's annotation map")
	}

	cm = old()
	Apply(cm, &Content{Data: map[string][]byte{"k": []byte("enc")}, Gzip: true}, "")
	if len(cm.Data) != 0 || string(cm.BinaryData["k"]) != "enc" || len(cm.BinaryData) != 1 {
		t.Errorf("gzip: data %v, binaryData %v", cm.Data, cm.BinaryData)
	}
	if cm.Annotations["kept"] == "" || cm.Annotations[EncodingAnnotation] != EncodingGzip || cm.Annotations[SourceImageAnnotation] != "" {
		t.Errorf("gzip without annotations.yaml: annotations %v", cm.Annotations)
	}

	cm = &corev1.ConfigMap{}
	Apply(cm, &Content{Data: map[string][]byte{}}, "")
	if cm.Annotations != nil {
		t.Errorf("annotations %v on a ConfigMap without any, no bundle annotations, no image, no gzip", cm.Annotations)
	}
}
