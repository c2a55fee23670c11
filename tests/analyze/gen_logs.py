#!/usr/bin/env python3
"""Synthetic experiment logs for `dsekp analyze` (tests and the 1M-row measurement).

Writes the files of docs/LOGS.md -- client_logs_{psk,dsekp}.csv, server_logs_{psk,dsekp}.csv and
client_handshakes_dsekp.csv -- in the paper's column order, with lognormal latencies, rare
outliers above 10 s, packet loss, duplicate deliveries, several DSEKP sessions per device and
optionally injected bad rows. With --truth it also writes what analyze must find (exact counts,
latency and payload means) as JSON, computed here independently of analyze.

With --micros the logs also carry our microsecond columns (client `sendts_us`; server
`sendts_ms`, `recvts_us`, as `dsekp device` and `dsekp edge` write them) and the truth gains the
one-way latency in µs per mode ("micros": n, mean, sd, median, p95, p99, max, computed with
Python's statistics module); --bad-micros N spoils N µs values in the PSK server log and N in the
DSEKP client log (empty, not a number, or more than 1 ms from the ms column), which analyze must
leave out of the µs table only. Without --micros the output is byte for byte what it always was.

Standard library only. Example (the 1M-row measurement of docs/PERFORMANCE.md):
  python3 tests/analyze/gen_logs.py --out /tmp/logs1m --packets 1000000 --devices 50 --sessions 20
"""

import argparse
import base64
import csv
import json
import math
import os
import random
import statistics
import time

PLAINTEXT = '{"t":24.0,"h":51.0}'

CLIENT_COLUMNS = {
    "psk": ["seq", "timestamp", "dev_id", "plaintext", "iv", "tag", "ciphertext", "sendts_ms",
            "payload_size"],
    "dsekp": ["seq", "sessctr_id", "timestamp", "dev_id", "plaintext", "iv", "tag", "ciphertext",
              "sendts_ms", "payload_size"],
}
SERVER_COLUMNS = {
    "psk": ["seq", "timestamp", "dev_id", "ciphertext", "iv", "tag", "plaintext", "recvts_ms",
            "latency_ms", "payload_size", "bin_1s", "throughput"],
    "dsekp": ["seq", "timestamp", "dev_id", "sessctr_id", "ciphertext", "iv", "tag", "plaintext",
              "recvts_ms", "latency_ms", "payload_size", "bin_1s", "throughput"],
}
HANDSHAKE_COLUMNS = ["dev_id", "sessctr_id", "init_sent_ms", "ack_recv_ms", "attempts", "outcome"]


