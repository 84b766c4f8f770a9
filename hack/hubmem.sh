#!/usr/bin/env bash
# hubmem.sh NAME=DIR...: the peak RSS of `opm alpha hub` over the catalogs
# against that of `opm serve DIR --http-addr` for each catalog alone, each
# process asked for its package lists once ready (docs/hub.md, Figures).
# OPM is the opm binary (default: bin/opm).
set -euo pipefail
OPM=${OPM:-bin/opm}
[ $# -gt 0 ] || { echo "usage: $0 NAME=DIR..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure PORT LABEL PATHS -- CMD...: runs CMD under /usr/bin/time, waits
# for /readyz, GETs each path, prints VmHWM and VmRSS, stops it with
# SIGTERM and prints time's figures.
measure() {
  local port=$1 label=$2 paths=$3
  shift 4
  /usr/bin/time -f "%e s %M KB" -o "$tmp/time" "$@" >"$tmp/log" 2>&1 &
  local tp=$! pid=""
  while [ -z "$pid" ]; do sleep 0.1; pid=$(pgrep -P $tp || true); done
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "localhost:$port/readyz")" = 200 ]; do
    kill -0 $pid 2>/dev/null || { cat "$tmp/log" >&2; exit 1; }
    sleep 0.2
  done
  for p in $paths; do curl -s -o /dev/null "localhost:$port$p"; done
  local hwm rss
  hwm=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
  rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
  kill -TERM $pid
  wait $tp || true
  echo "$label: VmHWM $hwm KB, VmRSS $rss KB after the requests; $(cat "$tmp/time") (wall, peak RSS)"
  peak=$(awk '{print $(NF-1)}' "$tmp/time")
}

sum=0
args=()
paths="/api/v1/packages?limit=all"
for c in "$@"; do
  name=${c%%=*} dir=${c#*=}
  measure 18941 "serve $name" "/api/v1/packages?limit=all" -- "$OPM" serve "$dir" -p 50071 --http-addr 127.0.0.1:18941
  sum=$((sum + peak))
  args+=(--catalog "$name=$dir")
  paths="$paths /catalogs/$name/api/v1/packages?limit=all"
done
echo "the serve processes' peaks: $sum KB in all"
measure 18942 hub "$paths" -- "$OPM" alpha hub "${args[@]}" --http-addr 127.0.0.1:18942
echo "hub / serves: $((peak * 100 / sum)) %"
