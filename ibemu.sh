#!/bin/sh
# SPDX-License-Identifier: MIT
# Set-up and checks for ibemu on Debian 12:
#   ./ibemu.sh demo   install what is missing, build, start the default fabric,
#                     bring it up with ibemu-sm, run verbs jobs on it (Debian's
#                     ibv_rc_pingpong, examples/ under 'ibemu run'), show it,
#                     stop it
#   ./ibemu.sh test   install what is missing, build, run the whole test suite
#                     (plain build, then ASan+UBSan build, the threaded tests
#                     under ThreadSanitizer, then the fuzzers): what CI runs
#   ./ibemu.sh test --quick    the plain build and its tests alone (about two
#                     minutes: the developer's loop)
#   ./ibemu.sh deps | build    the first steps alone
set -eu

cd "$(dirname "$0")"
JOBS=$(nproc 2>/dev/null || echo 2)

# What ibemu builds with, tests with, and runs against (README: Dependencies).
PACKAGES="build-essential cmake pkg-config clang clang-format libclang-rt-14-dev
libuv1-dev libyaml-dev libibumad-dev libibverbs-dev libibmad-dev libcunit1-dev
opensm infiniband-diags ibverbs-utils librdmacm-dev rdmacm-utils ibsim-utils
python3 python3-yaml librsvg2-bin perftest openmpi-bin libopenmpi-dev libucx0
ucx-utils libfabric-bin"

say() { printf '\n== %s\n' "$*"; }

deps() {
	missing=""
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	say "installing:$missing"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
		--no-install-recommends $missing
}

build() {
	say "building (build/)"
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBEMU_WERROR=ON \
		>/dev/null
	cmake --build build -j "$JOBS"
}

# Waits (up to 10 s) until a TCP socket listens on port $1.
wait_listening() {
	hex=$(printf ':%04X ' "$1")
	for _ in $(seq 100); do
		cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
			awk '$4 == "0A" { print $2 " " }' | grep -q "$hex" && return 0
		sleep 0.1
	done
	return 1
}

