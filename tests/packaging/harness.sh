# Shared by the packaging tests (sourced): the tools check, a private directory removed at exit
# (kept, and named, after a failure), the processes started (stopped at exit by their PIDs),
# a failure that shows the logs, a free loopback port, and waiting for a condition.
#
#   source harness.sh NAME TOOL...      sets $dir, $pids and $mosquitto_bin; defines fail,
#                                       free_port, wait_for
harness_name=$1
shift
for tool in "$@"; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
    { echo "$harness_name: $tool not found (make deps)" >&2; exit 1; }
done
mosquitto_bin=$(command -v mosquitto || echo /usr/sbin/mosquitto)

dir=$(mktemp -d "/tmp/dsekp-$harness_name-XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${keep:-0}" = 1 ]; then echo "$harness_name: files kept in $dir" >&2; else rm -rf "$dir"; fi
}
trap cleanup EXIT
fail() {
  keep=1
  echo "$harness_name: FAIL: $*" >&2
  tail -n 20 "$dir"/*.log "$dir"/*.err 2>/dev/null >&2 || true
  exit 1
}
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_for() {  # wait_for SECONDS COMMAND...: until COMMAND succeeds
  local tries=$(($1 * 10))
  shift
  for _ in $(seq 1 "$tries"); do "$@" && return 0; sleep 0.1; done
  return 1
}
