# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# shellcheck disable=SC2317  # the tests are called indirectly, as "t_$name"
#
# End-to-end tests of `hostprof agent`, sourced by run.sh (which provides pass, fail, hp, $WORK,
# start_receiver and the OTLP decoding arguments).
#
# One 60 s agent run (run_agent_scenario) against the local OTLP receiver feeds:
#   agent_service     a process started with OTEL_SERVICE_NAME=checkout is service.name=checkout
#   agent_process_context  an OTEP 4719 process context wins over OTEL_SERVICE_NAME, and one
#                     published 4 s after start is found by the 30 s rescan
#   agent_containers  processes in fake cgroups of each runtime form (Docker, containerd, CRI-O,
#                     the cgroupfs kubepods form) get their container.id; the Docker one its
#                     container.name from a fake Docker root
#   agent_kubelet     pod metadata from a stand-in kubelet (HTTPS, bearer token, a recorded
#                     /pods answer): k8s.* attributes and the service name from the pod's labels
#   agent_systemd     a process in a fake hpdemo.service cgroup is systemd.unit=hpdemo.service,
#                     service.name=hpdemo
#   agent_relabel     a drop rule removes the matching processes (and counts them in /metrics);
#                     a replace rule adds deployment.environment
#   agent_reload      SIGHUP with a changed upload_interval: the windows go from 5 s to 2 s;
#                     a later SIGHUP with a broken file is refused, and the agent goes on
#   agent_sigterm     SIGTERM delivers the last (partial) window, then exit 0
#   agent_reload_pairs  every ordered pair of five configurations (files export at 19 Hz, a
#                     broken file, no export at all, 49 Hz, cpu+wall), 20 SIGHUPs under load:
#                     each is answered, the agent lives through all and exits 0 on SIGTERM
#   agent_http        /healthz, /readyz and /metrics (Prometheus text, with the samples, the
#                     exports and the agent's RSS)
#   agent_caps        started as root, every thread of the agent holds only the capabilities
#                     src/agent/privileges.h keeps (no CAP_SYS_ADMIN, CAP_DAC_OVERRIDE, ...),
#                     with no_new_privs and a cut bounding set, while it profiles and reloads
# and, without BPF:
#   agent_config_errors  an unknown key, a wrong type, a missing file and an unreadable token
#                     file each exit nonzero with a message naming the key, file or line
#   agent_print_config   --print-config merges file < env < flags and masks header values
# and agent_soak, the 2-minute form of bench/soak.sh (RSS flat under process churn).

AGENT_DIR=
AGENT_RX=
AGENT_RAN=0
AGENT_LOG=
AGENT_METRICS=
AGENT_READYZ=
AGENT_HEALTHZ=
AGENT_RC=
AGENT_STOP_SECS=
AGENT_REQS_AT_TERM=0
AGENT_RESOURCES=
AGENT_CG_ROOT=
AGENT_CGROUPS=()

# Container IDs of the fake cgroups; the CRI-O and the kubepods ones are in the recorded /pods
# answer (tests/fixtures/kubelet/pods.json): node-exporter (a DaemonSet) and postgres-0 (a
# StatefulSet).
ID_DOCKER=1f0e1d2c3b4a59687766554433221100ffeeddccbbaa99887766554433221100
ID_CONTAINERD=aa11bb22cc33dd44ee55ff6600778899aa11bb22cc33dd44ee55ff6600778899
ID_CRIO=2303824a4e3dc61fe3195d1a6e978029d4774876cc9aba9d2c60ef85eb96a845
ID_KUBEPODS=a942b37ccfaf5a813b1432caa209a43b9d144e47ad0de1549c289c253e556cd5

# A cgroup hierarchy where processes can be moved: the unified one (cgroup v2), else systemd's
# named v1 hierarchy, whose path /proc/PID/cgroup shows as well.
agent_cgroup_root() {
	local d
	for d in /sys/fs/cgroup/unified /sys/fs/cgroup/systemd /sys/fs/cgroup; do
		[ -f "$d/cgroup.procs" ] || continue
		if mkdir -p "$d/hostprof-e2e-probe" 2>/dev/null; then
			rmdir "$d/hostprof-e2e-probe"
			echo "$d"
			return 0
		fi
	done
	return 1
}

# agent_busy NAME CGROUP [ENV...]: a shell loop at about a third of a CPU, in cgroup CGROUP
# (relative to the hierarchy; "" for none), started with the given environment. Sets WPID.
agent_busy() {
	local exe=$1 cg=$2
	shift 2
	env "$@" "$exe" -c 'while :; do i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); done; sleep 0.02; done' \
		>/dev/null 2>&1 &
	WPID=$!
	PIDS+=("$WPID")
	if [ -n "$cg" ]; then
		mkdir -p "$AGENT_CG_ROOT/$cg" && echo "$WPID" >"$AGENT_CG_ROOT/$cg/cgroup.procs"
		AGENT_CGROUPS+=("$cg")
	fi
}

