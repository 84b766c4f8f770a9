#!/usr/bin/env bash
# The project's test command (the README's): go test -race ./...
#
# Go's race detector needs cgo, and so a C compiler. On a machine that has
# only Go (a bare Debian image, say) the tests run without it, and this
# says so loudly; everywhere else they run with it. Extra arguments go to
# go test (e.g. hack/test.sh -run TestServe).
#
# go test's own limit of 10 minutes per package is a wall clock that a
# slow or loaded machine can miss; the tests never depend on the
# machine's speed, so the limit here is only a hang guard (an argument
# -timeout given after it wins).
#
# The differential tests run a sample of their corpora here; the whole of
# them runs in hack/test-corpus.sh (docs/tests.md).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "$(go env CGO_ENABLED)" == "1" ]]; then
	exec go test -race -timeout 30m "$@" ./...
fi
echo "test.sh: cgo is off (no C compiler: $(go env CC) not found), so the race detector cannot run;" >&2
echo "test.sh: running go test WITHOUT -race. Install gcc to test with it." >&2
exec go test -timeout 30m "$@" ./...
