#!/usr/bin/env bash
# packaging/node-red and packaging/telegraf against the messages a real edge republishes: a real
# Mosquitto with the accounts and ACL `dsekp keys broker-config` writes, a real `dsekp edge
# --republish --home-assistant`, a `dsekp device` fleet, and two reader accounts.
# - Node-RED (the npm package, installed once into a cache directory) runs the shipped flow,
#   with a file node added after each of its two outputs: every reading must come out once, as
#   the edge logged it, and each device's availability must go online and then offline.
# - Telegraf is not installable here (no Debian package): mosquitto_sub, logged in as the
#   Telegraf account, records every message under the republish base, and this script applies
#   the shipped config to them as mqtt_consumer and its json_v2 parser do (the topic filters,
#   the tag and field paths, their types, the timestamp): one metric per logged reading.
#
#   consumers_test.sh DSEKP_BINARY PACKAGING_DIR
set -euo pipefail
dsekp=$1
packaging=$(cd "$2" && pwd)
node_red_version=4.1.15
node_red_dir=${DSEKP_NODE_RED_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dsekp/node-red-$node_red_version}
source "$(dirname "$0")/harness.sh" consumers_test mosquitto mosquitto_sub node npm python3

# Node-RED from npm, once per version (into a temporary directory first, so that an interrupted
# install is never taken for a finished one).
if [ ! -f "$node_red_dir/node_modules/node-red/red.js" ]; then
  mkdir -p "$(dirname "$node_red_dir")"
  staging=$(mktemp -d "$node_red_dir.XXXXXX")
  echo "consumers_test: installing node-red@$node_red_version into $node_red_dir" >&2
  npm install --prefix "$staging" --no-audit --no-fund --loglevel error \
    "node-red@$node_red_version" >"$dir/npm.log" 2>&1 || { rm -rf "$staging"; fail "npm install node-red"; }
  rm -rf "$node_red_dir"
  mv "$staging" "$node_red_dir"
fi

# The registry, three devices, the two reader accounts, the broker's files.
db=$dir/registry.db
broker_port=$(free_port)
for i in 1 2 3; do
  "$dsekp" keys add "dev-$i" --db "$db" --broker "127.0.0.1:$broker_port" >"$dir/dev-$i.json" 2>>"$dir/keys.err"
done
for reader in node-red telegraf; do
  "$dsekp" keys account add "$reader" --role reader --db "$db" >/dev/null 2>>"$dir/keys.err"
done
"$dsekp" keys broker-config --db "$db" --out-dir "$dir/broker" --edge-user edge --home-assistant \
  >"$dir/broker-lines.conf" 2>>"$dir/keys.err" || fail "keys broker-config"
password() { "$dsekp" keys account show "$1" --reveal --db "$db" | python3 -c 'import json,sys; print(json.load(sys.stdin)["password"])'; }
python3 - "$dir" <<'PY'
import glob, json, sys
d = sys.argv[1]
json.dump([json.load(open(f)) for f in sorted(glob.glob(d + "/dev-*.json"))], open(d + "/fleet.json", "w"))
PY
{
  echo "listener $broker_port 127.0.0.1"
  cat "$dir/broker-lines.conf"
  echo "user $(id -un)"
  echo "log_dest stderr"
  echo "log_type all"
} >"$dir/mosquitto.conf"
"$mosquitto_bin" -c "$dir/mosquitto.conf" 2>"$dir/mosquitto.log" &
pids+=($!)
wait_for 10 grep -q "mosquitto version .* running" "$dir/mosquitto.log" || fail "Mosquitto did not start"

"$dsekp" edge --broker "127.0.0.1:$broker_port" --db "$db" --logs-dir "$dir/logs" --metrics off \
  --republish --home-assistant --device-offline-after 2 --ready-file "$dir/edge.ready" \
  2>"$dir/edge.err" &
pids+=($!)
wait_for 15 test -e "$dir/edge.ready" || fail "the edge did not become ready"

