#!/usr/bin/env bash
# The project's test command (the README's): go test -race ./...
#
# Go's race detector needs cgo, and so a C compiler. On a machine that has
# only Go (a bare Debian image, say) the tests run without it, and this
# says so loudly; everywhere else they run with it. Extra arguments go to
# go test (e.g. hack/test.sh -run TestServe).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "$(go env CGO_ENABLED)" == "1" ]]; then
	exec go test -race "$@" ./...
fi
echo "test.sh: cgo is off (no C compiler: $(go env CC) not found), so the race detector cannot run;" >&2
echo "test.sh: running go test WITHOUT -race. Install gcc to test with it." >&2
exec go test "$@" ./...
