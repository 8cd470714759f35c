# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# shellcheck disable=SC2317  # the tests are called indirectly, as "t_$name"
#
# End-to-end tests against a real OpenTelemetry Collector, sourced by run.sh (which provides
# pass, fail, hp, start_workload, start_receiver, pprof, $WORK and the OTLP decoding arguments).
#
# The Collector is $COLLECTOR (default $OUTPUT/otelcol-hostprof, built by `make collector` with the
# Collector's builder: tests/collector/), run with tests/collector/config.yaml and
# --feature-gates=service.profilesSupport. Its OTLP receiver feeds two pipelines: the file
# exporter (OTLP/JSON lines) with the debug exporter, and an otlp_http exporter that forwards to
# the recording receiver (tests/receiver/http_receiver.py). What the Collector wrote is judged by
# tests/e2e/otlp_compare.py against what hostprof wrote itself of the same capture:
#   collector_http     `profile` over OTLP/HTTP (protobuf, gzip): the file exporter's profiles
#                      equal hostprof's own request (-o x.otlp.pb: resources and all their
#                      attributes, every stack with its sample attributes and value, windows,
#                      periods, mappings), and their stacks and totals equal the pprof file's
#   collector_grpc     the same over OTLP/gRPC (gzip) with --types cpu,wall and
#                      --otlp-sample-type samples: samples/count and wall/nanoseconds each equal
#                      the pprof file of their type
#   collector_json     the same over OTLP/HTTP with JSON bodies, --types cpu,offcpu,contention of
#                      a workload that fights over a mutex: cpu, off_cpu and contention each
#                      equal the pprof file of their type
#   collector_forward  the collector_http run's second pipeline: the Collector's own protobuf
#                      re-encoding, as the recording receiver got it (gzip, on
#                      /v1development/profiles), equals hostprof's own request
#   collector_links    otel_ctx_lib, whose samples serve OpenTelemetry spans: the file
#                      exporter keeps each sample's link (2 spans) and attributes, equal to
#                      hostprof's own request
#   collector_refusal  the forward pipeline's receiver is down: the Collector answers 503 with its
#                      own message, which hostprof reports after retrying until its deadline
#   collector_agent    `hostprof agent` (2 s windows, whole host) over OTLP/HTTP: every window
#                      reaches the file exporter, equal (stacks and totals) to the agent's pprof
#                      files of the same windows; a process started with OTEL_SERVICE_NAME has
#                      that service.name and its pid; the forwarded requests equal the file's
#                      profiles
#   collector_agent_grpc  the same over OTLP/gRPC (gzip), with sample_type samples
# A refused or dropped export fails the test with hostprof's error and the Collector's own log
# lines (warnings and errors).

COLLECTOR=${COLLECTOR:-$OUTPUT/otelcol-hostprof}
COL_HTTP_RAN=0
COL_HTTP_DIR=
COL_SELFTEST=

