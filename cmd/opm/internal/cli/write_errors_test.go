package cli

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// fullWriter fails every write, as standard output redirected to a full
// disk (/dev/full) does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestAnswerNotWritten: an answer that cannot be written is an error, with
// the exit code of an error, never that of an answer (diff --check: 1 is a
// violation; query install: 1 is "not installable"), and never 0.
func TestAnswerNotWritten(t *testing.T) {
	old, new := filepath.Join(goldenRoot, "updates"), filepath.Join(goldenRoot, "diff", "new")
	community := filepath.Join(goldenRoot, "install", "community")
	v1 := filepath.Join(goldenRoot, "olmv1", "catalog")
	for _, tc := range []struct {
		code int
		args []string
	}{
		{2, []string{"alpha", "diff", old, old, "--check"}},
		{2, []string{"alpha", "diff", old, new, "--check"}},
		{2, []string{"alpha", "diff", old, new, "-o", "json"}},
		{2, []string{"alpha", "diff", old, new, "--check", "-o", "markdown"}},
		{2, []string{"alpha", "query", "install", community, "-p", "etcd"}},
		{2, []string{"alpha", "query", "install", community, "-p", "broken"}},
		{2, []string{"alpha", "query", "install", community, "--all"}},
		{2, []string{"alpha", "query", "install", community, "--all", "-o", "json"}},
		{2, []string{"alpha", "query", "install", v1, "-p", "own-namespace", "--olm", "v1"}},
		{2, []string{"alpha", "query", "install", v1, "-p", "rollback", "--olm", "both"}},
		{2, []string{"alpha", "query", "install", v1, "--all", "--olm", "both"}},
		{1, []string{"alpha", "query", "updates", old, "-p", "etcd", "--all"}},
		{1, []string{"alpha", "query", "updates", v1, "-p", "skipper", "--from", "1.0.0", "-c", "stable", "--olm", "v1"}},
		{1, []string{"alpha", "query", "updates", v1, "-p", "skipper", "--from", "1.0.0", "--olm", "both"}},
	} {
		var errb bytes.Buffer
		code := Main(context.Background(), Streams{In: strings.NewReader(""), Out: fullWriter{}, Err: &errb}, tc.args)
		if code != tc.code || !strings.Contains(errb.String(), "no space left on device") {
			t.Errorf("%v: exit %d, want %d; stderr %q", tc.args, code, tc.code, errb.String())
		}
	}
}
