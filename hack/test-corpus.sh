#!/usr/bin/env bash
# The corpus run (make test-corpus; CI runs it after hack/test.sh): the
# whole suite built with the corpus tag and without -race, where every
# differential test covers its whole corpus (every real catalog, every
# recorded upstream case, every file, every mutant round) rather than the
# sample the race suite runs (internal/testutil/corpus.go,
# docs/tests.md). Extra arguments go to go test.
set -euo pipefail
cd "$(dirname "$0")/.."

exec go test -tags corpus -timeout 30m "$@" ./...