agent_cleanup_cgroups() {
	local cg p
	for cg in "${AGENT_CGROUPS[@]}"; do
		for p in $(cat "$AGENT_CG_ROOT/$cg/cgroup.procs" 2>/dev/null); do
			echo "$p" >"$AGENT_CG_ROOT/cgroup.procs" 2>/dev/null
		done
		# Remove the directory and its now empty parents that the test made.
		while [ -n "$cg" ] && [ "$cg" != . ] && rmdir "$AGENT_CG_ROOT/$cg" 2>/dev/null; do
			cg=$(dirname "$cg")
		done
	done
}

# The OTLP requests the receiver got, decoded by protoc into NNNN.txt, summarized per resource.
agent_decode() {
	local b
	for b in "$AGENT_RX"/*.body; do
		[ -e "$b" ] || continue
		protoc --decode="$OTLP_REQ" "${OTLP_PROTO_ARGS[@]}" <"$b" >"${b%.body}.txt" 2>&1
	done
	python3 "$E2E/otlp_resources.py" "$AGENT_RX"/*.txt 2>/dev/null
}

# agent_resource KEY=VALUE...: the resource lines holding every given attribute.
agent_resource() {
	local line a ok
	while IFS= read -r line; do
		ok=1
		for a in "$@"; do
			case ";$(cut -f2 <<<"$line");" in *";$a;"*) ;; *) ok=0 ;; esac
		done
		[ "$ok" = 1 ] && echo "$line"
	done <<<"$AGENT_RESOURCES"
}

run_agent_scenario() {
	local conf=$WORK/agent.yaml token=$WORK/kubelet.token kport kpid apid i t0 t1 hport
	AGENT_RAN=1
	AGENT_DIR=$WORK/agent
	AGENT_RX=$WORK/agent-rx
	AGENT_LOG=$WORK/agent.log
	mkdir -p "$AGENT_DIR/docker/containers/$ID_DOCKER"
	printf '{"ID":"%s","Name":"/web-frontend","State":{"Running":true}}\n' "$ID_DOCKER" \
		>"$AGENT_DIR/docker/containers/$ID_DOCKER/config.v2.json"
	AGENT_CG_ROOT=$(agent_cgroup_root) || {
		AGENT_RC="no writable cgroup hierarchy under /sys/fs/cgroup"
		return
	}

	# The stand-in kubelet: HTTPS with a self-signed certificate, a bearer token.
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$AGENT_DIR/kubelet.key" \
		-out "$AGENT_DIR/kubelet.crt" >/dev/null 2>&1
	echo "e2e-kubelet-token" >"$token"
	python3 "$ROOT/tests/receiver/kubelet_server.py" --cert "$AGENT_DIR/kubelet.crt" \
		--key "$AGENT_DIR/kubelet.key" --pods "$ROOT/tests/fixtures/kubelet/pods.json" \
		--token-file "$token" --log "$AGENT_DIR/kubelet.log" --lifetime 120 \
		>"$AGENT_DIR/kubelet.port" 2>"$AGENT_DIR/kubelet.err" &
	kpid=$!
	PIDS+=("$kpid")
	start_receiver "$AGENT_RX" --lifetime 120
	for i in $(seq 50); do
		kport=$(head -1 "$AGENT_DIR/kubelet.port" 2>/dev/null)
		[ -n "$kport" ] && break
		sleep 0.1
	done
	if [ -z "$kport" ] || [ -z "$RX_PORT" ]; then
		AGENT_RC="the stand-in kubelet or the OTLP receiver did not start: $(head -c 200 "$AGENT_DIR/kubelet.err")"
		return
	fi

	cp /usr/bin/dash "$AGENT_DIR/hp_dropme"
	agent_busy /usr/bin/dash "" OTEL_SERVICE_NAME=checkout
	AGENT_PID_CHECKOUT=$WPID
	agent_busy /usr/bin/dash "system.slice/docker-$ID_DOCKER.scope"
	AGENT_PID_DOCKER=$WPID
	agent_busy /usr/bin/dash "system.slice/cri-containerd-$ID_CONTAINERD.scope"
	AGENT_PID_CONTAINERD=$WPID
	agent_busy /usr/bin/dash "kubepods.slice/kubepods-burstable.slice/crio-$ID_CRIO.scope"
	AGENT_PID_CRIO=$WPID
	agent_busy /usr/bin/dash "kubepods/burstable/pod5d9a1e44-8c2b-4f3a-9e1d-0b7c6a5f4e3d/$ID_KUBEPODS"
	AGENT_PID_KUBEPODS=$WPID
	agent_busy /usr/bin/dash "system.slice/hpdemo.service"
	AGENT_PID_UNIT=$WPID
	agent_busy "$AGENT_DIR/hp_dropme" ""
	AGENT_PID_DROP=$WPID
	# OpenTelemetry process contexts (OTEP 4719): one published at start, one 4 s late, both
	# beside an OTEL_SERVICE_NAME that they must win over.
	start_bg env OTEL_SERVICE_NAME=env-name "$WL/otel_ctx" 70
	AGENT_PID_CTX=$WPID
	start_bg env OTEL_SERVICE_NAME=env-late "$WL/otel_ctx" 70 4000
	AGENT_PID_CTX_LATE=$WPID

	cat >"$conf" <<EOF
frequency: 99
upload_interval: 5s
http_listen: "127.0.0.1:0"
export:
  deadline: 10s
  otlp:
    endpoint: "http://127.0.0.1:$RX_PORT/v1development/profiles"
    header_files:
      x-oneuptime-token: "$WORK/otlp.token"
kubernetes:
  enabled: true
  kubelet_url: "https://127.0.0.1:$kport/pods"
  token_file: "$token"
  ca_file: "$AGENT_DIR/kubelet.crt"
  refresh_interval: 2s
docker:
  root: "$AGENT_DIR/docker"
relabel:
  - action: drop
    source: process.executable.name
    regex: hp_drop.*
  - action: replace
    source: k8s.namespace.name
    regex: "(.+)"
    target: deployment.environment
    replacement: "e2e-\$1"
EOF
	echo "otlp-secret-e2e" >"$WORK/otlp.token"
	t0=$(date +%s)
	"$HOSTPROF" agent --config "$conf" >"$AGENT_LOG" 2>&1 &
	apid=$!
	PIDS+=("$apid")
	for i in $(seq 100); do
		hport=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$AGENT_LOG" | head -1)
		[ -n "$hport" ] && break
		sleep 0.1
	done
	# Two 5 s windows, then a reload to 2 s windows.
	sleep 22
	sed -i 's/^upload_interval: 5s/upload_interval: 2s/' "$conf"
	kill -HUP "$apid"
	sleep 14
	# A broken file is refused, and the agent goes on with what it runs.
	cp "$conf" "$conf.good"
	echo "upload_intervall: 1s" >>"$conf"
	kill -HUP "$apid"
	sleep 4
	mv "$conf.good" "$conf"
	sleep 10
	if [ -n "$hport" ]; then
		AGENT_HEALTHZ=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$hport/healthz")
		AGENT_READYZ=$(curl -s -w ' %{http_code}' "http://127.0.0.1:$hport/readyz")
		curl -s "http://127.0.0.1:$hport/metrics" >"$WORK/agent.metrics"
	fi
	# Every thread's capabilities, after the start, the reloads and ~50 s of profiling.
	for t in /proc/"$apid"/task/*; do
		echo "task $(cat "$t/comm" 2>/dev/null)"
		grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' "$t/status" 2>/dev/null
	done >"$WORK/agent.caps"
	AGENT_METRICS=$WORK/agent.metrics
	sleep $((60 - ($(date +%s) - t0)))
	AGENT_REQS_AT_TERM=$(find "$AGENT_RX" -name '*.body' | wc -l)
	t1=$(date +%s.%N)
	kill -TERM "$apid"
	wait "$apid"
	AGENT_RC=$?
	AGENT_STOP_SECS=$(awk -v a="$t1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	stop_workloads
	agent_cleanup_cgroups
	AGENT_RESOURCES=$(agent_decode)
}

need_agent_run() {
	[ "$AGENT_RAN" = 1 ] || run_agent_scenario
	case $AGENT_RC in
	'' | *[!0-9]*)
		fail "$1" "the agent scenario could not run: ${AGENT_RC:-not started}"
		return 1
		;;
	esac
	return 0
}

t_agent_service() {
	local r
	need_agent_run agent_service || return
	r=$(agent_resource service.name=checkout "process.pid=$AGENT_PID_CHECKOUT")
	if [ -z "$r" ]; then
		fail agent_service "no resource with service.name=checkout and process.pid=$AGENT_PID_CHECKOUT; services seen: $(cut -f2 <<<"$AGENT_RESOURCES" | tr ';' '\n' | grep '^service.name=' | sort -u | tr '\n' ' ')"
	else
		pass agent_service "OTEL_SERVICE_NAME=checkout gave service.name=checkout in $(wc -l <<<"$r") windows"
	fi
}

# The OTEP 4719 process context wins over OTEL_SERVICE_NAME from the first window; one published
# after main is found by the rescan (PROC_CONTEXT_RESCAN_NS, 30 s) and wins from then on.
t_agent_process_context() {
	local first late_env late_ctx ctx_attrs="service.name=ctx-checkout;service.version=2.4.1"
	need_agent_run agent_process_context || return
	first=$(agent_resource service.name=ctx-checkout service.version=2.4.1 \
		service.instance.id=ctx-instance-7 deployment.environment.name=e2e \
		"process.pid=$AGENT_PID_CTX")
	late_env=$(agent_resource service.name=env-late "process.pid=$AGENT_PID_CTX_LATE")
	late_ctx=$(agent_resource service.name=ctx-checkout service.version=2.4.1 \
		"process.pid=$AGENT_PID_CTX_LATE")
	if [ -z "$first" ] || [ -n "$(agent_resource service.name=env-name)" ]; then
		fail agent_process_context "pid $AGENT_PID_CTX: no window with $ctx_attrs and the other resource attributes, or one named env-name; its resources: $(grep -P "process.pid=$AGENT_PID_CTX(;|\t)" <<<"$AGENT_RESOURCES" | cut -f2 | head -3)"
	elif [ -z "$late_ctx" ]; then
		fail agent_process_context "the context published 4 s late was never read (pid $AGENT_PID_CTX_LATE, $(wc -l <<<"$late_env") windows as env-late); its resources: $(grep -P "process.pid=$AGENT_PID_CTX_LATE(;|\t)" <<<"$AGENT_RESOURCES" | cut -f2 | sort -u | head -3)"
	elif ! awk '/^hostprof_trace_context_processes / { found = $2 >= 1 } END { exit !found }' "$AGENT_METRICS" 2>/dev/null; then
		fail agent_process_context "/metrics: hostprof_trace_context_processes is not >= 1 although otel_ctx publishes a thread context: $(grep '^hostprof_trace_context' "$AGENT_METRICS")"
	else
		pass agent_process_context "$(wc -l <<<"$first") windows of ctx-checkout over OTEL_SERVICE_NAME=env-name; the late publisher: $(grep -c . <<<"$late_env") windows as env-late, then $(wc -l <<<"$late_ctx") as ctx-checkout; /metrics: $(grep '^hostprof_trace_context_processes' "$AGENT_METRICS")"
	fi
}

t_agent_containers() {
	local miss="" pair pid id
	need_agent_run agent_containers || return
	for pair in "$AGENT_PID_DOCKER:$ID_DOCKER" "$AGENT_PID_CONTAINERD:$ID_CONTAINERD" \
		"$AGENT_PID_CRIO:$ID_CRIO" "$AGENT_PID_KUBEPODS:$ID_KUBEPODS"; do
		pid=${pair%%:*}
		id=${pair#*:}
		[ -n "$(agent_resource "process.pid=$pid" "container.id=$id")" ] || miss+=" pid $pid lacks container.id=${id:0:12}…"
	done
	if [ -n "$miss" ]; then
		fail agent_containers "$miss; cgroups under $AGENT_CG_ROOT"
	elif [ -z "$(agent_resource "process.pid=$AGENT_PID_DOCKER" container.name=web-frontend service.name=web-frontend)" ]; then
		fail agent_containers "the Docker container's name (web-frontend, from config.v2.json) is not its container.name and service.name: $(agent_resource "process.pid=$AGENT_PID_DOCKER" | head -1 | cut -f2)"
	else
		pass agent_containers "container.id from docker-ID.scope, cri-containerd-ID.scope, crio-ID.scope and kubepods/…/podUID/ID cgroups; container.name and service.name web-frontend from the Docker root"
	fi
}

t_agent_kubelet() {
	local crio kp
	need_agent_run agent_kubelet || return
	crio=$(agent_resource "process.pid=$AGENT_PID_CRIO" service.name=node-exporter \
		k8s.namespace.name=monitoring k8s.pod.name=node-exporter-5xq7z \
		k8s.daemonset.name=node-exporter k8s.container.name=node-exporter)
	kp=$(agent_resource "process.pid=$AGENT_PID_KUBEPODS" service.name=postgres \
		k8s.namespace.name=db k8s.pod.name=postgres-0 k8s.statefulset.name=postgres)
	if [ -z "$crio" ]; then
		fail agent_kubelet "the CRI-O process lacks node-exporter's pod attributes: $(agent_resource "process.pid=$AGENT_PID_CRIO" | head -1 | cut -f2); kubelet log: $(tail -3 "$AGENT_DIR/kubelet.log" 2>/dev/null | tr '\n' ' ')"
	elif [ -z "$kp" ]; then
		fail agent_kubelet "the kubepods process lacks postgres-0's attributes (service.name from the app label): $(agent_resource "process.pid=$AGENT_PID_KUBEPODS" | head -1 | cut -f2)"
	elif grep -q 'auth=bad\|auth=none' "$AGENT_DIR/kubelet.log"; then
		fail agent_kubelet "the agent called the kubelet without its bearer token: $(grep -m1 'auth=' "$AGENT_DIR/kubelet.log")"
	else
		pass agent_kubelet "pods by container ID from the stand-in kubelet (HTTPS, CA-verified, bearer token; $(grep -c 'GET /pods 200' "$AGENT_DIR/kubelet.log") fetches): node-exporter (app.kubernetes.io/name, DaemonSet) and postgres (app label, StatefulSet)"
	fi
}

t_agent_systemd() {
	local r
	need_agent_run agent_systemd || return
	r=$(agent_resource "process.pid=$AGENT_PID_UNIT" systemd.unit=hpdemo.service service.name=hpdemo)
	if [ -z "$r" ]; then
		fail agent_systemd "the process in system.slice/hpdemo.service lacks systemd.unit/service.name: $(agent_resource "process.pid=$AGENT_PID_UNIT" | head -1 | cut -f2)"
	else
		pass agent_systemd "system.slice/hpdemo.service gave systemd.unit=hpdemo.service and service.name=hpdemo"
	fi
}

t_agent_relabel() {
	local left
	need_agent_run agent_relabel || return
	left=$(awk '/^hostprof_samples_left_out_total / { print $2 }' "$AGENT_METRICS" 2>/dev/null)
	if [ -n "$(agent_resource "process.pid=$AGENT_PID_DROP")" ] ||
		grep -q 'process.executable.name=hp_dropme' <<<"$AGENT_RESOURCES"; then
		fail agent_relabel "hp_dropme (pid $AGENT_PID_DROP) was exported despite the drop rule"
	elif [ -z "$left" ] || [ "${left%.*}" -le 0 ]; then
		fail agent_relabel "/metrics does not count the dropped samples (hostprof_samples_left_out_total '${left}')"
	elif [ -z "$(agent_resource "process.pid=$AGENT_PID_CRIO" deployment.environment=e2e-monitoring)" ]; then
		fail agent_relabel "the replace rule did not add deployment.environment=e2e-monitoring to the monitoring pod's process"
	else
		pass agent_relabel "drop rule: hp_dropme absent, $left samples left out; replace rule: deployment.environment=e2e-monitoring"
	fi
}

# Window lengths (duration_nano, whole seconds) of the checkout process, in request order.
agent_durations() {
	agent_resource service.name=checkout | sed -n 's/.*duration_ns=\([0-9]*\).*/\1/p' |
		awk '{ printf "%.1f ", $1 / 1e9 }'
}

