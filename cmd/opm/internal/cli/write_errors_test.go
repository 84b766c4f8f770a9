package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// fullWriter fails every write, as standard output redirected to a full
// disk (/dev/full) does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestAnswerNotWritten: an answer that cannot be written is an error, with
// exit code 2, never that of an answer (diff --check: 1 is a violation;
// query install: 1 is "not installable"; query updates --olm v1: 1 is
// "does not resolve"), and never 0: every output of query and diff, text
// and JSON.
func TestAnswerNotWritten(t *testing.T) {
	old, new := filepath.Join(goldenRoot, "updates"), filepath.Join(goldenRoot, "diff", "new")
	community := filepath.Join(goldenRoot, "install", "community")
	v1 := filepath.Join(goldenRoot, "olmv1", "catalog")
	for _, args := range [][]string{
		{"alpha", "diff", old, old},
		{"alpha", "diff", old, old, "--check"},
		{"alpha", "diff", old, new, "--check"},
		{"alpha", "diff", old, new, "-o", "json"},
		{"alpha", "diff", old, new, "--check", "-o", "json"},
		{"alpha", "diff", old, new, "--check", "-o", "markdown"},
		{"alpha", "query", "install", community, "-p", "etcd"},
		{"alpha", "query", "install", community, "-p", "etcd", "-o", "json"},
		{"alpha", "query", "install", community, "-p", "broken"},
		{"alpha", "query", "install", community, "-p", "broken", "-o", "json"},
		{"alpha", "query", "install", community, "--all"},
		{"alpha", "query", "install", community, "--all", "-o", "json"},
		{"alpha", "query", "install", v1, "-p", "own-namespace", "--olm", "v1"},
		{"alpha", "query", "install", v1, "-p", "own-namespace", "--olm", "v1", "-o", "json"},
		{"alpha", "query", "install", v1, "-p", "rollback", "--olm", "both"},
		{"alpha", "query", "install", v1, "-p", "rollback", "--olm", "both", "-o", "json"},
		{"alpha", "query", "install", v1, "--all", "--olm", "v1"},
		{"alpha", "query", "install", v1, "--all", "--olm", "v1", "-o", "json"},
		{"alpha", "query", "install", v1, "--all", "--olm", "both"},
		{"alpha", "query", "install", v1, "--all", "--olm", "both", "-o", "json"},
		{"alpha", "query", "updates", old, "-p", "etcd", "--from", "etcdoperator.v0.9.0"},
		{"alpha", "query", "updates", old, "-p", "etcd", "--from", "etcdoperator.v0.9.0", "-o", "json"},
		{"alpha", "query", "updates", old, "-p", "etcd", "--all"},
		{"alpha", "query", "updates", old, "-p", "etcd", "--all", "-o", "json"},
		{"alpha", "query", "updates", v1, "-p", "skipper", "--from", "1.0.0", "-c", "stable", "--olm", "v1"},
		{"alpha", "query", "updates", v1, "-p", "skipper", "--from", "1.0.0", "-c", "stable", "--olm", "v1", "-o", "json"},
		{"alpha", "query", "updates", v1, "-p", "skipper", "--from", "1.0.0", "--olm", "both"},
		{"alpha", "query", "updates", v1, "-p", "skipper", "--from", "1.0.0", "--olm", "both", "-o", "json"},
	} {
		var errb bytes.Buffer
		code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: fullWriter{}, Err: &errb}, args)
		if code != 2 || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("%v: exit %d, want 2; stderr %q", args, code, errb.String())
		}
	}
}

// TestAnswerNotEncoded: an answer that cannot be encoded as JSON (a
// 5,000-deep dependency tree once exceeded encoding/json's nesting limit,
// and exited 1, "not installable") is an error with exit code 2, and
// nothing is written.
func TestAnswerNotEncoded(t *testing.T) {
	for _, v := range []any{math.NaN(), map[string]any{"f": func() {}}, json.RawMessage(`{"unclosed": [`)} {
		var out bytes.Buffer
		err := encodeAnswer(&out, v)
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code != 2 || !strings.Contains(err.Error(), "cannot write the answer as JSON") || out.Len() != 0 {
			t.Errorf("%#v: %v (%#v), wrote %q", v, err, ee, out.String())
		}
	}
}
