#!/usr/bin/env bash
# Installs Debian's chromium package when no Chromium is on the PATH, for
# the web page's browser test (pkg/httpserver/ui). The version is the
# distribution's: never pinned. Needs root or password-less sudo; without
# either it says so and the browser test skips with the same message.
set -euo pipefail
for b in chromium chromium-browser google-chrome; do
	if command -v "$b" >/dev/null 2>&1; then
		echo "found $(command -v "$b")"
		exit 0
	fi
done
run=()
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null 2>&1 || ! sudo -n true 2>/dev/null; then
		echo "Chromium is not installed and this user cannot install it: the browser test will skip" >&2
		exit 0
	fi
	run=(sudo -n)
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "Chromium is not installed and there is no apt-get: the browser test will skip" >&2
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
"${run[@]}" apt-get update -qq
"${run[@]}" apt-get install -y -qq chromium >/dev/null
chromium --version
