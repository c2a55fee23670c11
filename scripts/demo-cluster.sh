#!/usr/bin/env bash
# `make demo-cluster`: the clustered engines (docs/SCALING.md, "A clustered broker tier" and "A
# clustered state tier") on one machine: three RabbitMQ nodes (one cluster, the MQTT plugin, a
# quorum queue; the registry's accounts imported, no anonymous logins: docs/EDGE.md "Broker
# accounts on RabbitMQ"), a Redis Cluster of three primaries and three replicas, three `dsekp edge`
# processes consuming the uplink queue over AMQP (each from another node) with the session
# states in the Redis Cluster, and three `dsekp device` fleets, one on each broker node. Prints
# how the frames were split over the edges and whether every frame the devices sent is in the
# union of the edges' telemetry tables exactly once. Everything runs on free loopback ports and
# is stopped on exit (also on Ctrl-C); the files stay in results/cluster-<UTC timestamp>/.
#
#   BUILD_DIR    where bin/dsekp is (default build)
#   DEVICES      devices per fleet (default 3; three fleets)
#   FRAMES       DATA frames per device (default 100)
#   INTERVAL_MS  time between two frames of one device (default 100)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=${BUILD_DIR:-build}
devices=${DEVICES:-3}
frames=${FRAMES:-100}
interval_ms=${INTERVAL_MS:-100}
dsekp="$PWD/$build_dir/bin/dsekp"
rabbitmq_server=/usr/lib/rabbitmq/bin/rabbitmq-server
rabbitmqctl=/usr/lib/rabbitmq/bin/rabbitmqctl
[ -x "$dsekp" ] || { echo "demo-cluster: $dsekp not built (make build)" >&2; exit 2; }
for tool in redis-server redis-cli epmd python3 "$rabbitmq_server"; do
  command -v "$tool" >/dev/null ||
    { echo "demo-cluster: $tool not found (make deps)" >&2; exit 2; }
done

