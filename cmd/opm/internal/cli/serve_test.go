package cli

import (
	"bytes"
	"context"
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

// TestServeCacheHTTPNeedsCacheDir: --cache-http stores the JSON lines in
// a cache kept in --cache-dir; without one (the cache is a temporary file,
// gone when opm exits) it would do nothing, so it is refused in upstream's
// words for --cache-enforce-integrity, before anything is loaded or served
// (the context is cancelled: a run that went on would stop before serving
// and return no error).
func TestServeCacheHTTPNeedsCacheDir(t *testing.T) {
	t.Parallel()
	cat := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, args := range [][]string{
		{cat, "--cache-http", "-p", "0"},
		{cat, "--cache-http", "--cache-only"},
		{cat, "--cache-http", "--http-addr", "127.0.0.1:0", "-p", "0"},
	} {
		var g globalOptions
		var stderr bytes.Buffer
		cmd := newServeCmd(Streams{Out: &bytes.Buffer{}, Err: &stderr}, &g)
		cmd.SetArgs(append(args, "-t", ""))
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&stderr)
		err := cmd.ExecuteContext(ctx)
		if err == nil || err.Error() != "--cache-dir must be specified with --cache-http" {
			t.Errorf("%v: error %v, want --cache-dir must be specified with --cache-http", args, err)
		}
	}
	// With --cache-dir it builds the cache with the lines.
	cacheDir := filepath.Join(t.TempDir(), "cache")
	if err := os.WriteFile(filepath.Join(cat, "c.json"), []byte(`{"schema":"olm.package","name":"p","defaultChannel":"c"}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"p.v1"}]}
{"schema":"olm.bundle","name":"p.v1","package":"p","image":"x.io/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if logs, err := runServeCmd(t, cat, "--cache-dir", cacheDir, "--cache-only", "--cache-http", "-t", ""); err != nil {
		t.Fatalf("%v\n%s", err, logs)
	}
}

// TestServeFlagsThatDoNothing: the HTTP flags without --http-addr (nothing
// is served over HTTP) and --cache-only without --cache-dir (the cache
// would be a temporary file, built and removed) are refused in upstream's
// words for --cache-enforce-integrity without --cache-dir, with its exit
// code, 1, before anything is loaded (issue 27: they passed silently). The
// context is cancelled: a run that went on would stop before serving and
// exit 0.
func TestServeFlagsThatDoNothing(t *testing.T) {
	t.Parallel()
	cat := filepath.Join(goldenRoot, "example")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--http-tls-cert", "c.pem", "--http-tls-key", "k.pem"}, "--http-addr must be specified with --http-tls-cert"},
		{[]string{"--http-tls-key", "k.pem"}, "--http-addr must be specified with --http-tls-key"},
		{[]string{"--http-catalog-name", "c"}, "--http-addr must be specified with --http-catalog-name"},
		{[]string{"--cache-only"}, "--cache-dir must be specified with --cache-only"},
	} {
		var out, errb bytes.Buffer
		code := Main(ctx, Streams{In: strings.NewReader(""), Out: &out, Err: &errb}, append([]string{"serve", cat, "-p", "0", "-t", ""}, tc.args...))
		if code != 1 || !strings.Contains(errb.String(), "level=fatal msg=\""+tc.want+"\"") || out.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 1, %q", tc.args, code, errb.String(), tc.want)
		}
	}
	// With --http-addr they are taken (the run stops before serving:
	// the context is cancelled).
	var errb bytes.Buffer
	if code := Main(ctx, Streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb},
		[]string{"serve", cat, "-p", "0", "-t", "", "--http-addr", "127.0.0.1:0", "--http-catalog-name", "c"}); strings.Contains(errb.String(), "must be specified") {
		t.Errorf("with --http-addr: exit %d, %s", code, errb.String())
	}
}
