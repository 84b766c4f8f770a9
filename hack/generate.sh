#!/usr/bin/env bash
# Regenerates the Go code of the Registry API (pkg/api/*.pb.go) from
# proto/registry.proto with Go alone: every tool comes through Go's module
# system at a pinned version, so the output is the same byte for byte on
# every machine with Go, and nothing is installed on the system.
#
#   buf                 hack/tools/go.mod (`tool` directive): compiles the
#                       .proto files in pure Go and ships the well-known types
#   protoc-gen-go       the root go.mod (`tool` directive), so it always matches
#                       the google.golang.org/protobuf runtime the code links
#   protoc-gen-go-grpc  the root go.mod (`tool` directive)
#
# The plugins and their options are in hack/buf.gen.yaml.
#
# Usage:
#   hack/generate.sh           rewrite pkg/api/*.pb.go    (make generate)
#   hack/generate.sh --check   generate into a temporary directory and fail,
#                              with a diff, unless pkg/api is up to date
#                              (make verify; needs neither git nor a clean tree)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

check=false
case "${1:-}" in
"") ;;
--check) check=true ;;
*)
	echo "usage: hack/generate.sh [--check]" >&2
	exit 2
	;;
esac

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
mkdir -p "${tmp}/bin" "${tmp}/out"

export GOWORK=off
go build -o "${tmp}/bin/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
go build -o "${tmp}/bin/protoc-gen-go-grpc" google.golang.org/grpc/cmd/protoc-gen-go-grpc
(cd hack/tools && go build -o "${tmp}/bin/buf" github.com/bufbuild/buf/cmd/buf)

# buf writes to <-o>/pkg/api (the template's out); its cache stays in tmp.
PATH="${tmp}/bin:${PATH}" BUF_CACHE_DIR="${tmp}/cache" \
	"${tmp}/bin/buf" generate --template hack/buf.gen.yaml -o "${tmp}/out"

generated=("${tmp}"/out/pkg/api/*.pb.go)
[[ -e "${generated[0]}" ]] || {
	echo "generate.sh: buf generated no Go files" >&2
	exit 1
}

if ! ${check}; then
	rm -f pkg/api/*.pb.go
	cp "${generated[@]}" pkg/api/
	exit 0
fi

stale=0
for f in "${generated[@]}"; do
	name="pkg/api/$(basename "${f}")"
	if [[ ! -f "${name}" ]]; then
		echo "generate.sh: ${name} is missing" >&2
		stale=1
	elif ! diff -u "${name}" "${f}" >&2; then
		stale=1
	fi
done
for f in pkg/api/*.pb.go; do
	[[ -e "${f}" ]] || continue
	if [[ ! -f "${tmp}/out/${f}" ]]; then
		echo "generate.sh: ${f} is no longer generated" >&2
		stale=1
	fi
done
if [[ "${stale}" != 0 ]]; then
	echo "generate.sh: generated code in pkg/api is out of date: run make generate" >&2
	exit 1
fi
echo "generate.sh: pkg/api is up to date"
