#!/usr/bin/env bash
# The project's static checks, with Go alone (no git, no OS packages):
#
#   fmt        gofmt -l over every .go file outside testdata/
#   vet        go vet ./...
#   lint       staticcheck, pinned below and fetched through the module proxy
#   lean       the lean opm (-tags opm_lean: make build's bin/opm) builds
#              and passes staticcheck; its packages' tests are the
#              full build's, so their test files are left out
#   generated  pkg/api is what hack/generate.sh makes of proto/
#
# Usage: hack/verify.sh [CHECK...]   (all five when none is named; wired as
# `make verify`, `make fmt`, `make vet`, `make lint`, `make check-generated`)
set -euo pipefail

STATICCHECK="honnef.co/go/tools/cmd/staticcheck@v0.8.2"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

check_fmt() {
	local out
	out="$(find . -name '*.go' -not -path '*/testdata/*' -not -path './.git/*' -print0 | xargs -0 gofmt -l)"
	if [[ -n "${out}" ]]; then
		echo "gofmt needed:" >&2
		echo "${out}" >&2
		return 1
	fi
}

check_vet() { go vet ./...; }

check_lint() { go run "${STATICCHECK}" ./...; }

check_generated() { ./hack/generate.sh --check; }

# Only cmd/opm and alpha/action have files that differ in the lean build
# (alpha/action/full.go).
check_lean() {
	go build -tags opm_lean -o /dev/null ./cmd/opm
	go run "${STATICCHECK}" -tags opm_lean -tests=false ./cmd/opm/... ./alpha/action/...
}

checks=("$@")
[[ ${#checks[@]} -gt 0 ]] || checks=(fmt vet lint lean generated)
for c in "${checks[@]}"; do
	case "${c}" in
	fmt | vet | lint | lean | generated) ;;
	*)
		echo "verify.sh: unknown check ${c}; want fmt, vet, lint, lean or generated" >&2
		exit 2
		;;
	esac
done
for c in "${checks[@]}"; do
	start=${SECONDS}
	"check_${c}"
	echo "verify.sh: ${c} ok ($((SECONDS - start)) s)"
done
