#!/usr/bin/env bash
# packaging/prometheus and packaging/grafana against the real thing: a real Prometheus (Debian's
# package) scrapes a real `dsekp edge` (behind a real Mosquitto, fed by a `dsekp device` fleet)
# every second with the shipped alert rules loaded; then every query of the Grafana dashboard
# is evaluated through Prometheus' HTTP API and must return data, every rule must evaluate
# without error, and the operational metrics must say what happened (3 devices seen, broker
# connected). Grafana itself is not installable here: its JSON is checked as Prometheus sees its
# queries, not rendered.
#
#   prometheus_test.sh DSEKP_BINARY PACKAGING_DIR
set -euo pipefail
dsekp=$1
packaging=$(cd "$2" && pwd)
source "$(dirname "$0")/harness.sh" prometheus_test prometheus promtool mosquitto python3

promtool check rules "$packaging/prometheus/dsekp-alerts.yml"
(cd "$packaging/prometheus" && promtool test rules dsekp-alerts.test.yml)

broker_port=$(free_port)
cat >"$dir/mosquitto.conf" <<CONF
listener $broker_port 127.0.0.1
allow_anonymous true
log_dest stderr
CONF
"$mosquitto_bin" -c "$dir/mosquitto.conf" 2>"$dir/mosquitto.log" &
pids+=($!)

for i in 1 2 3; do
  "$dsekp" keys add "dev-$i" --db "$dir/registry.db" --broker "127.0.0.1:$broker_port" \
    >"$dir/dev-$i.json" 2>>"$dir/keys.err"
done
python3 - "$dir" <<'PY'
import glob, json, sys
d = sys.argv[1]
json.dump([json.load(open(f)) for f in sorted(glob.glob(d + "/dev-*.json"))], open(d + "/fleet.json", "w"))
PY

metrics_port=$(free_port)
"$dsekp" edge --broker "127.0.0.1:$broker_port" --db "$dir/registry.db" --logs-dir "$dir/logs" \
  --metrics "127.0.0.1:$metrics_port" --ready-file "$dir/edge.ready" 2>"$dir/edge.err" &
pids+=($!)
for _ in $(seq 1 150); do [ -e "$dir/edge.ready" ] && break; sleep 0.1; done
[ -e "$dir/edge.ready" ] || fail "the edge did not become ready"

prometheus_port=$(free_port)
cat >"$dir/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $packaging/prometheus/dsekp-alerts.yml
scrape_configs:
  - job_name: dsekp-edge
    static_configs:
      - targets: ["127.0.0.1:$metrics_port"]
CONF
prometheus --config.file "$dir/prometheus.yml" --storage.tsdb.path "$dir/tsdb" \
  --web.listen-address "127.0.0.1:$prometheus_port" 2>"$dir/prometheus.log" &
pids+=($!)

# The fleet sends only once Prometheus scrapes the edge, so that every rate() sees it grow.
python3 - "$prometheus_port" <<'PY' || fail "Prometheus did not scrape the edge"
import json, sys, time, urllib.parse, urllib.request
url = "http://127.0.0.1:%s/api/v1/query?%s" % (sys.argv[1], urllib.parse.urlencode(
    {"query": 'count_over_time(up{job="dsekp-edge"}[1m])'}))
for _ in range(60):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            result = json.load(r)["data"]["result"]
        if result and float(result[0]["value"][1]) >= 2:
            sys.exit(0)
    except OSError:
        pass
    time.sleep(1)
sys.exit(1)
PY

"$dsekp" device --broker "127.0.0.1:$broker_port" --mode dsekp --credentials "$dir/fleet.json" \
  --anonymous --count 30 --interval-ms 100 --logs-dir "$dir/devices" 2>"$dir/devices.err" ||
  fail "the device fleet failed"

python3 - "$prometheus_port" "$packaging/grafana/dsekp-edge-dashboard.json" \
  "$(grep -c '^ *- alert:' "$packaging/prometheus/dsekp-alerts.yml")" <<'PY' || fail "queries"
import json, math, sys, time, urllib.parse, urllib.request
port, dashboard, shipped_rules = sys.argv[1], sys.argv[2], int(sys.argv[3])

def query(expr):
    url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": expr}))
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise SystemExit("query failed: %s: %s" % (expr, body))
    return body["data"]["result"]

def values(expr):
    return [float(s["value"][1]) for s in query(expr)]

# A few scrapes after the fleet's last frame, so the last counts are in.
time.sleep(4)

failures = []
doc = json.load(open(dashboard))
exprs = [t["expr"] for p in doc["panels"] for t in p["targets"]]
for expr in exprs:
    q = expr.replace("$__rate_interval", "30s")
    result = query(q)
    finite = [s for s in result if not math.isnan(float(s["value"][1]))]
    print("%-4s %3d series  %s" % ("ok" if finite else "EMPTY", len(result), q))
    if not finite:
        failures.append(q)

checks = {
    'dsekp_devices_seen{job="dsekp-edge"}': lambda v: v == [3.0],
    'dsekp_broker_connected{job="dsekp-edge"}': lambda v: v == [1.0],
    'sum(dsekp_frames_total{job="dsekp-edge", mode="dsekp", outcome="accepted"})': lambda v: v == [90.0],
    'dsekp_devices_silent{job="dsekp-edge", over="5m"}': lambda v: v == [0.0],
    'process_open_fds{job="dsekp-edge"}': lambda v: len(v) == 1 and v[0] > 3,
    'process_resident_memory_bytes{job="dsekp-edge"}': lambda v: len(v) == 1 and v[0] > 1e6,
    'time() - process_start_time_seconds{job="dsekp-edge"}': lambda v: len(v) == 1 and 0 < v[0] < 600,
}
for expr, ok in checks.items():
    v = values(expr)
    print("%-4s %s = %s" % ("ok" if ok(v) else "BAD", expr, v))
    if not ok(v):
        failures.append(expr)

with urllib.request.urlopen("http://127.0.0.1:%s/api/v1/rules" % port, timeout=10) as r:
    groups = json.load(r)["data"]["groups"]
rules = [rule for g in groups for rule in g["rules"]]
bad = [r["name"] for r in rules if r.get("health") != "ok"]
firing = [r["name"] for r in rules if r.get("state") == "firing"]
print("rules: %d loaded, unhealthy %s, firing %s" % (len(rules), bad, firing))
if len(rules) != shipped_rules or bad or firing:
    failures.append("rules")
if failures:
    raise SystemExit("failed: %s" % failures)
PY
echo "prometheus: passed"
