#!/usr/bin/env python3
"""Worst-case stack of the SDK's API calls on an MCU target, from the compiler's own data.

How it is computed (static, conservative):
 1. Every translation unit of firmware/mcu is compiled with -fstack-usage -fcallgraph-info=su, so
    GCC writes a .ci call graph per object: each function's frame size (bytes, "static" when
    fixed) and its direct call edges, with indirect calls as edges to "__indirect_call". Where
    the disassembly shows a larger frame (GCC does not count the pretend-argument area an Arm
    callee pushes for a std::span passed partly on the stack), the larger one is used.
 2. Functions of prebuilt code (picolibc: memcpy, memset, strcmp...; libgcc: 64-bit division)
    have no .ci: their frames are read from the linked ELF's disassembly (every stack pointer
    decrement in the body). The direct calls of every function in the ELF (calls and tail
    branches to another function's start) are read there too and added to the .ci edges, since
    GCC's call graph omits the library calls the compiler emits late (memcpy for struct copies).
 3. An indirect call may reach any function whose address is taken (named by a relocation that is
    not a direct call) in the place that feeds that kind of call, restricted to the functions
    linked into the ELF:
      - C++ virtual calls in the core, the backend and the SDK (CryptoBackend, Rng): every
        function named in a vtable (_ZTV*);
      - mbedTLS's cipher layer (cipher.c): every function named in cipher_wrap.c's tables except
        its gcm_* wrappers: GCM sets up its inner cipher context in ECB mode of the block cipher
        (mbedtls_gcm_setkey), and nothing in DSEKP sets up a GCM-mode cipher context, the only
        way to reach them (counting them would also invent a cycle gcm_setkey -> cipher ->
        gcm_setkey);
      - mbedtls_platform_zeroize: the memset pointer of platform_util.c;
      - the SDK's calls of application callbacks (the RNG callback in dsekp_device.cpp, the MQTT,
        clock and storage callbacks in dsekp_client.c): every function whose address the
        application takes.
    Any other indirect call fails the analysis, so a new kind is noticed, not ignored.
    One direct edge is cut for the same reason as the gcm_* wrappers: mbedTLS's cipher functions
    call mbedtls_gcm_* only for a GCM-mode cipher context, which DSEKP never creates (the backend
    calls mbedtls_gcm_* itself, and GCM's inner context is ECB); counting it would invent the
    cycle cipher_update -> gcm_update -> cipher_update.
 4. The worst case of a function is its frame plus the worst case of its deepest callee; the
    worst case of an entry point is the deepest path from it. A recursive cycle or a dynamic
    (unbounded) frame makes the result "unbounded" and the script fails.
Calls do not push a return address on Arm (lr) or RISC-V (ra), so frames simply add up.

Usage: stack_report.py TARGET_BUILD_DIR ELF ENTRY... [--json]   (TARGET_BUILD_DIR is
scripts/mcu/build.sh's OUT_DIR/<target>)"""
import glob
import json
import os
import re
import subprocess
import sys

CALL_RELOCS = re.compile(
    r"^R_(ARM_(THM_)?(CALL|JUMP24|JUMP19|JUMP11|JUMP8|PC8)|ARM_THM_XPC22|"
    r"RISCV_(CALL|CALL_PLT|JAL|BRANCH|RVC_JUMP|RVC_BRANCH|RELAX|ALIGN))$")
SKIP_SECTIONS = re.compile(r"^\.(rel|rela)?\.?(debug|ARM\.exidx|ARM\.extab|comment|stack_sizes|note)")


class Unbounded(Exception):
    pass


def tool(target, name):
    return ("arm-none-eabi-" if target == "cortex-m4" else "riscv64-unknown-elf-") + name


def parse_ci(files):
    """Returns ({function: frame bytes}, {function: set(callees)}, {function: qualifier},
    {function: .ci file of its indirect calls})."""
    frames, calls, kinds, indirect = {}, {}, {}, {}
    node = re.compile(r'^node: \{ title: "([^"]+)" label: "((?:[^"\\]|\\.)*)"')
    edge = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = node.match(line)
                if m:
                    size = re.search(r"\\n(\d+) bytes \(([a-z,]+)\)", m.group(2))
                    if size:
                        name = m.group(1)
                        frames[name] = max(frames.get(name, 0), int(size.group(1)))
                        kinds[name] = size.group(2)
                    continue
                m = edge.match(line)
                if m:
                    calls.setdefault(m.group(1), set()).add(m.group(2))
                    if m.group(2) == "__indirect_call":
                        indirect[m.group(1)] = os.path.basename(path)
    return frames, calls, kinds, indirect


