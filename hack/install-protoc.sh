#!/usr/bin/env bash
# Installs the protoc that hack/generate.sh is pinned to, from Debian's
# protobuf-compiler package (plus libprotobuf-dev for the well-known types
# such as google/protobuf/struct.proto). Does nothing when the right
# version is already installed. Needs apt-get; uses sudo only when not root
# and sudo exists. Used by CI.
set -euo pipefail

# Keep in sync with hack/generate.sh.
PROTOC_VERSION="3.21.12"
DEB_VERSION="${PROTOC_VERSION}-3"

if command -v protoc >/dev/null 2>&1 &&
	[[ "$(protoc --version)" == "libprotoc ${PROTOC_VERSION}" ]] &&
	[[ -f /usr/include/google/protobuf/struct.proto ]]; then
	echo "install-protoc.sh: protoc ${PROTOC_VERSION} already installed"
	exit 0
fi

command -v apt-get >/dev/null 2>&1 || {
	echo "install-protoc.sh: apt-get not found; install protoc ${PROTOC_VERSION} (libprotoc ${PROTOC_VERSION}) with the well-known .proto files by hand" >&2
	exit 1
}

sudo=()
if [[ "$(id -u)" != 0 ]]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "install-protoc.sh: not root and sudo not found" >&2
		exit 1
	fi
fi

"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	"protobuf-compiler=${DEB_VERSION}" "libprotobuf-dev=${DEB_VERSION}"

have="$(protoc --version)"
if [[ "${have}" != "libprotoc ${PROTOC_VERSION}" ]]; then
	echo "install-protoc.sh: installed protoc is '${have}', want 'libprotoc ${PROTOC_VERSION}'" >&2
	exit 1
fi
echo "install-protoc.sh: installed ${have}"
