#!/usr/bin/env python3
# The module order of docs/ARCHITECTURE.md, checked on every #include "..."
# of the tree: a file may include headers of its own module and of modules
# below it, never above; module-private headers (*_internal.h) stay in their
# folder; the calls up the order go through sim/base/upcalls.h, which only
# the files named below may include; the CLI and the public headers include
# public headers only. Exit 1 with one line per broken include.
import os
import re
import sys

# Lowest first. A module may include its own headers and those of modules
# listed before it (docs/ARCHITECTURE.md, "Module order").
ORDER = [
    ("util", "sim/util/"),
    ("model", "sim/model/"),
    ("trace", "sim/trace/"),
    ("analysis", "sim/analysis/"),
    ("base", "sim/base/"),
    ("ub", "sim/ub/"),
    ("exec", "sim/exec/"),
    ("sanitize", "sim/sanitize/"),
    ("sched", "sim/sched/"),
    ("clc", "sim/clc/"),
    ("engine", "sim/engine/"),
    ("host", "sim/host/"),
    # On top: the backends, the kernel compiler's objects, the kernels'
    # harnesses, tests and benchmarks may include any header of the core.
    ("top", "device/"),
    ("top", "compiler/"),
    ("top", "kernels/"),
    ("top", "tests/"),
    ("top", "bench/"),
]
RANK = {}
for i, (name, _) in enumerate(ORDER):
    RANK.setdefault(name, i)

# The one header of upward calls, and who calls through it (the callers)
# or defines what it declares (checked against the prototypes).
UPCALLS = "sim/base/upcalls.h"
UPCALL_USERS = {"sim/exec/exec.c", "sim/exec/regions.c", "sim/clc/clc.c", "sim/engine/sim.c"}

# Folders whose files may include only public headers (include/ctasim/,
# not the backend ABI of include/ctasim/sys/ but between public headers)
# and files of their own folder.
PUBLIC_ONLY = ["include/ctasim/", "tools/ctasim/"]

# The CUDA backend sees the public headers (the backend ABI of
# include/ctasim/sys/ too), its own folder, the kernel bodies it compiles
# (kernels/) and the host layer's backend scope (sim/host: backend.h,
# harness_impl.h), nothing else of the core; meson gives it only include/
# and sim/host (host_backend_inc), and this rule keeps relative paths from
# reaching further.
BACKEND_SCOPE = {"device/": ["sim/host", "kernels"], "tests/cuda/": ["sim/host", "device"]}

# Includes that break a rule today, each with why it is not fixed yet. An
# entry that no longer matches fails too, so the list only shrinks.
KNOWN = set()

SOURCES = (".c", ".h", ".cu", ".cpp", ".S")
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(path):
    for name, prefix in ORDER:
        if path.startswith(prefix):
            return name
    return None


def resolve(root, src, inc):
    """The repository path an #include "inc" in src names, or None."""
    extra = [d for f, dirs in BACKEND_SCOPE.items() if src.startswith(f) for d in dirs]
    for base in [os.path.dirname(src), "sim", "include"] + extra:
        p = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None


