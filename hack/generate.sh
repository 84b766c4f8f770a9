#!/usr/bin/env bash
# Regenerates the Go code of the Registry API (pkg/api/*.pb.go) from
# proto/registry.proto with pinned tools, so that the output is the same
# byte for byte on every machine:
#
#   protoc              Debian's protobuf-compiler (see PROTOC_VERSION);
#                       hack/install-protoc.sh installs it.
#   protoc-gen-go       the version go.mod pins for google.golang.org/protobuf
#   protoc-gen-go-grpc  PROTOC_GEN_GO_GRPC_VERSION below
#
# Usage: hack/generate.sh   (wired as `make generate`; `make verify` runs it
# and then `git diff --exit-code pkg/api`).
set -euo pipefail

# Keep in sync with hack/install-protoc.sh.
PROTOC_VERSION="3.21.12"
PROTOC_GEN_GO_GRPC_VERSION="v1.6.2"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${root}"

die() {
	echo "generate.sh: $*" >&2
	exit 1
}

install_hint="install it with hack/install-protoc.sh (Debian/Ubuntu: apt-get install protobuf-compiler=${PROTOC_VERSION}-3 libprotobuf-dev=${PROTOC_VERSION}-3)"

command -v protoc >/dev/null 2>&1 || die "protoc not found; ${install_hint}"
have="$(protoc --version)"
[[ "${have}" == "libprotoc ${PROTOC_VERSION}" ]] ||
	die "protoc is '${have}', want 'libprotoc ${PROTOC_VERSION}'; ${install_hint}"

tools="$(mktemp -d)"
trap 'rm -rf "${tools}"' EXIT

# The well-known types (google/protobuf/struct.proto) ship in libprotobuf-dev.
printf 'syntax = "proto3";\nimport "google/protobuf/struct.proto";\n' >"${tools}/wkt.proto"
protoc -I "${tools}" --descriptor_set_out=/dev/null "${tools}/wkt.proto" 2>/dev/null ||
	die "protoc cannot find google/protobuf/struct.proto; ${install_hint}"

# protoc-gen-go resolves through go.mod, so it always matches the runtime.
go build -o "${tools}/protoc-gen-go" google.golang.org/protobuf/cmd/protoc-gen-go
# protoc-gen-go-grpc is a separate module, pinned here by version.
env GOBIN="${tools}" GOFLAGS=-mod=mod GOWORK=off \
	go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@${PROTOC_GEN_GO_GRPC_VERSION}"

rm -f pkg/api/*.pb.go
protoc \
	-I proto \
	--plugin=protoc-gen-go="${tools}/protoc-gen-go" \
	--plugin=protoc-gen-go-grpc="${tools}/protoc-gen-go-grpc" \
	--go_out=pkg/api --go_opt=paths=source_relative \
	--go-grpc_out=pkg/api --go-grpc_opt=paths=source_relative \
	proto/registry.proto
