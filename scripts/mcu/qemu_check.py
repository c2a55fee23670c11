#!/usr/bin/env python3
"""Runs one firmware/mcu program under QEMU (scripts/mcu/run-qemu.sh) and checks its output.

  qemu_check.py kat    TARGET BUILD_DIR              the KAT suite passed (KAT_DONE, failures=0)
  qemu_check.py golden TARGET BUILD_DIR GOLDEN.json  every golden-trace value the target printed
                                                     equals the JSON's, and none is missing
  qemu_check.py image  TARGET BUILD_DIR [PROGRAM]    the SDK image's self-checks passed
                                                     (PROGRAM: sdk_image, or sdk_image_json)
  qemu_check.py cost   TARGET BUILD_DIR              cost.elf under -icount: calibration exact

BUILD_DIR is scripts/mcu/build.sh's OUT_DIR (programs in BUILD_DIR/TARGET/). The program's
output is saved as BUILD_DIR/TARGET/<program>.out for the reports. Exit code 0 only if the run
ended normally (QEMU exit code 0 and the program's *_DONE line with failures=0) and the checks
hold; every failure is printed with the reason."""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(target: str, build: str, program: str, icount: bool = False) -> list[str]:
    elf = os.path.join(build, target, program + ".elf")
    cmd = [os.path.join(HERE, "run-qemu.sh"), target, elf] + (["--icount"] if icount else [])
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace", check=False)
    with open(os.path.join(build, target, program + ".out"), "w", encoding="utf-8") as f:
        f.write(proc.stdout)
    lines = proc.stdout.splitlines()
    for line in lines:
        if line.startswith("FAIL "):
            print("%s/%s: %s" % (target, program, line))
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        what = "timed out" if proc.returncode == 124 else "exit code %d" % proc.returncode
        raise SystemExit("%s/%s under QEMU: %s (output in %s.out)" % (target, program, what, program))
    done = [l for l in lines if re.match(r"^[A-Z]+_DONE \d+ failures=\d+$", l)]
    if len(done) != 1 or not done[0].endswith(" failures=0"):
        raise SystemExit("%s/%s: no clean *_DONE line (got %r)" % (target, program, done))
    print("%s/%s: %s" % (target, program, done[0]))
    return lines


def check_golden(target: str, build: str, golden_json: str) -> None:
    lines = run(target, build, "golden")
    with open(golden_json, encoding="utf-8") as f:
        expected = json.load(f)["trace"]
    got: dict[str, str] = {}
    for line in lines:
        if line.startswith("GOLDEN ") and not line.startswith("GOLDEN_DONE"):
            _, name, value = line.split(" ", 2)
            if name in got:
                raise SystemExit("%s: %s printed twice" % (target, name))
            got[name] = value
    problems = []
    for name, value in expected.items():
        if name not in got:
            problems.append("missing: %s" % name)
        elif got[name] != value:
            problems.append("differs: %s\n  target: %s\n  golden: %s" % (name, got[name], value))
    for name in got:
        if name not in expected:
            problems.append("not in the golden trace: %s" % name)
    if problems:
        raise SystemExit("%s: golden trace mismatch:\n%s" % (target, "\n".join(problems)))
    print("%s: all %d golden-trace values byte-identical to %s" %
          (target, len(expected), os.path.basename(golden_json)))


def check_cost(target: str, build: str) -> None:
    sys.path.insert(0, HERE)
    import cost_report  # noqa: E402  (same directory)

    lines = run(target, build, "cost", icount=True)
    costs = cost_report.parse(lines)
    nops = cost_report.instructions(target, costs["calib_nop1000"] - costs["calib_nop0"])
    if nops != 1000:
        raise SystemExit("%s: the counter method is off: 1000 nops measured as %s instructions" %
                         (target, nops))
    print("%s: calibration exact (1000 nops = 1000 instructions); INIT %d, ACK %d, DATA %d "
          "instructions (JSON)" % (target, cost_report.net(target, costs, "init_json"),
                                   cost_report.net(target, costs, "ack_json"),
                                   cost_report.net(target, costs, "data_json")))


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    kind, target, build = sys.argv[1:4]
    if kind == "kat":
        run(target, build, "kat")
    elif kind == "golden" and len(sys.argv) == 5:
        check_golden(target, build, sys.argv[4])
    elif kind == "image" and len(sys.argv) <= 5:
        program = sys.argv[4] if len(sys.argv) == 5 else "sdk_image"
        if program not in ("sdk_image", "sdk_image_json"):
            print("qemu_check.py: no SDK image called %s" % program, file=sys.stderr)
            return 2
        run(target, build, program)
    elif kind == "cost":
        check_cost(target, build)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