def check(root):
    bad, seen = [], set()
    for top in ("sim", "device", "compiler", "kernels", "tests", "bench", "tools", "include"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(SOURCES):
                    continue
                src = os.path.relpath(os.path.join(d, f), root)
                with open(os.path.join(root, src), encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for m in INC.finditer(text):
                    line = text.count("\n", 0, m.start()) + 1
                    where = "%s:%d: #include \"%s\"" % (src, line, m.group(1))
                    hdr = resolve(root, src, m.group(1))
                    if hdr is None:
                        continue  # generated, or a system header found another way
                    if (src, hdr) in KNOWN:
                        seen.add((src, hdr))
                        continue
                    for folder in PUBLIC_ONLY:
                        public = hdr.startswith("include/ctasim/") and (
                            folder == "include/ctasim/" or not hdr.startswith("include/ctasim/sys/"))
                        if src.startswith(folder) and not (
                                public or os.path.dirname(hdr) == os.path.dirname(src)):
                            bad.append("%s: %s may include public headers only" % (where, folder))
                    for folder, dirs in BACKEND_SCOPE.items():
                        if src.startswith(folder) and not (
                                hdr.startswith("include/ctasim/")
                                or os.path.dirname(hdr) == os.path.dirname(src)
                                or os.path.dirname(hdr) in dirs):
                            bad.append("%s: %s sees public headers and %s only"
                                       % (where, folder, ", ".join(dirs)))
                    if hdr == UPCALLS and src not in UPCALL_USERS and not src.startswith("tests/"):
                        bad.append("%s: only %s call up the order" % (where, ", ".join(sorted(UPCALL_USERS))))
                    if hdr.endswith("_internal.h") and not src.startswith("tests/") \
                            and os.path.dirname(hdr) != os.path.dirname(src):
                        bad.append("%s: %s is private to %s" % (where, hdr, os.path.dirname(hdr)))
                    ms, mh = module_of(src), module_of(hdr)
                    if ms is None or mh is None:
                        continue
                    if RANK[mh] > RANK[ms]:
                        bad.append("%s: %s (%s) is above %s (%s) in the module order"
                                   % (where, hdr, mh, src, ms))
    if os.path.isfile(os.path.join(root, "sim/base/upcalls.h")):
        for src, hdr in sorted(KNOWN - seen):
            bad.append("%s: no longer includes %s: remove it from KNOWN" % (src, hdr))
    return bad


def self_test():
    """The checker on a small tree with one include of each kind it must
    refuse, and the allowed ones: a checker that cannot fail is no test."""
    import tempfile
    files = {
        "sim/base/upcalls.h": "",
        "sim/base/base.h": '#include "base/state.h"\n',
        "sim/base/state.h": "",
        "sim/engine/engine.h": '#include "base/base.h"\n',
        "sim/engine/sim.c": '#include "engine/engine.h"\n#include "base/upcalls.h"\n',
        "sim/exec/exec.c": '#include "base/upcalls.h"\n',
        "sim/base/bad.c": '#include "engine/engine.h"\n',
        "sim/sched/bad.c": '#include "base/upcalls.h"\n',
        "sim/trace/trace_internal.h": "",
        "sim/host/bad.c": '#include "trace/trace_internal.h"\n',
        "tools/ctasim/bad.c": '#include "base/base.h"\n',
        "include/ctasim/sim.h": "",
        "tools/ctasim/ok.c": '#include "ctasim/sim.h"\n',
        "include/ctasim/sys/abi.h": "",
        "include/ctasim/kernel.h": '#include "ctasim/sys/abi.h"\n',
        "tools/ctasim/bad2.c": '#include "ctasim/sys/abi.h"\n',
        "tests/unit/ok.c": '#include "engine/engine.h"\n#include "trace/trace_internal.h"\n',
        "sim/host/backend.h": "",
        "device/ok.c": '#include "backend.h"\n#include "ctasim/sys/abi.h"\n',
        "device/bad.c": '#include "engine/engine.h"\n',
    }
    with tempfile.TemporaryDirectory() as root:
        for p, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(p)), exist_ok=True)
            with open(os.path.join(root, p), "w") as fh:
                fh.write(text)
        bad = [b for b in check(root) if "remove it from KNOWN" not in b]
    want = ["sim/base/bad.c:", "sim/sched/bad.c:", "sim/host/bad.c:", "tools/ctasim/bad.c:",
            "tools/ctasim/bad2.c:", "device/bad.c:"]
    got = sorted(b.split(" ")[0].rsplit(":", 2)[0] + ":" for b in bad)
    if got != sorted(want):
        print("self-test: expected refusals of %s, got:\n%s" % (want, "\n".join(bad)))
        return 1
    print("self-test: the six broken includes refused, the allowed ones passed")
    return 0


def scope_links(root):
    """What each module of sim/ may include by a path under sim/, as the
    compiler's include scope of that module's library: {module: {"dep/h.h":
    repository path}}. The headers of its own module and of those below it,
    less the folder-private ones (*_internal.h, which a file includes by
    name from its own folder) and upcalls.h outside the modules of
    UPCALL_USERS."""
    up = {module_of(f) for f in UPCALL_USERS}
    scopes = {}
    for i, (name, prefix) in enumerate(ORDER):
        if name == "top":
            break
        links = {}
        for dep, dprefix in ORDER[:i + 1]:
            folder = dprefix.rstrip("/")
            if not os.path.isdir(os.path.join(root, folder)):
                continue
            for h in sorted(os.listdir(os.path.join(root, folder))):
                hdr = folder + "/" + h
                if not h.endswith(".h") or h.endswith("_internal.h"):
                    continue
                if hdr == UPCALLS and name not in up:
                    continue
                links[os.path.basename(folder) + "/" + h] = hdr
        scopes[name] = links
    return scopes


def write_scopes(root, out, stamp=None):
    """Makes out/MODULE/dep/h.h a link to each header scope_links allows
    MODULE, and removes every other entry under out/MODULE: meson compiles
    each module of sim/ with -I out/MODULE only (sim/meson.build), so an
    include that breaks the order does not compile. Run at configure time
    and before every build (a header added or removed since)."""
    for name, links in scope_links(root).items():
        top = os.path.join(out, name)
        for rel, hdr in links.items():
            dst, target = os.path.join(top, rel), os.path.join(root, hdr)
            if os.path.islink(dst) and os.readlink(dst) == target:
                continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.lexists(dst):
                os.remove(dst)
            os.symlink(target, dst)
        for d, dirs, files in os.walk(top, topdown=False):
            for f in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
                if os.path.relpath(os.path.join(d, f), top) not in links:
                    os.remove(os.path.join(d, f))
            if d != top and not os.listdir(d):
                os.rmdir(d)
    if stamp:
        with open(stamp, "w") as fh:
            fh.write("/* include scopes of sim/ written (tests/arch/include_order.py) */\n")
    return 0


def main():
    if sys.argv[1:2] == ["--self-test"]:
        return self_test()
    if sys.argv[1:2] == ["--scopes"] and len(sys.argv) in (4, 5):
        return write_scopes(os.path.abspath(sys.argv[3]), sys.argv[2],
                            sys.argv[4] if len(sys.argv) == 5 else None)
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    bad = check(os.path.abspath(root))
    for b in bad:
        print(b)
    if bad:
        print("%d include(s) break the module order of docs/ARCHITECTURE.md" % len(bad))
        return 1
    print("every include follows the module order of docs/ARCHITECTURE.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
