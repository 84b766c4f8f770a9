#!/usr/bin/env bash
# The project's static checks, with Go alone (no git, no OS packages):
#
#   fmt        gofmt -l over every .go file outside testdata/
#   vet        go vet ./...
#   lint       staticcheck, pinned below and fetched through the module proxy
#   generated  pkg/api is what hack/generate.sh makes of proto/
#
# Usage: hack/verify.sh [CHECK...]   (all four when none is named; wired as
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

checks=("$@")
[[ ${#checks[@]} -gt 0 ]] || checks=(fmt vet lint generated)
for c in "${checks[@]}"; do
	case "${c}" in
	fmt | vet | lint | generated) ;;
	*)
		echo "verify.sh: unknown check ${c}; want fmt, vet, lint or generated" >&2
		exit 2
		;;
	esac
done
for c in "${checks[@]}"; do
	start=${SECONDS}
	"check_${c}"
	echo "verify.sh: ${c} ok ($((SECONDS - start)) s)"
done
