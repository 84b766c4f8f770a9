// Package testutil is what the tests of several packages share: the
// reference JSON encoders that stand for upstream opm's, the digests of the
// golden files in testdata/golden, and an environment without registry
// credentials. It is imported by tests only.
package testutil

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CanonicalJSON encodes v as upstream opm encodes a blob again after
// decoding it (declcfg.Meta): encoding/json, object keys sorted, HTML
// escaping off, no trailing newline. For values decoded by encoding/json,
// it is the canonical JSON of package canonjson.
func CanonicalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// OpmJSON encodes v as upstream's declcfg.WriteJSON writes a blob: a
// four-space indent, HTML escaping off, a trailing newline.
func OpmJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// GoldenDigests reads the sha256.txt of a golden directory (lines
// "<hex digest>  <file>", as sha256sum writes them): file name to digest.
func GoldenDigests(dir string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(dir, "sha256.txt"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if digest, file, ok := strings.Cut(sc.Text(), "  "); ok {
			out[file] = digest
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return out, nil
}

// CredentialEnv are the environment variables that lead image pulls to
// registry credentials (Docker's and Podman's auth files).
var CredentialEnv = []string{"HOME", "DOCKER_CONFIG", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "REGISTRY_AUTH_FILE"}

// Credentials are the empty directories IsolateCredentials made for the
// credential locations.
type Credentials struct {
	Home, DockerConfig, RuntimeDir, ConfigHome string
}

// IsolateCredentials points every credential location at its own empty
// directory for the rest of the test, so that image tests never read the
// credentials of whoever runs them, and tests of credential lookup can
// write auth files where they want them. The test cannot be parallel.
func IsolateCredentials(t testing.TB) Credentials {
	t.Helper()
	base := t.TempDir()
	c := Credentials{
		Home:         filepath.Join(base, "home"),
		DockerConfig: filepath.Join(base, "docker"),
		RuntimeDir:   filepath.Join(base, "run"),
		ConfigHome:   filepath.Join(base, "config"),
	}
	for k, d := range map[string]string{"HOME": c.Home, "DOCKER_CONFIG": c.DockerConfig, "XDG_RUNTIME_DIR": c.RuntimeDir, "XDG_CONFIG_HOME": c.ConfigHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv(k, d)
	}
	t.Setenv("REGISTRY_AUTH_FILE", "")
	return c
}

// HideCredentialsFromProcess is HideCredentials for a whole test binary,
// from TestMain: it returns the function that removes the directory.
func HideCredentialsFromProcess() (cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "test-home-")
	if err != nil {
		return nil, err
	}
	for _, k := range CredentialEnv {
		if k == "REGISTRY_AUTH_FILE" {
			os.Unsetenv(k)
		} else {
			os.Setenv(k, dir)
		}
	}
	return func() { os.RemoveAll(dir) }, nil
}

// FlipByte inverts the byte at off of the file at path: one damaged byte,
// for the tests of checksums.
func FlipByte(t testing.TB, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// WriteFBC writes blobs, one JSON object a line, as the catalog.json of a
// new directory, and returns the directory.
func WriteFBC(t testing.TB, blobs ...any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, blob := range blobs {
		if err := enc.Encode(blob); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// JSONDepth is how deep a JSON text nests, read by encoding/json's
// tokenizer.
func JSONDepth(t testing.TB, b []byte) int {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return deepest
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}
