package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runServeCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stderr bytes.Buffer
	var g globalOptions
	cmd := newServeCmd(Streams{Out: &bytes.Buffer{}, Err: &stderr}, &g)
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&stderr)
	err := cmd.ExecuteContext(t.Context())
	return stderr.String(), err
}

func TestServeCommand(t *testing.T) {
	t.Parallel()
	cat := t.TempDir()
	if err := os.WriteFile(filepath.Join(cat, "c.json"), []byte(`{"schema":"olm.package","name":"p","defaultChannel":"c"}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"p.v1"}]}
{"schema":"olm.bundle","name":"p.v1","package":"p","image":"x.io/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(t.TempDir(), "cache")
	tl := filepath.Join(t.TempDir(), "tl")
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
		wantLog string
	}{
		{"enforcement needs a cache dir", []string{cat, "--cache-enforce-integrity", "-t", tl}, "--cache-dir must be specified", ""},
		{"cache-only builds", []string{cat, "--cache-dir", cacheDir, "--cache-only", "-t", tl}, "", "level=info msg=\"building cache\""},
		{"cache-only checks with explicit enforcement", []string{cat, "--cache-dir", cacheDir, "--cache-only", "--cache-enforce-integrity", "-t", tl, "--debug"}, "", "found a valid cache"},
		{"missing catalog", []string{filepath.Join(cat, "missing"), "-t", tl}, "catalog: stat", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs, err := runServeCmd(t, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if got, _ := os.ReadFile(tl); !strings.Contains(string(got), tc.wantErr) {
					t.Errorf("termination log %q", got)
				}
				return
			}
			if err != nil || !strings.Contains(logs, tc.wantLog) {
				t.Errorf("error %v, logs lack %q:\n%s", err, tc.wantLog, logs)
			}
		})
	}
}