def elf_functions(target, elf):
    """{name: (address, size)} of the function symbols linked into the ELF."""
    out = subprocess.run([tool(target, "nm"), "-S", "--defined-only", elf], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    funcs = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            funcs[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return funcs


def address_taken(target, objects):
    """{object basename: set of function names referenced by a relocation that is not a direct
    call}, plus the set of those referenced from vtables (sections named after _ZTV*)."""
    taken, vtables = {}, set()
    for obj in objects:
        out = subprocess.run([tool(target, "readelf"), "-rW", obj], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        section = None
        for line in out.splitlines():
            m = re.match(r"^Relocation section '([^']+)'", line)
            if m:
                section = m.group(1)
                continue
            if section is None or SKIP_SECTIONS.match(section):
                continue
            parts = line.split()
            if len(parts) < 5 or not parts[0][:1].isdigit() or not parts[2].startswith("R_"):
                continue
            if CALL_RELOCS.match(parts[2]):
                continue
            sym = parts[4]
            if sym.startswith(".text."):
                sym = sym[len(".text."):]
            taken.setdefault(os.path.basename(obj), set()).add(sym)
            if "_ZTV" in section:
                vtables.add(sym)
    return taken, vtables


class Disassembly:
    """Frames and direct calls of every function in the linked ELF, from its disassembly (one
    objdump pass). The frames serve functions without a .ci file (prebuilt libc and libgcc); the
    calls are added to the .ci edges everywhere, because GCC's call graph leaves out the library
    calls the compiler itself emits late (memcpy for a struct copy, 64-bit division helpers)."""

    def __init__(self, target, elf, funcs):
        self.target = target
        starts = {addr & ~1: name for name, (addr, _) in funcs.items()}
        out = subprocess.run([tool(target, "objdump"), "-d", "--no-show-raw-insn", elf],
                             check=True, stdout=subprocess.PIPE, text=True).stdout
        self.frames, self.calls = {}, {}
        current = None
        for line in out.splitlines():
            m = re.match(r"^([0-9a-f]+) <([^>]+)>:$", line)
            if m:
                current = m.group(2) if int(m.group(1), 16) in starts else None
                if current is not None:
                    self.frames.setdefault(current, 0)
                    self.calls.setdefault(current, set())
                continue
            if current is None:
                continue
            m = re.match(r"^\s*[0-9a-f]+:\s+(\S+)\s*(.*)$", line)
            if not m:
                continue
            op, args = m.group(1), m.group(2)
            self.frames[current] += self._frame_bytes(op, args)
            if self._is_branch(op):
                t = re.search(r"\b([0-9a-f]+) <([^>+]+)>", args)  # a target at a symbol's start
                if t and int(t.group(1), 16) in starts and starts[int(t.group(1), 16)] != current:
                    self.calls[current].add(starts[int(t.group(1), 16)])

    def _frame_bytes(self, op, args):
        if self.target == "cortex-m4":
            if op.startswith("push") or (op.startswith("stmdb") and args.startswith("sp!")):
                return 4 * count_regs(args)
            if re.match(r"^sub(w|\.w)?$", op) and re.match(r"^sp,\s*(sp,\s*)?#(\d+)", args):
                return int(re.search(r"#(\d+)", args).group(1))
            pre = re.search(r"\[sp, #-(\d+)\]!", args)  # str/strd with a pre-decremented sp
            return int(pre.group(1)) if pre else 0
        m = re.match(r"^sp,sp,(-\d+)$", args)
        return -int(m.group(1)) if op in ("addi", "c.addi16sp", "c.addi") and m else 0

    def _is_branch(self, op):
        if self.target == "cortex-m4":
            return re.match(r"^b(l|lx)?(eq|ne|cs|cc|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)?(\.w|\.n)?$",
                            op) is not None
        return op in ("jal", "call", "tail", "j", "c.j", "c.jal") or op.startswith("b")


def count_regs(args):
    regs = re.search(r"\{([^}]*)\}", args)
    if not regs:
        return 0
    n = 0
    for part in regs.group(1).split(","):
        part = part.strip()
        r = re.match(r"^r(\d+)-r(\d+)$", part)
        n += (int(r.group(2)) - int(r.group(1)) + 1) if r else 1
    return n


def symbol_of(title):
    """.ci titles of file-local functions are 'path:symbol'."""
    return title.rsplit(":", 1)[1] if ":" in title and not title.startswith("_Z") and "/" in title else title


# The CMake targets whose objects make up the SDK image (firmware/mcu/CMakeLists.txt); the other
# programs' objects are left out, so that their static functions cannot merge with the image's.
IMAGE_PARTS = ["mbedtls_mcu", "dsekp_pool_mcu", "dsekp_core_mcu", "dsekp_backend_mcu",
               "dsekp_sdk_mcu", "dsekp_board_mcu"]


# The device path's own targets, built once per encoding set (sdk_image_json links the "_json"
# ones).
DEVICE_PATH_PARTS = ["dsekp_core_mcu", "dsekp_backend_mcu", "dsekp_sdk_mcu"]


def image_files(target_dir, program, ext):
    files = []
    suffix = "_json" if program.endswith("_json") else ""
    parts = [p + suffix if p in DEVICE_PATH_PARTS else p for p in IMAGE_PARTS]
    for part in parts + [program]:
        files += glob.glob(os.path.join(target_dir, "CMakeFiles", part + ".dir", "**", "*" + ext),
                           recursive=True)
    return files


class Analysis:
    def __init__(self, target_dir, elf):
        self.target = os.path.basename(os.path.normpath(target_dir))
        program = os.path.splitext(os.path.basename(elf))[0]
        ci = image_files(target_dir, program, ".ci")
        if not ci:
            raise SystemExit("no .ci call graphs under %s (built with -fcallgraph-info?)" % target_dir)
        frames, calls, self.kinds, indirect_sites = parse_ci(ci)
        self.funcs = elf_functions(self.target, elf)
        # Key everything by the plain symbol name, as the ELF knows it.
        self.frames, self.calls = {}, {}
        for title, size in frames.items():
            sym = symbol_of(title)
            self.frames[sym] = max(self.frames.get(sym, 0), size)
        for title, callees in calls.items():
            self.calls.setdefault(symbol_of(title), set()).update(symbol_of(c) for c in callees)
        objects = image_files(target_dir, program, ".obj")
        taken, vtables = address_taken(self.target, objects)
        linked = lambda names: sorted(n for n in names if n in self.funcs)
        app = set()
        for obj in image_files(target_dir, program, ".obj"):
            if os.sep + program + ".dir" + os.sep in obj:
                app |= taken.get(os.path.basename(obj), set())
        self.classes = {
            "vtable": linked(vtables),
            "cipher_wrap": linked(n for n in taken.get("cipher_wrap.c.obj", set())
                                  if not n.startswith("gcm_")),
            "platform_util": linked(taken.get("platform_util.c.obj", set())),
            "application": linked(app),
        }
        # Which class each function's indirect calls belong to (see the module comment).
        self.site_class = {}
        for title, ci_file in indirect_sites.items():
            sym = symbol_of(title)
            if ci_file == "platform_util.c.ci":
                cls = "platform_util"
            elif ci_file == "cipher.c.ci":
                cls = "cipher_wrap"
            elif ci_file == "dsekp_client.c.ci" or "CallbackRng4fill" in sym:
                cls = "application"
            elif ci_file.endswith(".cpp.ci"):
                cls = "vtable"
            else:
                raise SystemExit("unclassified indirect call in %s (%s): extend stack_report.py"
                                 % (sym, ci_file))
            self.site_class[sym] = cls
        self.disasm = Disassembly(self.target, elf, self.funcs)
        self.memo = {}
        self.dynamic = {symbol_of(t) for t, k in self.kinds.items() if k != "static"}

    def node(self, name):
        calls = self.calls.get(name, set()) | self.disasm.calls.get(name, set())
        if name in self.frames:
            # The larger of the two: GCC's stack usage leaves out the area an Arm callee pushes
            # for arguments it receives split between registers and the stack (a std::span by
            # value), which the disassembly shows.
            return max(self.frames[name], self.disasm.frames.get(name, 0)), calls
        if name in self.disasm.frames:
            return self.disasm.frames[name], calls
        return None

    def worst(self, name, stack=()):
        """(bytes, path) of the deepest call chain from `name`."""
        if name in self.memo:
            return self.memo[name]
        if name in stack:
            raise Unbounded("recursion: " + " -> ".join(stack + (name,)))
        if name in self.dynamic and self.kinds.get(name) not in ("static",):
            raise Unbounded("dynamic stack frame in %s" % name)
        info = self.node(name)
        if info is None:
            # Declared in a .ci but not linked: dead code the linker dropped, or inlined away.
            self.memo[name] = (0, [])
            return self.memo[name]
        frame, callees = info
        best = (0, [])
        for callee in sorted(callees):
            if name.startswith("mbedtls_cipher_") and callee.startswith("mbedtls_gcm_"):
                continue  # cut edge, see the module comment
            if callee == "__indirect_call":
                for target in self.classes[self.site_class[name]]:
                    cand = self.worst(target, stack + (name,))
                    if cand[0] > best[0]:
                        best = (cand[0], ["(indirect)"] + cand[1])
                continue
            cand = self.worst(callee, stack + (name,))
            if cand[0] > best[0]:
                best = cand
        self.memo[name] = (frame + best[0], ["%s (%d)" % (name, frame)] + best[1])
        return self.memo[name]


def main():
    args = [a for a in sys.argv[1:] if a != "--json"]
    if len(args) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    analysis = Analysis(args[0], args[1])
    results = {}
    for entry in args[2:]:
        try:
            total, path = analysis.worst(entry)
        except Unbounded as e:
            print("%s: unbounded (%s)" % (entry, e), file=sys.stderr)
            return 1
        results[entry] = {"bytes": total, "path": path}
    if "--json" in sys.argv:
        print(json.dumps({"indirect_targets": analysis.classes, "entries": results}, indent=2))
    else:
        for entry, r in results.items():
            print("%-36s %6d  %s" % (entry, r["bytes"], " -> ".join(r["path"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