# free_ports N: N distinct free TCP ports of 127.0.0.1 on one line (all bound at once, so that
# the kernel cannot hand out one twice).
free_ports() {
	python3 -c '
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# start_collector DIR [FORWARD_URL]: starts the Collector, its file exporter writing DIR/file.json
# and its forwarding pipeline sending to a recording receiver in DIR/fwd (or to FORWARD_URL). Sets
# COL_PID, COL_HTTP and COL_GRPC (ports), or COL_ERR and returns 1.
start_collector() {
	local dir=$1 forward=${2:-}
	COL_ERR=
	COL_PID=
	mkdir -p "$dir"
	if [ ! -x "$COLLECTOR" ]; then
		COL_ERR="no Collector at $COLLECTOR: make collector builds it"
		return 1
	fi
	if [ -z "$COL_SELFTEST" ] && ! COL_SELFTEST=$(python3 "$E2E/otlp_compare.py" selftest 2>&1); then
		COL_ERR="otlp_compare.py fails its self-test: $COL_SELFTEST"
		COL_SELFTEST=
		return 1
	fi
	if [ -z "$forward" ]; then
		start_receiver "$dir/fwd"
		if [ -z "$RX_PORT" ]; then
			COL_ERR="the recording receiver did not start"
			return 1
		fi
		forward="http://127.0.0.1:$RX_PORT/v1development/profiles"
	fi
	read -r COL_HTTP COL_GRPC <<<"$(free_ports 2)"
	HP_COL_HTTP=$COL_HTTP HP_COL_GRPC=$COL_GRPC HP_COL_FILE=$dir/file.json \
		HP_COL_FORWARD="$forward" \
		"$COLLECTOR" --config "$ROOT/tests/collector/config.yaml" \
		--feature-gates=service.profilesSupport >"$dir/collector.log" 2>&1 &
	COL_PID=$!
	PIDS+=("$COL_PID")
	for _ in $(seq 200); do
		grep -q "Everything is ready" "$dir/collector.log" 2>/dev/null && return 0
		kill -0 "$COL_PID" 2>/dev/null || break
		sleep 0.1
	done
	COL_ERR="the Collector did not start: $(grep -v '^\s*$' "$dir/collector.log" | tail -3 | cut -c1-300 | tr '\n' ' ')"
	stop_workload "$COL_PID"
	return 1
}

# stop_collector: SIGTERM, which makes the file exporter flush, and waits for the exit.
stop_collector() {
	[ -n "$COL_PID" ] && stop_workload "$COL_PID"
	COL_PID=
}

# collector_said DIR: the Collector's warnings and errors, on one line (for FAIL messages).
collector_said() {
	local said
	said=$(grep -E $'\t(warn|error)\t' "$1/collector.log" | head -4 | cut -c1-400 | tr '\n' ' ')
	echo "the Collector said: ${said:-nothing (no warning or error in its log)}"
}

# hp_said NAME: hostprof's exit status and its warnings and errors of run NAME, on one line: the
# receiver's answer is in them, after the capture's progress lines.
hp_said() {
	local said
	said=$(grep -E "warning|error|refused|not delivered" "$WORK/$1.err" "$WORK/$1.out" 2>/dev/null |
		cut -d: -f2- | head -3 | cut -c1-400 | tr '\n' ' ')
	echo "hostprof exited $HP_RC after $HP_SECS s: ${said:-$(hp_failure "$1")}"
}

compare() {
	python3 "$E2E/otlp_compare.py" "$@"
}

# decode_bodies DIR: each recorded request body of DIR as protoc text (X.txt beside X.body); prints
# the .txt files, comma-separated, or returns 1 naming what protoc refused.
decode_bodies() {
	local b list=
	for b in "$1"/*.body; do
		[ -e "$b" ] || continue
		if ! protoc --decode="$OTLP_REQ" "${OTLP_PROTO_ARGS[@]}" <"$b" >"${b%.body}.txt" 2>&1; then
			echo "protoc cannot decode $(basename "$b"): $(head -c 200 "${b%.body}.txt")"
			return 1
		fi
		list=${list:+$list,}${b%.body}.txt
	done
	[ -n "$list" ] || { echo "the recording receiver got no request from the Collector"; return 1; }
	echo "$list"
}

# collector_judge TEST HPNAME DIR TYPE=PPROF...: what the Collector's file exporter wrote against
# hostprof's own request DIR/hp.otlp.pb, and the profiles of each sample TYPE against the pprof
# file PPROF. Prints the PASS/FAIL line.
collector_judge() {
	local test=$1 name=$2 dir=$3 out tp what= records samples
	shift 3
	if [ "$HP_RC" -ne 0 ]; then
		fail "$test" "export to the Collector failed: $(hp_said "$name"); $(collector_said "$dir")"
		return
	fi
	if [ ! -s "$dir/file.json" ]; then
		fail "$test" "hostprof exited 0 but the Collector's file exporter wrote nothing; $(collector_said "$dir")"
		return
	fi
	if ! protoc --decode="$OTLP_REQ" "${OTLP_PROTO_ARGS[@]}" <"$dir/hp.otlp.pb" >"$dir/hp.txt" 2>&1; then
		fail "$test" "protoc cannot decode hostprof's own request: $(head -c 200 "$dir/hp.txt")"
		return
	fi
	if ! out=$(compare same text "$dir/hp.txt" json "$dir/file.json" 2>&1); then
		fail "$test" "the Collector's profiles differ from hostprof's own request: $out; $(collector_said "$dir")"
		return
	fi
	what=${out#equal: }
	for tp in "$@"; do
		pprof -raw "${tp#*=}" >"${tp#*=}.raw" 2>&1
		if ! out=$(compare pprof json "$dir/file.json" "${tp%%=*}" "${tp#*=}.raw" 2>&1); then
			fail "$test" "the Collector's ${tp%%=*} profiles differ from $(basename "${tp#*=}"): $out"
			return
		fi
		what="$what; ${out#equal to pprof: } as in $(basename "${tp#*=}")"
	done
	# The debug exporter counts what reached the end of the first pipeline.
	records=$(grep -o '"sample records": [0-9]*' "$dir/collector.log" | awk '{ s += $NF } END { print s + 0 }')
	samples=$(sed -n 's/.* \([0-9]*\) samples, .*/\1/p' <<<"$what")
	if [ "$records" != "$samples" ]; then
		fail "$test" "the debug exporter logged $records sample records, hostprof sent $samples samples; $(collector_said "$dir")"
		return
	fi
	pass "$test" "the Collector's file exporter equals hostprof's request: $what"
}

# One capture exported over OTLP/HTTP, for collector_http and collector_forward.
run_collector_http() {
	local pid dir=$WORK/col_http
	COL_HTTP_RAN=1
	COL_HTTP_DIR=$dir
	start_collector "$dir" || return
	start_workload cpu_ratio 60
	pid=$WPID
	sleep 0.3
	hp colhttp profile --pid "$pid" --duration 2 --frequency "$FREQ" -o "$dir/hp.pb.gz" \
		-o "$dir/hp.otlp.pb" --otlp-endpoint "http://127.0.0.1:$COL_HTTP/v1development/profiles"
	stop_workload "$pid"
	stop_collector
}

t_collector_http() {
	[ "$COL_HTTP_RAN" = 1 ] || run_collector_http
	[ -z "$COL_ERR" ] || { fail collector_http "$COL_ERR"; return; }
	collector_judge collector_http colhttp "$COL_HTTP_DIR" cpu="$COL_HTTP_DIR/hp.pb.gz"
}

t_collector_forward() {
	local dir list n out
	[ "$COL_HTTP_RAN" = 1 ] || run_collector_http
	[ -z "$COL_ERR" ] || { fail collector_forward "$COL_ERR"; return; }
	dir=$COL_HTTP_DIR
	n=$(find "$dir/fwd" -name '*.body' | wc -l)
	if [ "$HP_RC" -ne 0 ]; then
		fail collector_forward "export to the Collector failed: $(hp_said colhttp)"
	elif [ "$n" -ne 1 ]; then
		fail collector_forward "the recording receiver got $n requests from the Collector, expected 1; $(collector_said "$dir")"
	elif ! grep -q "^path /v1development/profiles$" "$dir/fwd/0000.meta" ||
		! grep -q "^header content-encoding: gzip$" "$dir/fwd/0000.meta" ||
		! grep -q "^header content-type: application/x-protobuf$" "$dir/fwd/0000.meta"; then
		fail collector_forward "the forwarded request's path or headers: $(tr '\n' ' ' <"$dir/fwd/0000.meta")"
	elif ! list=$(decode_bodies "$dir/fwd"); then
		fail collector_forward "$list"
	elif ! protoc --decode="$OTLP_REQ" "${OTLP_PROTO_ARGS[@]}" <"$dir/hp.otlp.pb" >"$dir/hp.txt" 2>&1; then
		fail collector_forward "protoc cannot decode hostprof's own request: $(head -c 200 "$dir/hp.txt")"
	elif ! out=$(compare same text "$dir/hp.txt" text "$list" 2>&1); then
		fail collector_forward "the Collector's re-encoding differs from hostprof's request: $out"
	else
		pass collector_forward "the Collector's otlp_http exporter re-encoded the request (gzip, /v1development/profiles), protoc decodes it, equal to hostprof's: ${out#equal: }"
	fi
}

# Samples linked to spans (OTEP 4947, tests/e2e/otel_ctx.c as otel_ctx_lib): the Collector keeps
# each sample's link and the spans' attributes, compared with hostprof's own request.
t_collector_links() {
	local pid dir=$WORK/col_links spans
	start_collector "$dir" || { fail collector_links "$COL_ERR"; return; }
	start_workload otel_ctx_lib 60
	pid=$WPID
	sleep 0.5
	hp collinks profile --pid "$pid" --duration 2 --frequency "$FREQ" -o "$dir/hp.pb.gz" \
		-o "$dir/hp.otlp.pb" --otlp-endpoint "http://127.0.0.1:$COL_HTTP/v1development/profiles"
	stop_workload "$pid"
	stop_collector
	spans=$(grep -o '"spanId":"[^"]*"' "$dir/file.json" 2>/dev/null | sort -u | grep -vc '"spanId":""')
	if [ "$HP_RC" -eq 0 ] && [ "${spans:-0}" -lt 2 ]; then
		fail collector_links "the Collector's file output holds ${spans:-0} span ids, want the workload's 2 (a1.. and b2..)"
		return
	fi
	collector_judge collector_links collinks "$dir" cpu="$dir/hp.pb.gz"
}

# OTLP/gRPC with gzip, two profile types in one request, the samples/count form of cpu.
t_collector_grpc() {
	local pid dir=$WORK/col_grpc
	start_collector "$dir" || { fail collector_grpc "$COL_ERR"; return; }
	start_workload sleeper 60
	pid=$WPID
	sleep 0.3
	hp colgrpc profile --pid "$pid" --duration 2 --frequency "$FREQ" --types cpu,wall \
		--otlp-sample-type samples -o "$dir/hp.pb.gz" -o "$dir/hp.otlp.pb" \
		--otlp-endpoint "http://127.0.0.1:$COL_GRPC" --otlp-protocol grpc --otlp-compression gzip
	stop_workload "$pid"
	stop_collector
	collector_judge collector_grpc colgrpc "$dir" samples="$dir/hp.cpu.pb.gz" \
		wall="$dir/hp.wall.pb.gz"
}

# OTLP/HTTP with a JSON body (gzip): the off-CPU and lock-contention profiles of a workload that
# fights over a mutex, beside its cpu profile, in one request.
t_collector_json() {
	local dir=$WORK/col_json
	start_collector "$dir" || { fail collector_json "$COL_ERR"; return; }
	hp coljson profile --frequency "$FREQ" --types cpu,offcpu,contention -o "$dir/hp.pb.gz" \
		-o "$dir/hp.otlp.pb" --otlp-protocol http/json \
		--otlp-endpoint "http://127.0.0.1:$COL_HTTP/v1development/profiles" \
		-- "$WL/mutex" 2 "$dir/mutex.measured"
	stop_collector
	collector_judge collector_json coljson "$dir" cpu="$dir/hp.cpu.pb.gz" \
		off_cpu="$dir/hp.offcpu.pb.gz" contention="$dir/hp.contention.pb.gz"
}

# The forwarding pipeline's receiver is down: the Collector answers hostprof 503 (retryable) with
# its own message, hostprof retries until --export-deadline and reports what the Collector said;
# the local files are written all the same. (The file exporter gets every retry: the Collector
# fans out before it knows the other pipeline failed.)
t_collector_refusal() {
	local pid dir=$WORK/col_refusal port said
	port=$(free_ports 1)
	start_collector "$dir" "http://127.0.0.1:$port/v1development/profiles" ||
		{ fail collector_refusal "$COL_ERR"; return; }
	start_workload cpu_ratio 60
	pid=$WPID
	sleep 0.3
	hp colrefusal profile --pid "$pid" --duration 1 --frequency "$FREQ" -o "$dir/hp.pb.gz" \
		--otlp-endpoint "http://127.0.0.1:$COL_HTTP/v1development/profiles" --export-deadline 3
	stop_workload "$pid"
	stop_collector
	said=$(grep -h "not delivered by the shutdown deadline" "$WORK/colrefusal.err" | head -1)
	if [ "$HP_RC" -eq 0 ]; then
		fail collector_refusal "hostprof exited 0 although the Collector refused every attempt; $(collector_said "$dir")"
	elif [ ! -s "$dir/hp.pb.gz" ]; then
		fail collector_refusal "the pprof file was not written"
	elif ! grep -q "HTTP 503: .*$port" <<<"$said"; then
		fail collector_refusal "hostprof did not report the Collector's answer (HTTP 503 naming the forward port $port): $(hp_said colrefusal)"
	elif ! grep -q $'\terror\t.*Exporting failed' "$dir/collector.log"; then
		fail collector_refusal "the Collector's log has no failed export: $(collector_said "$dir")"
	else
		pass collector_refusal "exit $HP_RC after $HP_SECS s (3 s deadline), pprof written, the file exporter got $(grep -c . "$dir/file.json" 2>/dev/null || echo 0) copies; hostprof reports the Collector's answer: $(sed 's/.*last error: //' <<<"$said" | cut -c1-200)"
	fi
}

# run_collector_agent TEST PROTOCOL SAMPLE_TYPE: the agent, whole host, 2 s windows, for about 7 s,
# exporting with PROTOCOL (http/protobuf or grpc) and export.otlp.sample_type SAMPLE_TYPE (cpu or
# samples), with pprof files of each window beside the export. Prints the PASS/FAIL line.
run_collector_agent() {
	local test=$1 proto=$2 stype=$3 dir=$WORK/col_$1 conf apid pid rc windows lines list out res
	local vs_pprof endpoint
	start_collector "$dir" || { fail "$test" "$COL_ERR"; return; }
	endpoint="http://127.0.0.1:$COL_HTTP/v1development/profiles"
	[ "$proto" = grpc ] && endpoint="http://127.0.0.1:$COL_GRPC"
	conf=$dir/agent.yaml
	cat >"$conf" <<EOF
frequency: 99
upload_interval: 2s
export:
  deadline: 10s
  directory: "$dir/files"
  otlp:
    endpoint: "$endpoint"
    protocol: $proto
    compression: gzip
    sample_type: $stype
EOF
	mkdir -p "$dir/files"
	OTEL_SERVICE_NAME=hp-collector-e2e "$WL/cpu_ratio" 60 >/dev/null 2>&1 &
	pid=$!
	PIDS+=("$pid")
	"$HOSTPROF" agent --config "$conf" >"$dir/agent.log" 2>&1 &
	apid=$!
	PIDS+=("$apid")
	# Seven seconds of sampling, from when the BPF programs are attached (slower on a busy host).
	for _ in $(seq 300); do
		grep -q "profiling the whole host" "$dir/agent.log" 2>/dev/null && break
		sleep 0.1
	done
	sleep 7
	stop_workload "$pid"
	kill -TERM "$apid"
	wait "$apid"
	rc=$?
	stop_workload "$apid"
	stop_collector
	windows=$(find "$dir/files" -name 'cpu-*.pb.gz' | wc -l)
	lines=$(grep -c . "$dir/file.json" 2>/dev/null)
	if [ "$rc" -ne 0 ]; then
		fail "$test" "the agent exited $rc: $(grep -v '^$' "$dir/agent.log" | tail -3 | tr '\n' ' '); $(collector_said "$dir")"
		return
	elif ! grep -q "OTLP export: [0-9]* delivered, 0 not delivered" "$dir/agent.log"; then
		fail "$test" "the agent did not deliver every window: $(grep -E "OTLP export|refused|dropped" "$dir/agent.log" | head -3 | tr '\n' ' '); $(collector_said "$dir")"
		return
	elif [ "$windows" -lt 3 ] || [ "${lines:-0}" -ne "$windows" ]; then
		fail "$test" "$windows pprof windows written, the file exporter has ${lines:-0} lines, expected the same number, at least 3; $(collector_said "$dir")"
		return
	fi
	# go tool pprof merges the windows into one profile.
	pprof -raw "$dir"/files/cpu-*.pb.gz >"$dir/files.raw" 2>&1
	if ! vs_pprof=$(compare pprof json "$dir/file.json" "$stype" "$dir/files.raw" 2>&1); then
		fail "$test" "the Collector's $stype profiles differ from the agent's pprof windows: $vs_pprof"
		return
	fi
	res=$(compare resource json "$dir/file.json" | sed 's/^/;/; s/$/;/' | grep ";service.name=hp-collector-e2e;")
	if ! grep -q ";process.pid=$pid;" <<<"$res" || ! grep -q ";process.executable.name=cpu_ratio;" <<<"$res"; then
		fail "$test" "no resource with service.name=hp-collector-e2e, process.pid=$pid, process.executable.name=cpu_ratio; got: $(head -c 300 <<<"$res")"
	elif ! list=$(decode_bodies "$dir/fwd"); then
		fail "$test" "forwarded: $list"
	elif ! out=$(compare same json "$dir/file.json" text "$list" 2>&1); then
		fail "$test" "the forwarded requests differ from the file exporter's profiles: $out"
	else
		pass "$test" "$windows windows of 2 s over $proto reached the Collector, ${out#equal: }, equal to the agent's pprof windows (${vs_pprof#equal to pprof: }) and forwarded unchanged; cpu_ratio is service.name=hp-collector-e2e, pid $pid"
	fi
}

t_collector_agent() {
	run_collector_agent collector_agent http/protobuf cpu
}

t_collector_agent_grpc() {
	run_collector_agent collector_agent_grpc grpc samples
}
