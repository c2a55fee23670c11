#!/usr/bin/env python3
"""The exactly-once check of the demos: every DSEKP frame the devices logged (client CSV logs)
is in the union of the edges' telemetry tables exactly once, and nothing else is.

    exactly_once_check.py DEVICE_LOG_GLOB EDGE_STATE_DB...

Prints the split over the edges and the verdict; exits 1 unless every frame is there once.
"""
import csv
import glob
import sqlite3
import sys


def main(device_logs, edge_dbs):
    sent = set()
    for path in sorted(glob.glob(device_logs)):
        with open(path) as f:
            for row in csv.DictReader(f):
                sent.add((row["dev_id"], int(row["seq"])))
    rows = []
    print("frames sent by the devices:    %d" % len(sent))
    for path in edge_dbs:
        db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        got = db.execute("SELECT dev_id, sessctr, seq FROM telemetry WHERE mode='dsekp'").fetchall()
        print("%-30s %d" % (path.rsplit("/", 1)[-1] + " stored:", len(got)))
        rows += [(dev, seq) for dev, _, seq in got]
    union, distinct = len(rows), len(set(rows))
    print("union of the edges:            %d rows, %d distinct" % (union, distinct))
    ok = union == distinct and set(rows) == sent and len(sent) > 0
    print("every sent frame exactly once: %s" % ("yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
