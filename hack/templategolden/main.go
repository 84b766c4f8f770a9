// Command templategolden records upstream opm's outputs for the template
// cases of internal/tmplfixture (`opm alpha render-template` and
// `opm alpha convert-template basic`): it starts a registry on a loopback
// port, pushes the bundle images of testdata/bundles, runs the given opm
// binary on every case and writes testdata/template-golden/results.json
// (exit code, SHA-256 of stdout, first line of stderr, normalized) and,
// for outputs under 16 KiB, the output itself under out/.
//
//	go run ./hack/templategolden -opm /tmp/upstream/bin/opm
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/fastopm/fastopm/internal/tmplfixture"
)

func main() {
	opm := flag.String("opm", "/tmp/upstream/bin/opm", "the opm binary to record")
	testdata := flag.String("testdata", "testdata", "the testdata directory")
	out := flag.String("out", "testdata/template-golden", "where to write the results")
	full := flag.String("full", "", "if set, a directory where every output is written in full (to look at differences)")
	flag.Parse()
	if err := run(*opm, *testdata, *out, *full); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(opm, testdata, outDir, fullDir string) error {
	testdata, err := filepath.Abs(testdata)
	if err != nil {
		return err
	}
	srv, err := tmplfixture.Start()
	if err != nil {
		return err
	}
	defer srv.Close()
	if _, err := tmplfixture.PushBundles(srv.Host, filepath.Join(testdata, "bundles")); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "templategolden-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	tmplDir := filepath.Join(work, "templates")
	if err := tmplfixture.ExpandTemplates(testdata, tmplDir, srv.Host); err != nil {
		return err
	}
	home := filepath.Join(work, "home")
	// containers/image, which upstream pulls with, needs a signature
	// policy: accept anything from the test registry.
	policyDir := filepath.Join(home, ".config", "containers")
	if err := os.MkdirAll(policyDir, 0o755); err != nil {
		return err
	}
	policy := `{"default":[{"type":"insecureAcceptAnything"}]}`
	if err := os.WriteFile(filepath.Join(policyDir, "policy.json"), []byte(policy), 0o644); err != nil {
		return err
	}
	cases, err := tmplfixture.Cases(testdata)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(outDir, "out")); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(outDir, "out"), 0o755); err != nil {
		return err
	}
	var results []tmplfixture.Result
	for _, c := range cases {
		cmd := exec.Command(opm, c.ResolveArgs(tmplDir, testdata)...)
		// No credentials, no caches of the user's.
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_RUNTIME_DIR=" + home, "DOCKER_CONFIG=" + home, "TMPDIR=" + work}
		if c.Stdin != "" {
			data, err := os.ReadFile(filepath.Join(tmplDir, c.Stdin))
			if err != nil {
				return err
			}
			cmd.Stdin = bytes.NewReader(data)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		exit := 0
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			exit = ee.ExitCode()
		}
		o := tmplfixture.Normalize(stdout.Bytes(), srv.Host)
		sum := sha256.Sum256(o)
		r := tmplfixture.Result{Name: c.Name, Exit: exit, Stdout: hex.EncodeToString(sum[:]), Len: len(o),
			Stderr: tmplfixture.NormalizeStderr(stderr.Bytes(), srv.Host, tmplDir, testdata)}
		results = append(results, r)
		if len(o) > 0 && len(o) < 16<<10 {
			if err := os.WriteFile(filepath.Join(outDir, "out", c.Name), o, 0o644); err != nil {
				return err
			}
		}
		if fullDir != "" {
			if err := os.MkdirAll(fullDir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(fullDir, c.Name), o, 0o644); err != nil {
				return err
			}
		}
		fmt.Printf("%-70s exit %d  %7d bytes  %s\n", c.Name, exit, len(o), r.Stderr)
	}
	data, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(outDir, "results.json"), append(data, '\n'), 0o644)
}