run_dir="results/cluster-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$run_dir"
run_dir=$(cd "$run_dir" && pwd)
pids=()
cleanup() {
  # The Erlang VMs outlive their start scripts: stop them by their pid files.
  for pid_file in "$run_dir"/rabbit/node*/rabbit.pid; do
    [ -s "$pid_file" ] && kill "$(cat "$pid_file")" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
serving() {  # serving PORT: something accepts connections there
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
wait_serving() {  # wait_serving PORT SECONDS WHAT
  for _ in $(seq 1 $(($2 * 10))); do serving "$1" && return 0; sleep 0.1; done
  echo "demo-cluster: $3 not serving on port $1 within $2 s" >&2
  return 1
}

# --- RabbitMQ: three nodes with their own epmd and cookie, started one after the other (the
# first forms the cluster, the others join it), as tests/broker_compat/rabbitmq_cluster.cpp.
rabbit="$run_dir/rabbit"
mkdir -p "$rabbit/home"
printf 'DSEKPDEMO%s' "$$" >"$rabbit/home/.erlang.cookie"
chmod 400 "$rabbit/home/.erlang.cookie"
echo '[rabbitmq_mqtt].' >"$rabbit/enabled_plugins"
epmd_port=$(free_port)
epmd -port "$epmd_port" -address 127.0.0.1 &
pids+=($!)
names=() amqp=() mqtt=()
for i in 0 1 2; do
  names+=("demo$$n$i@localhost")
  amqp+=("$(free_port)")
  mqtt+=("$(free_port)")
done
for i in 0 1 2; do
  node="$rabbit/node$i"
  mkdir -p "$node/mnesia" "$node/log"
  cat >"$node/rabbitmq.conf" <<EOF
listeners.tcp.1 = 127.0.0.1:${amqp[$i]}
mqtt.listeners.tcp.1 = 127.0.0.1:${mqtt[$i]}
mqtt.allow_anonymous = false
mqtt.durable_queue_type = quorum
net_ticktime = 15
cluster_partition_handling = pause_minority
log.console = false
cluster_formation.peer_discovery_backend = classic_config
cluster_formation.classic_config.nodes.1 = ${names[0]}
cluster_formation.classic_config.nodes.2 = ${names[1]}
cluster_formation.classic_config.nodes.3 = ${names[2]}
EOF
  env HOME="$rabbit/home" RABBITMQ_NODENAME="${names[$i]}" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
    RABBITMQ_DIST_PORT="$(free_port)" ERL_EPMD_PORT="$epmd_port" ERL_EPMD_ADDRESS=127.0.0.1 \
    RABBITMQ_MNESIA_BASE="$node/mnesia" RABBITMQ_LOG_BASE="$node/log" \
    RABBITMQ_CONFIG_FILE="$node/rabbitmq.conf" RABBITMQ_ENABLED_PLUGINS_FILE="$rabbit/enabled_plugins" \
    RABBITMQ_PID_FILE="$node/rabbit.pid" "$rabbitmq_server" >"$node/rabbit.out" 2>"$node/rabbit.err" &
  pids+=($!)
  wait_serving "${mqtt[$i]}" 120 "RabbitMQ node $i (MQTT)"
  wait_serving "${amqp[$i]}" 120 "RabbitMQ node $i (AMQP)"
done
env HOME="$rabbit/home" ERL_EPMD_PORT="$epmd_port" "$rabbitmqctl" -n "${names[0]}" \
  await_online_nodes 3 --timeout 60 >/dev/null

# --- Redis Cluster: six nodes (AOF, fsync always), three primaries with a replica each.
redis_nodes=()
for i in 0 1 2 3 4 5; do
  port=$(free_port)
  mkdir -p "$run_dir/redis/node$i"
  redis-server --bind 127.0.0.1 --port "$port" --cluster-enabled yes \
    --cluster-port "$(free_port)" --cluster-config-file "$run_dir/redis/node$i/nodes.conf" \
    --cluster-node-timeout 1000 --save '' --appendonly yes --appendfsync always \
    --dir "$run_dir/redis/node$i" --logfile "$run_dir/redis/node$i/redis.log" &
  pids+=($!)
  wait_serving "$port" 10 "Redis node $i"
  redis_nodes+=("127.0.0.1:$port")
done
redis-cli --cluster create "${redis_nodes[@]}" --cluster-replicas 1 --cluster-yes \
  >"$run_dir/redis/create.out"
# Ready once every slot is served and every replica has its primary's data (until then the
# edges' commits would wait for the replicas' WAIT).
ready() {
  redis-cli -p "${redis_nodes[0]#*:}" cluster info | grep -q cluster_state:ok || return 1
  for node in "${redis_nodes[@]}"; do
    info=$(redis-cli -p "${node#*:}" info replication)
    if grep -q role:slave <<<"$info" && ! grep -q master_link_status:up <<<"$info"; then
      return 1
    fi
  done
}
for _ in $(seq 1 300); do ready && break; sleep 0.1; done
seeds=$(IFS=,; echo "${redis_nodes[*]}")

# --- The fleets' credentials (one fleet per broker node) and the edges.
registry="$run_dir/registry.db"
for fleet in 0 1 2; do
  for d in $(seq 1 "$devices"); do
    "$dsekp" keys add "dev-$fleet-$d" --db "$registry" --broker "127.0.0.1:${mqtt[$fleet]}" \
      >"$run_dir/dev-$fleet-$d.json" 2>>"$run_dir/keys.err"
  done
  python3 - "$run_dir" "$fleet" <<'EOF'
import glob, json, sys
d, fleet = sys.argv[1], sys.argv[2]
files = sorted(glob.glob("%s/dev-%s-*.json" % (d, fleet)))
json.dump([json.load(open(f)) for f in files], open("%s/fleet-%s.json" % (d, fleet), "w"))
EOF
done

# The registry's accounts on the broker, as docs/EDGE.md sets them up: devices log in as
# themselves, the edges with their account; the guest login goes.
# (Everything on loopback here: a deployment keeps the AMQP listener from the devices' reach.)
"$dsekp" keys broker-config --db "$registry" --edge-user edge --amqp-queue demo-uplink \
  --rabbitmq-definitions "$run_dir/rabbitmq-definitions.json" >"$run_dir/rabbitmq.conf-lines" \
  2>>"$run_dir/keys.err" || { tail -3 "$run_dir/keys.err" >&2; exit 1; }
ctl() { env HOME="$rabbit/home" ERL_EPMD_PORT="$epmd_port" "$rabbitmqctl" -n "${names[0]}" "$@"; }
ctl import_definitions "$run_dir/rabbitmq-definitions.json" >/dev/null
ctl delete_user guest >/dev/null

for k in 0 1 2; do
  # Each edge starts on another node (and moves to the next one if its node goes).
  nodes_from_k=""
  for j in 0 1 2; do
    nodes_from_k+="${nodes_from_k:+,}127.0.0.1:${amqp[$(((k + j) % 3))]}"
  done
  "$dsekp" edge --amqp "$nodes_from_k" --amqp-queue demo-uplink --username edge \
    --db "$registry" --store "redis+cluster://$seeds/demo:" --client-id "edge-$k" \
    --downlink-lane "$k/3" --state-db "$run_dir/edge-$k.state" --logs-dir "$run_dir/edge-$k" \
    --metrics off --replay-window 1024 --ready-file "$run_dir/edge-$k.ready" \
    2>"$run_dir/edge-$k.err" &
  pids+=($!)
done
for k in 0 1 2; do
  for _ in $(seq 1 300); do [ -e "$run_dir/edge-$k.ready" ] && break; sleep 0.1; done
  [ -e "$run_dir/edge-$k.ready" ] || { echo "demo-cluster: edge-$k not ready" >&2; exit 1; }
done
echo "demo-cluster: RabbitMQ on AMQP ${amqp[*]} / MQTT ${mqtt[*]}, Redis Cluster on $seeds," \
  "three edges ready"

fleet_pids=()
for fleet in 0 1 2; do
  "$dsekp" device --broker "127.0.0.1:${mqtt[$fleet]}" --mode dsekp --qos 1 \
    --credentials "$run_dir/fleet-$fleet.json" --count "$frames" \
    --interval-ms "$interval_ms" --logs-dir "$run_dir/devices-$fleet" \
    --summary-json "$run_dir/devices-$fleet/summary.json" 2>"$run_dir/devices-$fleet.err" &
  fleet_pids+=($!)
done
for pid in "${fleet_pids[@]}"; do wait "$pid"; done
sleep 2  # the last frames' batches

echo "fleets: 3 x $devices devices x $frames frames, one fleet on each broker node"
python3 scripts/exactly_once_check.py "$run_dir/devices-*/client_logs_dsekp.csv" \
  "$run_dir/edge-0.state" "$run_dir/edge-1.state" "$run_dir/edge-2.state"
echo "demo-cluster: files in $run_dir"
