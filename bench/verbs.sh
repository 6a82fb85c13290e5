#!/bin/sh
# SPDX-License-Identifier: MIT
# The wall-clock half of bench/verbs: starts a private two-host fabric
# (two HCAs on one 4x EDR switch, the virtual half's fabric), runs
# bench-verbs-wall against it (references and both verbs ends, one run),
# and stops it. Options go to bench-verbs-wall ('--help'); the first
# may be '--build DIR' (default: build), '--clock quiesce|free' (the
# fabric's clock, default quiesce as 'ibemu up'), and '--strace' counts the
# daemon's system calls during the run (strace -c -f, printed after the
# figures).
#
#   bench/verbs.sh                 # about 10 s
#   bench/verbs.sh --clock free --quick
set -eu

BUILD=build
STRACE=
CLOCK=quiesce
while [ $# -gt 0 ]; do
	case "$1" in
	--build) BUILD=$2; shift 2 ;;
	--clock) CLOCK=$2; shift 2 ;;
	--strace) STRACE=1; shift ;;
	*) break ;;
	esac
done
IBEMU=$(cd "$BUILD" && pwd)/bin/ibemu
WALL=$(cd "$BUILD" && pwd)/bench/bench-verbs-wall
for f in "$IBEMU" "$WALL"; do
	[ -x "$f" ] || { echo "verbs.sh: $f missing: build it first" >&2; exit 1; }
done

DIR=$(mktemp -d /tmp/bench-verbs.XXXXXX)
NAME=bench-verbs-$$
export IBEMU_RUNTIME_DIR="$DIR/run"
unset IBEMU_FABRIC IBEMU_HOST IBEMU_SESSION_SOCKET
mkdir "$IBEMU_RUNTIME_DIR"
cat >"$DIR/fabric.yaml" <<EOF
name: bench-verbs
defaults: {width: 4x, speed: EDR, cable_length: 2m}
switches:
  - {name: sw, ports: 36}
hcas:
  - {name: hca1}
  - {name: hca2}
links:
  - [sw:1, hca1:1]
  - [sw:2, hca2:1]
EOF

STRACE_PID=
cleanup() {
	[ -n "$STRACE_PID" ] && kill -INT "$STRACE_PID" 2>/dev/null || true
	"$IBEMU" down --fabric "$NAME" >/dev/null 2>&1 || true
	rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

"$IBEMU" up "$DIR/fabric.yaml" --name "$NAME" --clock "$CLOCK" ${BENCH_UP_ARGS:-} >/dev/null
echo "fabric clock: $CLOCK"
if [ -n "$STRACE" ]; then
	DPID=$(cat "$IBEMU_RUNTIME_DIR/$NAME/pid")
	strace -c -f -p "$DPID" -o "$DIR/strace.txt" &
	STRACE_PID=$!
	sleep 0.5
fi
"$WALL" "$@" run "$IBEMU" "$NAME"
if [ -n "$STRACE" ]; then
	kill -INT "$STRACE_PID"
	wait "$STRACE_PID" || true
	STRACE_PID=
	echo
	echo "daemon system calls during the run (strace -c -f):"
	head -n 16 "$DIR/strace.txt"
fi
