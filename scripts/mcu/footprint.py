#!/usr/bin/env python3
"""Footprint of the DSEKP device path on an MCU target, from the SDK image (firmware/mcu/
sdk_image_main.c, a firmware-shaped program that uses only the SDK).

  flash and RAM per component: every input section the linker kept (GNU ld map file), by the
    archive or object it came from, as text, rodata, data (flash and RAM: its initial values are
    in flash) and bss. Budget counted: DSEKP (core, mbedTLS backend, SDK, allocator pool) plus
    the mbedTLS modules; not counted: picolibc/libgcc/crt0 (memcpy, printf, start-up), the board
    glue and the image's own main().
  RAM of a device session: the budget components' data+bss (the mbedTLS pool is there), one
    dsekp_device (the application's storage) and the worst-case stack of the SDK's device API
    calls (scripts/mcu/stack_report.py: static call-graph bound), next to the stack the image
    really used (painted, from sdk_image.out).
  No heap: none of the allocator symbols (malloc, free, operator new/delete, sbrk, ...) is
    defined in any of the linked programs (nm), so none can have been called.

Usage: footprint.py TARGET_BUILD_DIR [--image sdk_image_json] [--json OUT.json] [--check]
  --image: the SDK image on the device path built for JSON alone (DSEKP_CODEC_NO_COMPACT)
  instead of the full one (sdk_image);
  --check: exit 1 if a heap symbol is linked, the stack analysis fails, or a call used more stack
  in the image than its static bound (the ctest mode); budget misses are reported, and are
  failures only with --check-budget."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stack_report  # noqa: E402

FLASH_BUDGET = 24 * 1024
RAM_BUDGET = 3 * 1024
HEAP_SYMBOLS = re.compile(
    r"^(malloc|calloc|realloc|free|reallocarray|aligned_alloc|memalign|posix_memalign|valloc|"
    r"pvalloc|_sbrk|sbrk|_malloc_r|_free_r|_calloc_r|_realloc_r|__malloc_.*|"
    r"_Znw[jm].*|_Zna[jm].*|_ZdlPv.*|_ZdaPv.*|__cxa_allocate_exception|__cxa_throw)$")

COMPONENTS = [
    # (key, label, in budget, pattern on the map's input file)
    ("core", "DSEKP protocol core (core/)", True, r"libdsekp_core_mcu(_json)?\.a"),
    ("backend", "DSEKP mbedTLS backend (crypto/mbedtls/)", True, r"libdsekp_backend_mcu(_json)?\.a"),
    ("sdk", "DSEKP SDK (C API + client driver)", True, r"libdsekp_sdk_mcu(_json)?\.a"),
    ("pool", "mbedTLS allocator pool (firmware/src)", True, r"dsekp_pool_mcu\.dir"),
    ("mbedtls", "mbedTLS 2.28 (AES, GCM, cipher, MD, SHA-256, base64, platform)", True,
     r"libmbedtls_mcu\.a"),
    ("save_restore", "libgcc's shared register saves (RISC-V -msave-restore)", True,
     r"libgcc\.a\(save-restore\.o\)"),
    ("board", "board glue (not counted)", False, r"libdsekp_board_mcu\.a"),
    ("app", "the image's main() and test scaffolding (not counted)", False, r"sdk_image(_json)?\.dir"),
    ("libc", "picolibc, libgcc, crt0 (not counted)", False, r"^/usr/"),
]
DEVICE_API = ["dsekp_device_init", "dsekp_device_begin_session", "dsekp_device_note_init_sent",
              "dsekp_device_current_init", "dsekp_device_handle_ack", "dsekp_device_seal",
              "dsekp_device_open_downlink", "dsekp_device_wipe"]
CLIENT_API = ["dsekp_client_init", "dsekp_client_poll", "dsekp_client_send",
              "dsekp_client_on_message"]


def kind_of(section):
    if section.startswith((".text", ".init", ".fini")):
        return "text"
    if section.startswith((".rodata", ".srodata")):
        return "rodata"
    if section.startswith((".data", ".sdata")):
        return "data"
    if section.startswith((".bss", ".sbss", "COMMON", ".tbss")):
        return "bss"
    return None


def parse_map(path):
    """[(input section, size, input file)] of the allocated output sections."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    body = text.split("Linker script and memory map", 1)[1]
    entries = []
    pending = None  # an input section name whose numbers are on the next line
    for line in body.splitlines():
        if not line.startswith(" "):
            pending = None
            continue
        m = re.match(r"^ (\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if m and not m.group(1).startswith("*"):
            entries.append((m.group(1), int(m.group(3), 16), m.group(4).strip()))
            pending = None
            continue
        m = re.match(r"^ (\.\S+|COMMON)$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if m and pending:
            entries.append((pending, int(m.group(2), 16), m.group(3).strip()))
        pending = None
    return entries


def sizes(target_dir, image):
    table = {key: {"text": 0, "rodata": 0, "data": 0, "bss": 0} for key, *_ in COMPONENTS}
    for section, size, source in parse_map(os.path.join(target_dir, image + ".map")):
        kind = kind_of(section)
        if kind is None or size == 0:
            continue
        for key, _, _, pattern in COMPONENTS:
            if re.search(pattern, source):
                table[key][kind] += size
                break
        else:
            raise SystemExit("footprint: %s in %s belongs to no component" % (section, source))
    return table


def heap_symbols(target, elf):
    out = subprocess.run([stack_report.tool(target, "nm"), elf], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    found = []
    for line in out.splitlines():
        parts = line.split()
        if parts and HEAP_SYMBOLS.match(parts[-1]):
            found.append(parts[-1])
    return found


def measured_stack(target_dir, image):
    path = os.path.join(target_dir, image + ".out")
    used, state = {}, None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^IMAGE stack (\S+) (\d+)$", line.strip())
                if m:
                    used[m.group(1)] = int(m.group(2))
                m = re.match(r"^IMAGE sizeof_dsekp_device (\d+) \(state (\d+)\)$", line.strip())
                if m:
                    state = (int(m.group(1)), int(m.group(2)))
    return used, state


def report(target_dir, image="sdk_image"):
    target = os.path.basename(os.path.normpath(target_dir))
    table = sizes(target_dir, image)
    elf = os.path.join(target_dir, image + ".elf")
    heap = {}
    for program in (image, "kat", "golden", "cost"):
        p = os.path.join(target_dir, program + ".elf")
        if os.path.exists(p):
            heap[program] = heap_symbols(target, p)
    analysis = stack_report.Analysis(target_dir, elf)
    stack = {}
    for entry in DEVICE_API + CLIENT_API:
        total, path = analysis.worst(entry)
        stack[entry] = {"bytes": total, "path": path}
    used, state = measured_stack(target_dir, image)
    budget = [k for k, _, counted, _ in COMPONENTS if counted]
    flash = sum(table[k]["text"] + table[k]["rodata"] for k in budget)
    flash_with_data = flash + sum(table[k]["data"] for k in budget)
    static_ram = sum(table[k]["data"] + table[k]["bss"] for k in budget)
    device_stack = max(stack[e]["bytes"] for e in DEVICE_API)
    client_stack = max(stack[e]["bytes"] for e in CLIENT_API)
    device_bytes = state[0] if state else None
    ram = static_ram + (device_bytes or 0) + device_stack
    return {
        "target": target, "image": image,
        "components": {k: dict(table[k], label=label, counted=counted)
                       for k, label, counted, _ in COMPONENTS},
        "flash_budget_bytes": flash, "flash_budget_bytes_with_data_init": flash_with_data,
        "flash_limit": FLASH_BUDGET,
        "static_ram_bytes": static_ram, "dsekp_device_bytes": device_bytes,
        "dsekp_device_state_bytes": state[1] if state else None,
        "worst_stack_device_api": device_stack, "worst_stack_client_api": client_stack,
        "ram_session_bytes": ram, "ram_limit": RAM_BUDGET,
        "stack": stack, "stack_measured": used, "heap_symbols": heap,
        "indirect_targets": analysis.classes,
    }


def markdown(r):
    title = r["target"] if r["image"] == "sdk_image" else "%s, JSON only" % r["target"]
    out = ["### %s" % title, "",
           "| component | text | rodata | data | bss | flash (text+rodata) | RAM (data+bss) |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for c in r["components"].values():
        out.append("| %s | %d | %d | %d | %d | %d | %d |" % (
            c["label"], c["text"], c["rodata"], c["data"], c["bss"], c["text"] + c["rodata"],
            c["data"] + c["bss"]))
    out += ["",
            "- flash, DSEKP + mbedTLS (text+rodata): **%d B** (%.1f KB; budget 24 KB: %s); "
            "with the initial values of .data: %d B" % (
                r["flash_budget_bytes"], r["flash_budget_bytes"] / 1024,
                "met" if r["flash_budget_bytes"] <= r["flash_limit"] else "MISSED",
                r["flash_budget_bytes_with_data_init"]),
            "- RAM of one device session: %d B static (data+bss, incl. the mbedTLS pool) + %s B "
            "dsekp_device (state %s B) + %d B worst-case stack of the device API = **%d B** "
            "(%.2f KB; budget 3 KB: %s)" % (
                r["static_ram_bytes"], r["dsekp_device_bytes"], r["dsekp_device_state_bytes"],
                r["worst_stack_device_api"], r["ram_session_bytes"],
                r["ram_session_bytes"] / 1024,
                "met" if r["ram_session_bytes"] <= r["ram_limit"] else "MISSED"),
            "- worst-case stack with the client driver: %d B" % r["worst_stack_client_api"],
            "- heap: %s" % ("no allocator symbol in %s" % ", ".join(sorted(r["heap_symbols"]))
                            if not any(r["heap_symbols"].values()) else
                            "LINKED: %r" % r["heap_symbols"]),
            "", "| API call | static bound (B) | measured (B, painted) |", "|---|---:|---:|"]
    for entry, s in r["stack"].items():
        measured = [v for k, v in r["stack_measured"].items() if k.split("(")[0] == entry]
        out.append("| %s | %d | %s |" % (entry, s["bytes"],
                                         " / ".join(str(v) for v in measured) or "-"))
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        image = args[args.index("--image") + 1] if "--image" in args else "sdk_image"
        if image not in ("sdk_image", "sdk_image_json"):
            print("footprint: no SDK image called %s" % image, file=sys.stderr)
            return 2
        r = report(args[0], image)
    except stack_report.Unbounded as e:
        print("footprint: stack analysis failed: %s" % e, file=sys.stderr)
        return 1
    if "--json" in args:
        with open(args[args.index("--json") + 1], "w", encoding="utf-8") as f:
            json.dump(r, f, indent=2)
    print(markdown(r))
    status = 0
    if ("--check" in args or "--check-budget" in args) and any(r["heap_symbols"].values()):
        print("footprint: heap allocator linked: %r" % r["heap_symbols"], file=sys.stderr)
        status = 1
    # The static bound must cover what the image really used, or the analysis missed a path.
    for call, bytes_used in r["stack_measured"].items():
        bound = r["stack"].get(call.split("(")[0], {}).get("bytes")
        if ("--check" in args or "--check-budget" in args) and bound is not None and \
                bytes_used > bound:
            print("footprint: %s used %d B of stack, above its static bound %d B" %
                  (call, bytes_used, bound), file=sys.stderr)
            status = 1
    if "--check-budget" in args and (r["flash_budget_bytes"] > FLASH_BUDGET or
                                     r["ram_session_bytes"] > RAM_BUDGET):
        print("footprint: budget missed", file=sys.stderr)
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