t_agent_reload() {
	local d long short
	need_agent_run agent_reload || return
	d=$(agent_durations)
	long=$(awk '{ for (i = 1; i <= NF; i++) if ($i >= 4.5 && $i <= 5.6) n++ } END { print n + 0 }' <<<"$d")
	short=$(awk '{ for (i = 1; i <= NF; i++) if ($i >= 1.8 && $i <= 2.6) n++ } END { print n + 0 }' <<<"$d")
	if ! grep -q 'configuration reloaded' "$AGENT_LOG"; then
		fail agent_reload "no 'configuration reloaded' in the log after SIGHUP: $(tail -3 "$AGENT_LOG" | tr '\n' ' ')"
	elif ! grep -q "reload refused, the running configuration stays: .*unknown key 'upload_intervall'" "$AGENT_LOG" ||
		! grep -q '^hostprof_config_reloads_total{result="failed"} 1$' "$AGENT_METRICS"; then
		fail agent_reload "a SIGHUP with a broken file was not refused by name (log, or /metrics reloads failed=1): $(grep -m1 'reload' "$AGENT_LOG")"
	elif [ "$long" -lt 3 ] || [ "$short" -lt 8 ]; then
		fail agent_reload "expected >= 3 windows of ~5 s, then >= 8 of ~2 s; window lengths (s): $d"
	else
		pass agent_reload "SIGHUP changed upload_interval 5s -> 2s: $long windows of ~5 s, then $short of ~2 s (lengths: $d); a broken file on a later SIGHUP was refused and the 2 s windows went on"
	fi
}

