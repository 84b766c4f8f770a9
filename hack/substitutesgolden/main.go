// Command substitutesgolden records upstream opm's output for the
// substitutes template fixtures: it builds bundle images from the bundle
// directories listed in testdata/templates/substitutes/IMAGES, pushes them to
// an in-process registry (go-containerregistry's pkg/registry) on a loopback
// port, and runs
//
//	OPM alpha render-template substitutes FILE --use-http -o json|yaml
//
// on every fixture of testdata/templates/substitutes, where FILE is the
// fixture with the placeholder REGISTRY_HOST replaced by the registry's
// host:port. It writes stdout (and, when the command fails, its exit code and
// stderr) under testdata/golden/templates/substitutes/, with host:port turned
// back into REGISTRY_HOST and the temporary file's path into the fixture's
// name. Upstream runs with a home directory of its own holding a
// containers policy.json that accepts any image. Run from the repository
// root:
//
//	go run ./hack/substitutesgolden -opm /tmp/upstream/opm
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"sigs.k8s.io/yaml"
)

// Placeholder is the string fixtures and goldens hold where the registry's
// host:port goes.
const Placeholder = "REGISTRY_HOST"

func main() {
	opm := flag.String("opm", "/tmp/upstream/opm", "upstream opm binary")
	fixtures := flag.String("fixtures", "testdata/templates/substitutes", "fixture directory (with its IMAGES list)")
	out := flag.String("out", "testdata/golden/templates/substitutes", "golden directory")
	flag.Parse()
	if err := run(*opm, *fixtures, *out); err != nil {
		fmt.Fprintln(os.Stderr, "substitutesgolden:", err)
		os.Exit(1)
	}
}

func run(opm, fixtures, out string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	go srv.Serve(ln) //nolint:errcheck // ends with the process
	defer srv.Close()
	host := ln.Addr().String()

	images, err := readImages(filepath.Join(fixtures, "IMAGES"))
	if err != nil {
		return err
	}
	for _, im := range images {
		img, err := bundleImage(im.dir)
		if err != nil {
			return fmt.Errorf("%s: %w", im.dir, err)
		}
		ref, err := name.ParseReference(host+"/"+im.ref, name.Insecure)
		if err != nil {
			return err
		}
		if err := remote.Write(ref, img); err != nil {
			return fmt.Errorf("push %s: %w", ref, err)
		}
	}

	names, err := filepath.Glob(filepath.Join(fixtures, "*.yaml"))
	if err != nil {
		return err
	}
	jsons, _ := filepath.Glob(filepath.Join(fixtures, "*.json"))
	names = append(names, jsons...)
	sort.Strings(names)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "substitutesgolden-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// Upstream's image client wants a signature policy: accept anything,
	// from a home directory of our own.
	home := filepath.Join(tmp, "home")
	policy := filepath.Join(home, ".config", "containers")
	if err := os.MkdirAll(policy, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(policy, "policy.json"), []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`+"\n"), 0o644); err != nil {
		return err
	}
	for _, fixture := range names {
		data, err := os.ReadFile(fixture)
		if err != nil {
			return err
		}
		base := filepath.Base(fixture)
		file := filepath.Join(tmp, base)
		if err := os.WriteFile(file, bytes.ReplaceAll(data, []byte(Placeholder), []byte(host)), 0o644); err != nil {
			return err
		}
		stem := strings.TrimSuffix(base, filepath.Ext(base))
		for _, format := range []string{"json", "yaml"} {
			cmd := exec.Command(opm, "alpha", "render-template", "substitutes", file, "--use-http", "-o", format)
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			code := 0
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					return err
				}
				code = ee.ExitCode()
			}
			norm := func(b []byte) []byte {
				b = bytes.ReplaceAll(b, []byte(host), []byte(Placeholder))
				return bytes.ReplaceAll(b, []byte(file), []byte(base))
			}
			golden := filepath.Join(out, stem+"."+format)
			for _, stale := range []string{golden, golden + ".err"} {
				if err := os.Remove(stale); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
			if code == 0 {
				if err := os.WriteFile(golden, norm(stdout.Bytes()), 0o644); err != nil {
					return err
				}
				fmt.Printf("%s -o %s: ok, %d bytes\n", base, format, stdout.Len())
				continue
			}
			if stdout.Len() > 0 {
				return fmt.Errorf("%s -o %s: exit %d with output on stdout", base, format, code)
			}
			rec := fmt.Sprintf("exit %d\n%s", code, norm(stderr.Bytes()))
			if err := os.WriteFile(golden+".err", []byte(rec), 0o644); err != nil {
				return err
			}
			fmt.Printf("%s -o %s: exit %d\n", base, format, code)
		}
	}
	return nil
}

type image struct{ dir, ref string }

// readImages reads the IMAGES list: "<bundle dir> <repository>:<tag>" per
// line, the directory relative to the repository root; # starts a comment.
func readImages(file string) ([]image, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []image
	for i, line := range strings.Split(string(data), "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want <dir> <repository>:<tag>", file, i+1)
		}
		out = append(out, image{f[0], f[1]})
	}
	return out, nil
}

// bundleImage builds a bundle image of dir: its tree at the root of one
// layer, its metadata/annotations.yaml annotations as labels.
func bundleImage(dir string) (v1.Image, error) {
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return nil, err
	}
	var ann struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &ann); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == "." {
			return err
		}
		name := path.Clean(filepath.ToSlash(rel))
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755})
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(b))}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Labels = ann.Annotations
	return mutate.ConfigFile(img, cf)
}