# Node-RED: the shipped flow pointed at this broker, a file node after each output, the reader's
# credentials in clear (credentialSecret false: a test directory, not a deployment).
mkdir -p "$dir/node-red"
python3 - "$packaging/node-red/dsekp-flow.json" "$dir/node-red" "$broker_port" "$(password node-red)" <<'PY'
import json, sys
flow_file, user_dir, port, password = sys.argv[1:]
flow = json.load(open(flow_file))
nodes = {n["id"]: n for n in flow}
broker = nodes["dsekp-broker"]
broker["port"] = port
out = user_dir + "/out.jsonl"
for output, kind in (("dsekp-reading", "reading"), ("dsekp-availability", "availability")):
    capture = "test-capture-" + kind
    nodes[output]["wires"][0].append(capture)
    flow.append({"id": capture, "type": "function", "z": "dsekp-tab", "name": capture,
                 "func": "msg.payload = JSON.stringify({kind: %s, topic: msg.topic, time: msg.time, "
                         "payload: msg.payload}); return msg;" % json.dumps(kind),
                 "outputs": 1, "x": 700, "y": 240, "wires": [["test-file"]]})
flow.append({"id": "test-file", "type": "file", "z": "dsekp-tab", "name": "test-file",
             "filename": out, "filenameType": "str", "appendNewline": True, "createDir": True,
             "overwriteFile": "false", "encoding": "none", "x": 900, "y": 240, "wires": [[]]})
json.dump(flow, open(user_dir + "/flows.json", "w"), indent=1)
json.dump({"dsekp-broker": {"user": "node-red", "password": password}},
          open(user_dir + "/flows_cred.json", "w"))
PY
node_red_port=$(free_port)
cat >"$dir/node-red/settings.js" <<JS
module.exports = {
  uiHost: "127.0.0.1",
  uiPort: $node_red_port,
  flowFile: "flows.json",
  credentialSecret: false,
  diagnostics: { enabled: false },
  telemetry: { enabled: false },
  logging: { console: { level: "info" } },
};
JS
node "$node_red_dir/node_modules/node-red/red.js" --settings "$dir/node-red/settings.js" \
  --userDir "$dir/node-red" >"$dir/node-red.log" 2>&1 &
pids+=($!)

# Telegraf's account: every message under the base (what mqtt_consumer's filters leave out is
# checked below), one "topic<TAB>payload" line each.
mosquitto_sub -h 127.0.0.1 -p "$broker_port" -V mqttv5 -u telegraf -P "$(password telegraf)" \
  -i telegraf -q 1 -t 'plain/#' -F '%t	%p' >"$dir/telegraf.messages" 2>"$dir/mosquitto_sub.err" &
pids+=($!)

# Both subscribed (the broker logs each subscription) before the fleet sends.
subscribed() {
  grep -q "^[0-9]*: node-red 1 plain/+$" "$dir/mosquitto.log" &&
    grep -q "^[0-9]*: node-red 1 plain/+/availability$" "$dir/mosquitto.log" &&
    grep -q "^[0-9]*: telegraf 1 plain/#$" "$dir/mosquitto.log"
}
wait_for 60 subscribed || fail "Node-RED and mosquitto_sub did not subscribe"

"$dsekp" device --broker "127.0.0.1:$broker_port" --mode dsekp --credentials "$dir/fleet.json" \
  --count 5 --interval-ms 100 --logs-dir "$dir/devices" 2>"$dir/devices.err" ||
  fail "the device fleet failed"

# Then every device goes offline (2 s without a frame) and Node-RED hears it. (Before its first
# frame a registered device may already have been published offline once: a slow start.)
went_offline() {
  python3 - "$dir/node-red/out.jsonl" <<'PY'
import json, sys
try:
    out = [json.loads(line) for line in open(sys.argv[1])]
except OSError:
    sys.exit(1)
for dev in ("dev-1", "dev-2", "dev-3"):
    states = [o["payload"] for o in out if o["kind"] == "availability" and o["topic"] == dev]
    if "online" not in states or states[-1] != "offline":
        sys.exit(1)
PY
}
wait_for 30 went_offline || fail "Node-RED did not see the three devices go offline"
sleep 0.5

python3 - "$dir" "$packaging/telegraf/dsekp.conf" <<'PY' || fail "the consumers' view"
import csv, json, os, re, sys, tomllib
d, telegraf_conf = sys.argv[1:]
failures = []
def check(ok, what):
    print("%-4s %s" % ("ok" if ok else "BAD", what))
    if not ok:
        failures.append(what)