# agent_reload_config NAME FILE: write one of the reload test's configurations into FILE.
agent_reload_config() {
	local dir=$AGENT_DIR/reload-out
	case $1 in
	files) printf 'frequency: 19\nupload_interval: 2s\nexport:\n  directory: "%s"\n' "$dir" ;;
	broken) printf 'frequency: 19\nupload_intervall: 2s\n' ;;
	none) printf 'frequency: 19\nupload_interval: 2s\n' ;;
	faster) printf 'frequency: 49\nupload_interval: 2s\nexport:\n  directory: "%s"\n' "$dir" ;;
	wall) printf 'frequency: 19\ntypes: [cpu, wall]\nupload_interval: 2s\nexport:\n  directory: "%s"\n' "$dir" ;;
	esac >"$2"
}

# Every ordered pair of configurations, as SIGHUPs one after the other: a reload that stops the
# exporters and then the capture once freed the replaced configuration twice (a crash 3 times out
# of 3). Each SIGHUP must be answered ("configuration reloaded" or "reload refused") by a living
# agent before the next.
t_agent_reload_pairs() {
	local conf log apid names=(files broken none faster wall) seq=() from to n answered
	local wl rc bad=""
	AGENT_DIR=${AGENT_DIR:-$WORK/agent}
	mkdir -p "$AGENT_DIR/reload-out"
	conf=$AGENT_DIR/reload.yaml
	log=$WORK/agent_reload_pairs.log
	# An Eulerian circuit of the complete directed graph on the names: each ordered pair once,
	# 20 reloads. A refused reload (broken) leaves the one before it running.
	read -r -a seq < <(python3 -c '
import sys
names = sys.argv[1:]
out = {a: [b for b in names if b != a] for a in names}
stack, circuit = [names[0]], []
while stack:
    v = stack[-1]
    if out[v]:
        stack.append(out[v].pop())
    else:
        circuit.append(stack.pop())
print(" ".join(reversed(circuit[:-1])))' "${names[@]}")
	start_workload cpu_ratio 120
	wl=$WPID
	agent_reload_config files "$conf"
	"$HOSTPROF" agent --config "$conf" --cache-dir "$AGENT_DIR/cache" >"$log" 2>&1 &
	apid=$!
	PIDS+=("$apid")
	for _ in $(seq 100); do
		grep -q 'profiling the whole host' "$log" && break
		sleep 0.1
	done
	from=files
	n=0
	for to in "${seq[@]}"; do
		agent_reload_config "$to" "$conf"
		kill -HUP "$apid" 2>/dev/null
		n=$((n + 1))
		for _ in $(seq 300); do
			answered=$(grep -c 'configuration reloaded\|reload refused' "$log")
			[ "$answered" -ge "$n" ] && break
			kill -0 "$apid" 2>/dev/null || break
			sleep 0.1
		done
		if ! kill -0 "$apid" 2>/dev/null; then
			bad="the agent died on the reload from $from to $to (reload $n): $(grep -v '^$' "$log" | tail -2 | tr '\n' ' ')"
			break
		fi
		if [ "$answered" -lt "$n" ]; then
			bad="reload $n ($from to $to) was not answered within 30 s"
			break
		fi
		[ "$to" != broken ] && from=$to
	done
	stop_workload "$wl"
	if [ -z "$bad" ]; then
		kill -TERM "$apid"
		wait "$apid"
		rc=$?
		[ "$rc" -eq 0 ] || bad="exit status $rc on SIGTERM after $n reloads"
	fi
	if [ -n "$bad" ]; then
		fail agent_reload_pairs "$bad"
	else
		pass agent_reload_pairs "$n SIGHUPs over every ordered pair of 5 configurations under load: $(grep -c 'configuration reloaded' "$log") reloaded, $(grep -c 'reload refused' "$log") refused (the broken file), exit 0 on SIGTERM"
	fi
}

t_agent_sigterm() {
	local n last
	need_agent_run agent_sigterm || return
	n=$(find "$AGENT_RX" -name '*.body' | wc -l)
	last=$(agent_durations | awk '{ print $NF }')
	if [ "$AGENT_RC" -ne 0 ]; then
		fail agent_sigterm "the agent exited $AGENT_RC after SIGTERM: $(tail -3 "$AGENT_LOG" | tr '\n' ' ')"
	elif [ "$n" -le "$AGENT_REQS_AT_TERM" ]; then
		fail agent_sigterm "no request after SIGTERM ($n requests, $AGENT_REQS_AT_TERM before it)"
	elif awk -v s="$AGENT_STOP_SECS" 'BEGIN { exit !(s > 10) }'; then
		fail agent_sigterm "took $AGENT_STOP_SECS s to stop (the export deadline is 10 s)"
	else
		pass agent_sigterm "exit 0 in $AGENT_STOP_SECS s; the last window ($last s) arrived after SIGTERM ($AGENT_REQS_AT_TERM -> $n requests)"
	fi
}

t_agent_http() {
	local cpu rss ok bad binbytes watched
	need_agent_run agent_http || return
	cpu=$(awk '/^hostprof_samples_total\{type="cpu"\} / { print $2 }' "$AGENT_METRICS" 2>/dev/null)
	rss=$(awk '/^process_resident_memory_bytes / { printf "%.1f", $2 / 1048576 }' "$AGENT_METRICS" 2>/dev/null)
	ok=$(awk '/^hostprof_export_success_total\{exporter="otlp"\} / { print $2 }' "$AGENT_METRICS" 2>/dev/null)
	binbytes=$(awk '/^hostprof_cache_bytes\{cache="binaries"\} / { print $2 }' "$AGENT_METRICS" 2>/dev/null)
	watched=$(awk '/^hostprof_processes_watched_total\{result="read"\} / { print $2 }' "$AGENT_METRICS" 2>/dev/null)
	# Every line is a comment or NAME{LABELS} VALUE, as the text format has it.
	bad=$(grep -vcE '^(#.*|[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eEInfNa]+)$' "$AGENT_METRICS" 2>/dev/null)
	if [ "$AGENT_HEALTHZ" != 200 ]; then
		fail agent_http "/healthz answered '$AGENT_HEALTHZ'"
	elif [ "$AGENT_READYZ" != "ready
 200" ]; then
		fail agent_http "/readyz answered '$AGENT_READYZ'"
	elif [ -z "$cpu" ] || [ "$cpu" -le 0 ] || [ -z "$rss" ] || [ -z "$ok" ] || [ "$ok" -le 0 ]; then
		fail agent_http "/metrics lacks samples ($cpu), the agent's RSS ($rss) or successful exports ($ok)"
	elif [ -z "$binbytes" ] || [ "$binbytes" -le 0 ] || [ -z "$watched" ] || [ "$watched" -le 0 ]; then
		fail agent_http "/metrics lacks the binaries' cache memory ('$binbytes') or processes read at their first sample ('$watched')"
	elif [ "$bad" -ne 0 ]; then
		fail agent_http "$bad lines of /metrics are not in the text format: $(grep -vE '^(#.*|[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eEInfNa]+)$' "$AGENT_METRICS" | head -2)"
	elif grep -q 'otlp-secret-e2e' "$AGENT_LOG" "$AGENT_METRICS"; then
		fail agent_http "the OTLP token appears in the log or /metrics"
	else
		pass agent_http "/healthz 200, /readyz ready, /metrics: $cpu cpu samples, $ok exports delivered, agent RSS $rss MiB after ~45 s, binaries' tables $binbytes bytes, $watched processes read at their first sample"
	fi
}

# cap_has HEXMASK CAP: whether the capability number CAP is set in a /proc status mask.
cap_has() {
	(((0x$1 >> $2) & 1))
}

t_agent_caps() {
	local tasks=0 bad="" cpu ok line mask name
	need_agent_run agent_caps || return
	# CAP_DAC_OVERRIDE 1, CAP_SETUID 7, CAP_NET_ADMIN 12, CAP_SYS_MODULE 16, CAP_SYS_ADMIN 21,
	# CAP_SYS_RESOURCE 24 must be gone; CAP_SYS_PTRACE 19, CAP_PERFMON 38, CAP_BPF 39 stay.
	while read -r line; do
		case $line in
		task*) name=${line#task } tasks=$((tasks + 1)) ;;
		CapEff:* | CapBnd:*)
			mask=${line##*[[:space:]]}
			for c in 1 7 12 16 21 24; do
				cap_has "$mask" "$c" && bad="$bad $name:${line%%:*}:cap$c"
			done
			if [ "${line%%:*}" = CapEff ]; then
				for c in 19 38 39; do
					cap_has "$mask" "$c" || bad="$bad $name:lacks-cap$c"
				done
			fi
			;;
		NoNewPrivs:*) [ "${line##*[[:space:]]}" = 1 ] || bad="$bad $name:no_new_privs=0" ;;
		esac
	done <"$WORK/agent.caps"
	cpu=$(awk '/^hostprof_samples_total\{type="cpu"\} / { print $2 }' "$AGENT_METRICS" 2>/dev/null)
	ok=$(awk '/^hostprof_export_success_total\{exporter="otlp"\} / { print $2 }' "$AGENT_METRICS" 2>/dev/null)
	if [ "$tasks" -lt 2 ]; then
		fail agent_caps "read the capabilities of $tasks threads: $(head -c 300 "$WORK/agent.caps")"
	elif [ -n "$bad" ]; then
		fail agent_caps "capabilities not dropped as src/agent/privileges.h says:$bad"
	elif [ -z "$cpu" ] || [ "$cpu" -le 0 ] || [ -z "$ok" ] || [ "$ok" -le 0 ]; then
		fail agent_caps "with the reduced set, no samples ($cpu) or no exports ($ok)"
	else
		pass agent_caps "$tasks threads: CAP_SYS_ADMIN, DAC_OVERRIDE, SETUID, NET_ADMIN, SYS_MODULE, SYS_RESOURCE gone (effective and bounding), BPF, PERFMON, SYS_PTRACE kept, no_new_privs; $cpu cpu samples, $ok exports after a reload"
	fi
}

# agent_cfg_error NAME WANT ARGS...: `hostprof agent ARGS` must exit 2 with WANT (a grep -E
# pattern) on stderr. Prints the problem, or nothing.
agent_cfg_error() {
	local name=$1 want=$2
	shift 2
	hp "$name" agent "$@"
	if [ "$HP_RC" -eq 0 ] || [ "$HP_RC" -ge 124 ]; then
		echo "$name: exit $HP_RC (expected an error)"
	elif ! grep -qE "$want" "$WORK/$name.err"; then
		echo "$name: stderr lacks /$want/: $(head -c 200 "$WORK/$name.err")"
	fi
}

t_agent_config_errors() {
	local d problems=""
	# Outside $WORK (0700): the last case runs as nobody, who must reach the config file.
	d=$(mktemp -d /tmp/hostprof-cfg.XXXXXX) || return
	printf 'frequency: 19\nexprot:\n  otlp:\n    endpoint: http://x\n' >"$d/key.yaml"
	printf 'upload_interval: 15s\nlimits:\n  max_processes: lots\n' >"$d/type.yaml"
	printf 'export:\n  otlp:\n    endpoint: http://127.0.0.1:1\n    header_files:\n      x-oneuptime-token: %s\n' \
		"$d/token" >"$d/token.yaml"
	echo "not-for-nobody" >"$d/token"
	chmod 600 "$d/token"
	chmod 755 "$d"
	chmod 644 "$d"/*.yaml
	problems+=$(agent_cfg_error cfg_key "key.yaml:2: unknown key 'exprot'" --config "$d/key.yaml")
	problems+=$(agent_cfg_error cfg_type "type.yaml:3: limits.max_processes: 'lots'" --config "$d/type.yaml")
	problems+=$(agent_cfg_error cfg_missing "config file '$d/none.yaml': No such file" --config "$d/none.yaml")
	problems+=$(agent_cfg_error cfg_set "unknown key 'nope'" --set nope=1)
	# The token file is root's and 0600: as nobody it cannot be read.
	(cd /tmp && setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
		"$HOSTPROF" agent --config "$d/token.yaml") >"$WORK/cfg_token.out" 2>"$WORK/cfg_token.err"
	if [ $? -eq 0 ] || ! grep -q "header 'x-oneuptime-token': cannot read '$d/token': Permission denied" "$WORK/cfg_token.err"; then
		problems+="cfg_token: $(head -c 200 "$WORK/cfg_token.err")"
	elif grep -q not-for-nobody "$WORK/cfg_token.err"; then
		problems+="cfg_token: the token was printed"
	fi
	rm -rf "$d"
	if [ -n "$problems" ]; then
		fail agent_config_errors "$problems"
	else
		pass agent_config_errors "unknown key (file:line), wrong type (file:line, key), missing file, unknown --set key and an unreadable token file: each a nonzero exit naming the problem"
	fi
}

t_agent_print_config() {
	local f=$WORK/print.yaml out
	printf 'frequency: 49\nupload_interval: 30s\nexport:\n  otlp:\n    endpoint: http://from-file:4318\n    headers:\n      x-oneuptime-token: s3cr3t-e2e\n' >"$f"
	out=$(HOSTPROF_UPLOAD_INTERVAL=20s "$HOSTPROF" agent --config "$f" --print-config -F 29 2>&1)
	if grep -q s3cr3t-e2e <<<"$out"; then
		fail agent_print_config "the header value is printed"
	elif ! grep -q '^frequency: 29  # flag' <<<"$out" || ! grep -q '^upload_interval: 20s  # environment: HOSTPROF_UPLOAD_INTERVAL' <<<"$out" ||
		! grep -q 'endpoint: "http://from-file:4318"  # .*print.yaml:5' <<<"$out" || ! grep -q 'x-oneuptime-token: "\*\*\*"' <<<"$out"; then
		fail agent_print_config "precedence or masking wrong: $(grep -E 'frequency|upload_interval|endpoint|token' <<<"$out" | tr '\n' '|')"
	else
		pass agent_print_config "flag > environment > file, each with its source; header values masked"
	fi
}

# The 2-minute form of the soak (bench/soak.sh --check): the agent at 99 Hz under process churn;
# its RSS, beside the DWARF cache that fills to its own bound, must stay flat after the warm-up.
t_agent_soak() {
	local out rc
	out=$("$ROOT/bench/soak.sh" --check "$HOSTPROF" "$WL/short_lived" 120 10 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail agent_soak "$(tail -4 <<<"$out" | tr '\n' ' ')"
	else
		pass agent_soak "$(tail -1 <<<"$out"); samples (s, RSS KiB): $(awk '$1 ~ /^[0-9]+$/ { printf "%s:%s ", $1, $2 }' <<<"$out")"
	fi
}