def iso(ms):
    """ISO 8601 UTC with milliseconds, as the logs' timestamp column."""
    t = time.gmtime(ms // 1000)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (t[0], t[1], t[2], t[3], t[4], t[5], ms % 1000)


def frame_size(mode, seq, dev_id, sessctr, ct, iv, tag, sendts):
    """Bytes of the on-wire JSON frame (PROTOCOL.md), without building it."""
    size = (len('{"seq":,"dev_id":"","ciphertext":"","iv":"","tag":"","sendts_ms":}') +
            len(str(seq)) + len(dev_id) + len(ct) + len(iv) + len(tag) + len(str(sendts)))
    if mode == "dsekp":
        size += len(',"sessctr_id":') + len(str(sessctr))
    return size


class Writer:
    """A csv.writer that counts lines, so injected bad rows can be reported by line number."""

    def __init__(self, path, header):
        self.file = open(path, "w", newline="")
        self.csv = csv.writer(self.file, lineterminator="\n")
        self.csv.writerow(header)
        self.line = 1

    def row(self, values):
        self.csv.writerow(values)
        self.line += 1
        return self.line

    def raw(self, text):
        self.file.write(text + "\n")
        self.line += 1
        return self.line

    def close(self):
        self.file.close()


def spoil_micros(value, kind):
    """A bad µs value of one of three kinds: empty, not a number, or 5 ms off its ms column."""
    return ["", "%dx" % value, value + 5000][kind % 3]


def micros_truth(latencies_us, outlier_us):
    """The µs statistics analyze must report (quantiles: R type 7 = Python's 'inclusive')."""
    kept = [v for v in latencies_us if v <= outlier_us]
    truth = {"n": len(kept), "outliers": len(latencies_us) - len(kept)}
    if len(kept) >= 2:
        cuts = statistics.quantiles(kept, n=100, method="inclusive")
        truth.update(mean=statistics.fmean(kept), sd=statistics.stdev(kept),
                     median=statistics.median(kept), p95=cuts[94], p99=cuts[98], max=max(kept))
    return truth


def generate_mode(mode, args, rng, start_ms, handshakes):
    """Writes one mode's client and server logs; returns its ground truth."""
    median = args.psk_median if mode == "psk" else args.dsekp_median
    sigma = args.psk_sigma if mode == "psk" else args.dsekp_sigma
    pool = []
    for _ in range(256):
        pool.append((base64.b64encode(rng.randbytes(19)).decode(),
                     base64.b64encode(rng.randbytes(12)).decode(),
                     base64.b64encode(rng.randbytes(16)).decode()))
    client_columns = CLIENT_COLUMNS[mode] + (["sendts_us"] if args.micros else [])
    server_columns = SERVER_COLUMNS[mode] + (["sendts_ms", "recvts_us"] if args.micros else [])
    client = Writer(os.path.join(args.out, "client_logs_%s.csv" % mode), client_columns)
    server = Writer(os.path.join(args.out, "server_logs_%s.csv" % mode), server_columns)
    # µs truth: latencies of server rows that have both good stamps, and the spoiled rows.
    latencies_us = []
    micros = {"bad_server_lines": [], "bad_client_lines": [], "bad_sendts_us_rows": 0}
    bad_micros_left = args.bad_micros if args.micros else 0
    bad_micros_every = max(1, args.packets // (args.bad_micros + 1)) if bad_micros_left else 0
    sent_n = 0
    received_n = 0
    truth = {"sent": 0, "received": 0, "lost": 0, "duplicates": 0, "server_rows": 0,
             "outliers": 0, "sessions": 0, "bad_row_lines": [], "devices": {}}
    latency_sum = 0.0
    latency_n = 0
    payload_sum = 0
    payload_n = 0
    bin_counts = {}
    sessions = args.sessions if mode == "dsekp" else 1
    per_device = args.packets // args.devices
    extra = args.packets % args.devices
    bad_left = args.bad_rows if mode == "psk" else 0
    bad_every = max(1, args.packets // (args.bad_rows + 1)) if bad_left else 0
    rows_written = 0
    # Devices send in turn, each every interval_ms with its own phase, like the testbed.
    streams = []
    for d in range(args.devices):
        dev_id = "esp32-%02d" % (d + 1)
        n = per_device + (1 if d < extra else 0)
        counters = rng.sample(range(1, 65536), sessions) if mode == "dsekp" else [0]
        split = [n // sessions + (1 if s < n % sessions else 0) for s in range(sessions)]
        plan = [(counters[s], q) for s in range(sessions) for q in range(split[s])]
        phase = rng.randrange(args.interval_ms)
        streams.append((dev_id, plan, phase))
        truth["devices"][dev_id] = {"sent": n, "received": 0, "lost": 0, "duplicates": 0}
        if mode == "dsekp":
            truth["sessions"] += sum(1 for s in split if s > 0)
            first = 0
            for s in range(sessions):
                # The handshake starts a little before the session's first packet.
                handshakes.append((dev_id, counters[s],
                                   start_ms + phase + first * args.interval_ms - 1500))
                first += split[s]
    longest = max(len(plan) for _, plan, _ in streams) if streams else 0
    for k in range(longest):
        for dev_id, plan, phase in streams:
            if k >= len(plan):
                continue
            sessctr, seq = plan[k]
            sendts = start_ms + phase + k * args.interval_ms
            ct, iv, tag = pool[(k * 7 + seq) % len(pool)]
            size = frame_size(mode, seq, dev_id, sessctr, ct, iv, tag, sendts)
            stamp = iso(sendts)
            if mode == "psk":
                values = [seq, stamp, dev_id, PLAINTEXT, iv, tag, ct, sendts, size]
            else:
                values = [seq, sessctr, stamp, dev_id, PLAINTEXT, iv, tag, ct, sendts, size]
            client_bad = False
            if args.micros:
                sendts_us = sendts * 1000 + rng.randrange(1000)
                sent_n += 1
                client_bad = (mode == "dsekp" and bad_micros_left > 0 and
                              sent_n % bad_micros_every == 0)
                values.append(spoil_micros(sendts_us, bad_micros_left) if client_bad else sendts_us)
            line = client.row(values)
            if client_bad:
                micros["bad_client_lines"].append(line)
                bad_micros_left -= 1
            truth["sent"] += 1
            dev = truth["devices"][dev_id]
            if rng.random() < args.loss:
                truth["lost"] += 1
                dev["lost"] += 1
                continue
            truth["received"] += 1
            dev["received"] += 1
            copies = 2 if rng.random() < args.duplicate_rate else 1
            truth["duplicates"] += copies - 1
            dev["duplicates"] += copies - 1
            if rng.random() < args.outlier_rate:
                latency = rng.randint(10001, 30000)
            else:
                latency = max(1, round(median * math.exp(sigma * rng.gauss(0.0, 1.0))))
            if args.micros:
                latency_us = latency * 1000 + rng.randrange(-500, 500)
            for copy in range(copies):
                lat = latency + copy * 40  # a redelivery arrives a little later
                recvts = sendts + lat
                if args.micros:
                    # The ms columns follow from the µs stamps, as the edge writes them.
                    recvts_us = sendts_us + latency_us + copy * 40000
                    recvts = recvts_us // 1000
                    lat = recvts - sendts
                b = recvts // 1000
                bin_counts[b] = bin_counts.get(b, 0) + 1
                if mode == "psk":
                    values = [seq, iso(recvts), dev_id, ct, iv, tag, PLAINTEXT, recvts, lat, size,
                              b, bin_counts[b]]
                else:
                    values = [seq, iso(recvts), dev_id, sessctr, ct, iv, tag, PLAINTEXT, recvts,
                              lat, size, b, bin_counts[b]]
                server_bad = False
                if args.micros:
                    received_n += 1
                    server_bad = (mode == "psk" and bad_micros_left > 0 and
                                  received_n % bad_micros_every == 0)
                    values += [sendts, spoil_micros(recvts_us, bad_micros_left) if server_bad
                               else recvts_us]
                line = server.row(values)
                if server_bad:
                    micros["bad_server_lines"].append(line)
                    bad_micros_left -= 1
                elif client_bad:
                    micros["bad_sendts_us_rows"] += 1
                elif args.micros:
                    latencies_us.append(recvts_us - sendts_us)
                truth["server_rows"] += 1
                rows_written += 1
                payload_sum += size
                payload_n += 1
                if lat > args.outlier_ms:
                    truth["outliers"] += 1
                else:
                    latency_sum += lat
                    latency_n += 1
                if bad_left and rows_written % bad_every == 0:
                    # One malformed row of each kind in turn; analyze must count and list them.
                    kind = bad_left % 3
                    if kind == 0:
                        line = server.raw("x,2025-01-01T00:00:00.000Z,%s,a,b,c,d,1,1,1,1,1" % dev_id)
                    elif kind == 1:
                        line = server.raw("7,2025-01-01T00:00:00.000Z,%s,a,b" % dev_id)
                    else:
                        line = server.raw("8,2025-01-01T00:00:00.000Z,,a,b,c,d,1,1,1,1,1")
                    truth["bad_row_lines"].append(line)
                    bad_left -= 1
    client.close()
    server.close()
    truth["latency_mean_ms"] = latency_sum / latency_n if latency_n else None
    truth["latency_n"] = latency_n
    truth["payload_mean_bytes"] = payload_sum / payload_n if payload_n else None
    truth["end_ms"] = start_ms + longest * args.interval_ms + args.interval_ms
    if args.micros:
        micros.update(micros_truth(latencies_us, args.outlier_ms * 1000))
        truth["micros"] = micros
    return truth


def write_handshakes(args, rng, planned):
    """One ok handshake per planned session, some preceded by a timed-out or rejected one."""
    out = Writer(os.path.join(args.out, "client_handshakes_dsekp.csv"), HANDSHAKE_COLUMNS)
    truth = {"handshakes": 0, "ok": 0, "timeout": 0, "rejected": 0, "latency_sum_ms": 0}
    for dev_id, sessctr, t0 in planned:
        if rng.random() < args.handshake_failure_rate:
            outcome = "timeout" if rng.random() < 0.7 else "rejected"
            ack = "" if outcome == "timeout" else t0 + 150
            out.row([dev_id, (sessctr + 1) % 65536, t0, ack, 3 if outcome == "timeout" else 1,
                     outcome])
            truth[outcome] += 1
            truth["handshakes"] += 1
        attempts = 2 if rng.random() < 0.05 else 1
        latency = max(1, round(args.handshake_median * math.exp(0.25 * rng.gauss(0.0, 1.0))))
        latency += (attempts - 1) * 1000
        out.row([dev_id, sessctr, t0, t0 + latency, attempts, "ok"])
        truth["ok"] += 1
        truth["handshakes"] += 1
        truth["latency_sum_ms"] += latency
    out.close()
    truth["latency_mean_ms"] = truth["latency_sum_ms"] / truth["ok"] if truth["ok"] else None
    return truth


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="output directory (created)")
    p.add_argument("--packets", type=int, default=6500, help="client rows per mode")
    p.add_argument("--devices", type=int, default=1)
    p.add_argument("--sessions", type=int, default=1, help="DSEKP sessions per device")
    p.add_argument("--interval-ms", type=int, default=2000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--start-ms", type=int, default=1764460800000)
    p.add_argument("--psk-median", type=float, default=274)
    p.add_argument("--psk-sigma", type=float, default=0.45)
    p.add_argument("--dsekp-median", type=float, default=355)
    p.add_argument("--dsekp-sigma", type=float, default=0.3)
    p.add_argument("--outlier-rate", type=float, default=0.0003)
    p.add_argument("--outlier-ms", type=float, default=10000, help="for the truth file only")
    p.add_argument("--loss", type=float, default=0.003)
    p.add_argument("--duplicate-rate", type=float, default=0.001)
    p.add_argument("--handshake-median", type=float, default=185)
    p.add_argument("--handshake-failure-rate", type=float, default=0.02)
    p.add_argument("--bad-rows", type=int, default=0, help="malformed rows in the PSK server log")
    p.add_argument("--micros", action="store_true",
                   help="add the µs columns (client sendts_us; server sendts_ms, recvts_us)")
    p.add_argument("--bad-micros", type=int, default=0,
                   help="with --micros: bad µs values in the PSK server and DSEKP client logs")
    p.add_argument("--truth", help="write the expected results here (JSON)")
    args = p.parse_args()
    if args.devices < 1 or args.packets < args.devices or args.sessions < 1:
        p.error("need --devices >= 1, --packets >= --devices, --sessions >= 1")
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    planned = []
    psk = generate_mode("psk", args, rng, args.start_ms, [])
    dsekp = generate_mode("dsekp", args, rng, psk["end_ms"] + 60000, planned)
    handshakes = write_handshakes(args, rng, planned)
    if args.truth:
        with open(args.truth, "w") as f:
            json.dump({"psk": psk, "dsekp": dsekp, "handshakes": handshakes}, f, indent=1)


if __name__ == "__main__":
    main()