# What the edge accepted: its CSV log (dev_id, plaintext, recvts_ms).
with open(d + "/logs/server_logs_dsekp.csv", newline="") as f:
    rows = list(csv.reader(f))[1:]
logged = sorted((r[2], json.loads(r[7])["t"], json.loads(r[7])["h"], int(r[8])) for r in rows)
check(len(logged) == 15, "the edge logged 15 readings (%d)" % len(logged))

# Node-RED: each reading once, as logged; each device online, then offline.
out = [json.loads(line) for line in open(d + "/node-red/out.jsonl")]
readings = [o for o in out if o["kind"] == "reading"]
seen = sorted((o["topic"], o["payload"]["t"], o["payload"]["h"]) for o in readings)
check(seen == [x[:3] for x in logged], "Node-RED: every reading once, dev_id as topic")
check(all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"]) for o in readings),
      "Node-RED: msg.time is the ISO-8601 time")
for dev in ("dev-1", "dev-2", "dev-3"):
    states = [o["payload"] for o in out if o["kind"] == "availability" and o["topic"] == dev]
    first_online = states.index("online") if "online" in states else len(states)
    check(states[first_online:] == ["online", "offline"] and set(states[:first_online]) <= {"offline"},
          "Node-RED: %s online then offline (%s)" % (dev, states))

# Telegraf: the shipped config applied to the messages its account received.
conf = tomllib.load(open(telegraf_conf, "rb"))
consumer = conf["inputs"]["mqtt_consumer"][0]
check(consumer["data_format"] == "json_v2" and consumer["qos"] == 1, "Telegraf: json_v2, QoS 1")
check(not consumer.get("persistent_session") or consumer.get("client_id"),
      "Telegraf: a persistent session has a client_id (mqtt_consumer refuses one without)")
check(re.fullmatch(r"\$\{[A-Z_]+\}", consumer["password"]) is not None,
      "Telegraf: the password comes from the environment")

def matches(flt, topic):
    f, t = flt.split("/"), topic.split("/")
    for i, part in enumerate(f):
        if part == "#":
            return True
        if i >= len(t) or (part != "+" and part != t[i]):
            return False
    return len(f) == len(t)

def path(doc, p):  # GJSON's plain dotted paths, all this config uses
    for key in p.split("."):
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc

messages = [line.rstrip("\n").split("\t", 1) for line in open(d + "/telegraf.messages")]
parser = consumer["json_v2"][0]
metrics = []
for topic, payload in messages:
    if not any(matches(f, topic) for f in consumer["topics"]):
        continue
    doc = json.loads(payload)  # json_v2 drops the whole message if it is not JSON
    tags = {}
    for t in parser["tag"]:
        v = path(doc, t["path"])
        if v is None or isinstance(v, (dict, list)):
            failures.append("tag %s missing in %s" % (t["path"], payload))
            continue
        tags[t.get("rename", t["path"])] = str(v)
    fields = {}
    for fld in parser["field"]:
        v = path(doc, fld["path"])
        if v is None and fld.get("optional"):
            continue
        if fld.get("type") == "float" and not isinstance(v, (int, float)):
            failures.append("field %s is not a number in %s" % (fld["path"], payload))
            continue
        fields[fld.get("rename", fld["path"])] = float(v)
    ts = path(doc, parser["timestamp_path"])
    check_ts = parser["timestamp_format"] == "unix_ms" and isinstance(ts, int)
    if not check_ts:
        failures.append("timestamp %r in %s" % (ts, payload))
    metrics.append((parser["measurement_name"], tags, fields, ts))
skipped = [t for t, _ in messages if not any(matches(f, t) for f in consumer["topics"])]
check(any(t.endswith("/availability") for t in skipped),
      "Telegraf: the availability messages are not fed to json_v2 (%d left out)" % len(skipped))
got = sorted((m[1]["dev_id"], m[2]["t"], m[2]["h"], m[3]) for m in metrics)
check(got == logged, "Telegraf: one dsekp_reading per logged reading, timed by recvts_ms")
check(all(m[0] == "dsekp_reading" and m[1]["mode"] == "dsekp" for m in metrics),
      "Telegraf: measurement dsekp_reading, tag mode=dsekp")
if failures:
    raise SystemExit("failed: %s" % failures)
PY
echo "consumers: passed"
