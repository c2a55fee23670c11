#!/usr/bin/env bash
# `make demo-multi-edge`: three edges serving one fleet through Redis (issue 7, docs/SCALING.md).
#
# Starts, on free loopback ports, a private Redis 7 (AOF on) and a private Mosquitto, provisions
# DEVICES devices, runs three `dsekp edge` processes in one MQTT 5 shared-subscription group with
# the Redis session store, then a `dsekp device` fleet (FRAMES DSEKP frames per device), and
# prints how the frames were split over the edges and whether every frame the devices sent is
# in the union of the edges' telemetry tables exactly once. Everything it starts is stopped on
# exit (also on Ctrl-C); its files stay in results/multi-edge-<UTC timestamp>/.
#
#   BUILD_DIR  where bin/dsekp is (default build)
#   DEVICES    devices in the fleet (default 5)
#   FRAMES     DATA frames per device (default 100)
#   INTERVAL_MS  time between two frames of one device (default 100)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build}
devices=${DEVICES:-5}
frames=${FRAMES:-100}
interval_ms=${INTERVAL_MS:-100}
dsekp="$PWD/$build_dir/bin/dsekp"
[ -x "$dsekp" ] || { echo "demo-multi-edge: $dsekp not built (make build)" >&2; exit 2; }
for tool in redis-server mosquitto python3; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
    { echo "demo-multi-edge: $tool not found (make deps)" >&2; exit 2; }
done
mosquitto_bin=$(command -v mosquitto || echo /usr/sbin/mosquitto)

run_dir="results/multi-edge-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$run_dir"
run_dir=$(cd "$run_dir" && pwd)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_for() {  # wait_for FILE SECONDS
  for _ in $(seq 1 $(($2 * 10))); do [ -e "$1" ] && return 0; sleep 0.1; done
  echo "demo-multi-edge: $1 did not appear within $2 s" >&2
  return 1
}

redis_port=$(free_port)
mkdir -p "$run_dir/redis"
redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly yes \
  --dir "$run_dir/redis" --logfile "$run_dir/redis/redis.log" &
pids+=($!)

broker_port=$(free_port)
cat >"$run_dir/mosquitto.conf" <<EOF
listener $broker_port 127.0.0.1
allow_anonymous true
max_queued_messages 0
log_dest file $run_dir/mosquitto.log
EOF
"$mosquitto_bin" -c "$run_dir/mosquitto.conf" &
pids+=($!)
sleep 0.5

registry="$run_dir/registry.db"
for i in $(seq -w 1 "$devices"); do
  "$dsekp" keys add "dev-$i" --db "$registry" --broker "127.0.0.1:$broker_port" \
    >"$run_dir/dev-$i.json" 2>>"$run_dir/keys.err"
done
python3 - "$run_dir" <<'EOF'
import glob, json, sys
d = sys.argv[1]
json.dump([json.load(open(f)) for f in sorted(glob.glob(d + "/dev-*.json"))], open(d + "/fleet.json", "w"))
EOF

for k in 1 2 3; do
  "$dsekp" edge --broker "127.0.0.1:$broker_port" --db "$registry" \
    --store "redis://127.0.0.1:$redis_port/demo" --shared-group demo --client-id "edge-$k" \
    --downlink-lane "$((k - 1))/3" \
    --state-db "$run_dir/edge-$k.state" --logs-dir "$run_dir/edge-$k" --metrics off \
    --replay-window 1024 --ready-file "$run_dir/edge-$k.ready" 2>"$run_dir/edge-$k.err" &
  pids+=($!)
done
for k in 1 2 3; do wait_for "$run_dir/edge-$k.ready" 15; done
echo "demo-multi-edge: Redis on $redis_port, Mosquitto on $broker_port, three edges ready"

"$dsekp" device --broker "127.0.0.1:$broker_port" --mode dsekp --credentials "$run_dir/fleet.json" \
  --anonymous --count "$frames" --interval-ms "$interval_ms" --logs-dir "$run_dir/devices" \
  --summary-json "$run_dir/devices/summary.json" 2>"$run_dir/devices.err"
sleep 2  # the last frames' batches

echo "fleet: $devices devices x $frames frames"
python3 scripts/exactly_once_check.py "$run_dir/devices/client_logs_dsekp.csv" \
  "$run_dir/edge-1.state" "$run_dir/edge-2.state" "$run_dir/edge-3.state"
echo "demo-multi-edge: files in $run_dir"
