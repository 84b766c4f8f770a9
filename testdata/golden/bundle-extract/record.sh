#!/bin/sh
# Records upstream opm's `alpha bundle extract` on every case of cases.txt,
# against the in-process API server of hack/kubefake. Run from the
# repository root: OPM=/tmp/upstream/opm sh testdata/golden/bundle-extract/record.sh
# Writes, per case, NAME.json (every ConfigMap the server holds afterwards,
# normalised: no uid, resourceVersion, creationTimestamp) and NAME.stderr
# (opm's standard error with times as T, paths as {testdata} and
# {kubeconfig}, cobra's usage block cut, then "exit N").
set -eu
OPM=${OPM:-/tmp/upstream/opm}
here=testdata/golden/bundle-extract
td=$(pwd)/testdata
kubefake=$(mktemp -d)/kubefake
go build -o "$kubefake" ./hack/kubefake
tab=$(printf '\t')
grep -v '^#' "$here/cases.txt" | while IFS="$tab" read -r name seed env args; do
	[ -n "$name" ] || continue
	set --
	[ "$seed" = - ] || set -- "$@" -seed "testdata/bundle-extract/seeds/$seed.json"
	if [ "$env" != - ]; then
		old_ifs=$IFS; IFS=,
		for e in $env; do set -- "$@" -env "$e"; done
		IFS=$old_ifs
	fi
	args=$(printf '%s' "$args" | sed "s|{testdata}|$td|g")
	# shellcheck disable=SC2086 # the arguments are split on spaces
	env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT -u CONTAINER_IMAGE \
		"$kubefake" "$@" -- "$OPM" alpha bundle extract $args >"$here/$name.json" 2>"$here/$name.stderr.raw"
	sed -e 's/^time="[^"]*"/time="T"/' -e "s|$td|{testdata}|g" \
		-e 's|/tmp/kubefake[0-9]*/kubeconfig|{kubeconfig}|g' "$here/$name.stderr.raw" |
		awk '/^Usage:/ {skip=1} /^exit [0-9]+$/ {skip=0} !skip' >"$here/$name.stderr"
	rm "$here/$name.stderr.raw"
done
rm -r "$(dirname "$kubefake")"