demo() {
	deps
	build
	ibemu=build/bin/ibemu
	fabric=ibemu-demo
	$ibemu down --fabric $fabric >/dev/null 2>&1 || true
	osm=$(mktemp -d)
	# Stop the demo fabric and remove the demo's files however this ends.
	trap '$ibemu down --fabric $fabric >/dev/null 2>&1 || true; rm -rf "$osm"' \
		EXIT INT TERM
	say "ibemu up topologies/fat-tree-2l-36.yaml --name $fabric" \
		"(the daemon, then ibemu-sm: discovery, LIDs, LFTs, Active)"
	$ibemu up topologies/fat-tree-2l-36.yaml --name $fabric
	say "ibemu status"
	$ibemu --fabric $fabric status
	say "ibemu nodes --type switch"
	$ibemu --fabric $fabric nodes --type switch
	say "ibemu ports leaf01 (Active, LIDs from ibemu-sm)"
	$ibemu --fabric $fabric ports leaf01
	say "ibemu exec --host hca05 -- sminfo (the real tool asks the SM)"
	$ibemu --fabric $fabric exec --host hca05 -- sminfo
	lid1=$($ibemu --fabric $fabric ports hca01 | awk 'NR == 2 { print $4 }')
	lid36=$($ibemu --fabric $fabric ports hca36 | awk 'NR == 2 { print $4 }')
	say "ibemu exec --host hca05 -- saquery -p --slid $lid1 --dlid $lid36" \
		"(a PathRecord from ibemu-sm's SA)"
	$ibemu --fabric $fabric exec --host hca05 -- saquery -p \
		--slid "$lid1" --dlid "$lid36"
	say "ibemu exec -- ibnetdiscover (first 14 lines)"
	$ibemu --fabric $fabric exec -- ibnetdiscover | head -n 14
	say "ibemu exec -- smpquery -D nodedesc 0,1,7"
	$ibemu --fabric $fabric exec -- smpquery -D nodedesc 0,1,7
	say "ibemu route hca01 hca36 (through the LFTs ibemu-sm programmed)"
	$ibemu --fabric $fabric route hca01 hca36
	say "ibemu exec --host hca01 -- ibv_devinfo (Debian's, through ibemu's libibverbs)"
	$ibemu --fabric $fabric exec --host hca01 -- ibv_devinfo
	say "ibv_rc_pingpong -t between hca01 and hca36 (Debian's, unmodified;" \
		"completion timestamps count nanoseconds of virtual time)"
	$ibemu --fabric $fabric exec --host hca01 -- ibv_rc_pingpong -t \
		-p 18515 -n 200 >"$osm/pingpong-server.txt" 2>&1 &
	server=$!
	wait_listening 18515
	$ibemu --fabric $fabric exec --host hca36 -- ibv_rc_pingpong -t \
		-p 18515 -n 200 localhost
	wait $server
	say "ibemu counters --top 5 (the pingpong's packets on its route)"
	$ibemu --fabric $fabric counters --top 5
	say "ibemu run -n 2 -- examples/pingpong -t write (examples/: plain" \
		"verbs and the bootstrap of ibemu.h; two ranks on two leaves," \
		"one-way latency in virtual time)"
	$ibemu --fabric $fabric counters --reset >/dev/null
	$ibemu --fabric $fabric run -n 2 -- build/examples/pingpong -t write \
		-s 8:1048576 -n 100
	say "ibemu run -n 8 -- examples/allreduce (a ring of 8 ranks, one per" \
		"HCA spread over the leaves; every sum checked)"
	$ibemu --fabric $fabric run -n 8 -- build/examples/allreduce -a ring \
		-s 1024:1048576 -n 10
	if [ -x build/examples/mpi-latency ]; then
		say "ibemu run --mpi -n 2 -- examples/mpi-latency (Debian's Open" \
			"MPI, unmodified, over its openib BTL; MPI_Wtime reads" \
			"virtual time)"
		OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,openib \
			$ibemu --fabric $fabric run --mpi -n 2 -- \
			build/examples/mpi-latency -m 1:4096 -i 50 -x 5
	fi
	say "ibemu counters --top 5 (what the runs left in the PMA counters)"
	$ibemu --fabric $fabric counters --top 5
	say "ibemu links (first 8)"
	$ibemu --fabric $fabric links | head -n 9
	say "ibemu traffic incast --victims --duration 5ms --backlog 4 --cc off" \
		"(35 hosts into hca01; victim flows share their sources)"
	$ibemu --fabric $fabric traffic incast --victims --duration 5ms \
		--backlog 4 --cc off --top 3
	say "the same with congestion control (IBA Annex A10), as ibemu-sm" \
		"configured it: victims get their link back"
	$ibemu --fabric $fabric traffic incast --victims --duration 5ms \
		--backlog 4 --cc on --top 3
	say "ibemu cc leaf01:1 (the hotspot's switch port marked FECN)"
	$ibemu --fabric $fabric cc leaf01:1
	say "ibemu counters --top 5 (what the study left in the PMA counters)"
	$ibemu --fabric $fabric counters --top 5
	say "ibemu link down spine01:1 (ibemu-sm, told by Trap 128, routes" \
		"around it)"
	$ibemu --fabric $fabric link down spine01:1
	sleep 1
	$ibemu --fabric $fabric route hca01 hca36
	$ibemu --fabric $fabric link up spine01:1
	say "ibemu counters hca01"
	$ibemu --fabric $fabric counters hca01
	say "ibemu exec --host hca02 -- perfquery -x $lid1 1 (hca01's, by MAD)"
	$ibemu --fabric $fabric exec --host hca02 -- perfquery -x "$lid1" 1 |
		grep -E 'PortXmitData|PortRcvData|PortXmitPkts|PortRcvPkts'
	say "ibemu topo gen torus --dims 2x2 (a generated fabric as YAML)"
	$ibemu topo gen torus --dims 2x2
	say "ibemu down"
	$ibemu down --fabric $fabric
	rm -rf "$osm"
	trap - EXIT INT TERM
	say "demo done"
}

test_suite() {
	deps
	build
	say "tests (plain build)"
	(cd build && ctest -j "$JOBS" --output-on-failure --timeout 900)
	if [ "${1:-}" = --quick ]; then
		say "quick tests passed (CI runs the sanitizers and fuzzers too)"
		return 0
	fi
	say "tests under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)"
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DIBEMU_SANITIZE=ON \
		-DIBEMU_WERROR=ON >/dev/null
	cmake --build build-asan -j "$JOBS"
	(cd build-asan && ctest -j "$JOBS" --output-on-failure --timeout 900)
	say "the client libraries under ThreadSanitizer: the tests labelled" \
		"'threads' (build-tsan/)"
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DIBEMU_TSAN=ON -DIBEMU_WERROR=ON >/dev/null
	cmake --build build-tsan -j "$JOBS"
	# One at a time: integration.time's threads scenario holds a sleep of
	# 5 ms under the daemon's grace period, which a loaded host stretches.
	(cd build-tsan && ctest -L '^threads$' --output-on-failure --timeout 900)
	say "fuzzing the loaders, MAD decoders, agents, session protocol and" \
		"verbs rings with libFuzzer (build-fuzz/)"
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug \
		-DIBEMU_SANITIZE=ON -DIBEMU_FUZZ=ON -DIBEMU_WERROR=ON >/dev/null
	cmake --build build-fuzz -j "$JOBS" --target fuzz-all
	(cd build-fuzz && ctest -R '^fuzz\.' --output-on-failure --timeout 900)
	say "all tests passed"
}

usage() {
	echo "usage: $0 demo|test [--quick]|deps|build" >&2
	exit 2
}

case "${1:-}" in
deps) deps ;;
build) deps && build ;;
demo) demo ;;
test)
	case "${2:-}" in
	"" | --quick) test_suite "${2:-}" ;;
	*) usage ;;
	esac
	;;
*) usage ;;
esac
