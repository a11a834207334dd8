#!/usr/bin/env python3
# Every function and variable a header of sim/<module>/ declares carries a
# prefix that names its module or its file (docs/ARCHITECTURE.md,
# "Conventions"), so that a call says which file to open, as Lua's luaD_
# does; the kernel compiler's ABI is the one listed exception. Exit 1 with
# one line per name that breaks the rule.
import os
import re
import sys

# The module's own prefix, cta__<folder>_, is always allowed; these are the
# headers whose names take the prefix of their file instead, each because
# the file is a unit of its own inside the module.
FILE_PREFIXES = {
    "sim/util/json.h": ["cta__json_"],  # util is a set of unrelated helpers
    "sim/trace/trace_format.h": ["cta__layout_"],  # trace_layout.c
    "sim/trace/trace_internal.h": ["cta__zin_", "cta__zio_"],  # trace_zio.c: input, output
    "sim/base/coverage.h": ["cta__cover_"],
    "sim/base/event_queue.h": ["cta__evq_"],
    "sim/exec/fiber.h": ["cta__fiber_"],
    "sim/exec/pool.h": ["cta__pool_"],
    "sim/exec/regions.h": ["cta__regions_"],
    "sim/host/backend.h": ["cta__backend_"],
    "sim/host/harness_impl.h": ["cta__harness_"],  # harness.c
}
# The folder's prefix where it is not the folder's name.
MODULE_PREFIXES = {"sanitize": ["cta__san_"], "ub": ["cta__ub_", "cta__ub"]}
# The calls up the module order, all in one header: declared where the
# modules below can see them, named by the module above that defines them.
UPCALLS = {"sim/base/upcalls.h": ["cta__engine_", "cta__clc_", "cta__san_"]}
# The kernel compiler's ABI, which keeps its names: objects built by
# compiler/meson.build or by an installed ctasim-build-kernel link against
# them (kc_kernel.h's registration), or the pass (compiler/regions_pass.cpp)
# emits calls to them by name. Renaming one means changing the pass and the
# installed headers together, and breaks user objects already built.
ABI = {
    "sim/exec/regions.h": {
        "cta__kc_register", "cta__kc_register_sanitized", "cta__kc_frame", "cta__kc_arrive",
        "cta__kc_fis_mismatch", "cta__kc_fis_scan", "cta__kc_ws_enter", "cta__kc_ws_point",
        "cta__kc_wait_blocks",
        "cta__kc_spin_blocks", "cta__kc_grid_check", "cta__kc_grid_arrive", "cta__kc_grid_phase",
        "cta__kc_grid_timed", "cta__kc_grid_timed_poll",
    },
}
# Names fixed by another tool: clang's address-sanitizer pass calls its
# report functions by these names in the --sanitize copies of the kernel
# compiler's bodies (static there, one copy per object).
FOREIGN = {"sim/sanitize/clang_entry.h": re.compile(r"__asan_report_(load|store)(\d+|_n)_noabort")}

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')
ATTR = re.compile(r"\b__attribute__\s*\(")
IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = {"extern", "static", "inline", "const", "volatile", "unsigned", "signed", "struct",
            "union", "enum", "_Thread_local", "_Noreturn", "restrict", "register"}


def strip_parens(text, start):
    """Index after the parenthesis group that opens at text[start]."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def clean(text):
    """The header without comments, strings, preprocessor lines,
    __attribute__ groups and uses of the function-like macros it defines
    (what such a use declares is the macro's own text, checked where the
    macro is used as written)."""
    text = COMMENT.sub(" ", text)
    text = STRING.sub('""', text)
    for macro in re.findall(r"^\s*#\s*define\s+(\w+)\(", text, re.M):
        while True:
            m = re.search(r"^\s*%s\s*\(" % macro, text, re.M)
            if not m:
                break
            text = text[:m.start()] + " " + text[strip_parens(text, m.end() - 1):]
    text = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    while True:
        m = ATTR.search(text)
        if not m:
            return text
        text = text[:m.start()] + " " + text[strip_parens(text, m.end() - 1):]


def statements(text):
    """The file-scope declarations, each as its text outside braces:
    a function's body and a struct's members are dropped, an extern "C"
    block is looked into."""
    out, cur, depth = [], [], 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == "{":
            head = "".join(cur).strip()
            if depth == 0 and re.fullmatch(r'extern\s*""', head):
                cur = []
            else:
                depth += 1
        elif c == "}":
            if depth == 0:
                pass  # the end of an extern "C" block
            else:
                depth -= 1
                if depth == 0 and re.search(r"\)\s*$", "".join(cur)):
                    out.append("".join(cur))  # a function definition
                    cur = []
        elif c == ";" and depth == 0:
            out.append("".join(cur))
            cur = []
        elif depth == 0:
            cur.append(c)
        i += 1
    return [" ".join(s.split()) for s in out if s.strip()]


def declared(stmt):
    """The names of functions and variables a file-scope declaration
    declares (none for a type, a typedef or a tag)."""
    if re.match(r"(typedef|_Static_assert|static_assert)\b", stmt):
        return []
    m = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\(", stmt)
    if m:  # a pointer to function
        return [m.group(1)]
    m = re.search(r"([A-Za-z_]\w*)\s*\(", stmt)
    if m:  # a function
        return [m.group(1)]
    if re.fullmatch(r"(struct|union|enum)\s+\w+", stmt):
        return []  # a tag declared, or defined with its members
    names = []
    for part in stmt.split(","):  # variables: the last identifier of each declarator
        ids = [x for x in IDENT.findall(re.sub(r"\[[^]]*\]|=.*", " ", part)) if x not in KEYWORDS]
        if ids:
            names.append(ids[-1])
    return names


def allowed(hdr, name):
    module = hdr.split("/")[1]
    prefixes = MODULE_PREFIXES.get(module, ["cta__%s_" % module])
    prefixes = prefixes + FILE_PREFIXES.get(hdr, []) + UPCALLS.get(hdr, [])
    if name in ABI.get(hdr, ()) or (hdr in FOREIGN and FOREIGN[hdr].fullmatch(name)):
        return True
    return any(name == p or (p.endswith("_") and name.startswith(p)) for p in prefixes)


def check(root, counted=None):
    bad, abi_seen = [], set()
    for d, _, files in sorted(os.walk(os.path.join(root, "sim"))):
        for f in sorted(files):
            if not f.endswith(".h"):
                continue
            hdr = os.path.relpath(os.path.join(d, f), root)
            if hdr.count("/") < 2:
                continue  # sim/meson.build's generated headers, none of a module
            with open(os.path.join(root, hdr), encoding="utf-8", errors="replace") as fh:
                text = clean(fh.read())
            for stmt in statements(text):
                for name in declared(stmt):
                    if counted is not None:
                        counted.append(name)
                    if name in ABI.get(hdr, ()):
                        abi_seen.add((hdr, name))
                    if not allowed(hdr, name):
                        bad.append("%s: %s has no prefix of its module or file" % (hdr, name))
    for hdr, names in sorted(ABI.items()):
        if os.path.isfile(os.path.join(root, hdr)):
            for name in sorted(names):
                if (hdr, name) not in abi_seen:
                    bad.append("%s: %s is no longer declared: remove it from ABI" % (hdr, name))
    return bad


def self_test():
    """The checker on a small tree with each kind of name it must refuse
    (a function, a prototype with attributes, an inline definition, a
    variable, a pointer to function, one of an extern "C" block, a name
    another tool fixes that is not on its list) beside the kinds it must
    let pass: a checker that cannot fail is no test."""
    import tempfile
    files = {
        "sim/base/base.h": (
            "/* cta__nope(x) in a comment */\n#define CTA__X(a) cta__nope(a)\n"
            "typedef void (*cta__fn_t)(int);\nstruct cta__unit { int (*f)(int); int a; };\n"
            "void cta__base_ok(struct cta__unit *u);\nextern int cta__base_var;\n"
            "void cta__bad_fn(int a) __attribute__((format(printf, 1, 2)));\n"
            "static inline int cta__bad_inline(int a)\n{\n\treturn a;\n}\n"
            "extern _Thread_local struct cta__unit *cta__bad_var __attribute__((tls_model(\"initial-exec\")));\n"
            "extern void (*cta__bad_ptr)(int);\n"
            "#ifdef __cplusplus\nextern \"C\" {\n#endif\nint cta__bad_c(void);\n"
            "#ifdef __cplusplus\n}\n#endif\n"),
        "sim/base/upcalls.h": "void cta__engine_step(void);\nvoid cta__sched_up(void);\n",
        "sim/exec/regions.h": "void cta__kc_register(const void *d);\nint cta__regions_for(void);\n"
                              "int cta__kc_other(void);\n",
        "sim/ub/ub.h": "void cta__ub(int rule);\nvoid cta__ub_by(int rule);\nvoid cta__ubx(void);\n"
                       "_Static_assert(1, \"x\");\n",
        "sim/sanitize/clang_entry.h": (
            "#define ENTRY(n) static void __asan_report_load##n##_noabort(void) {}\n"
            "ENTRY(1)\nENTRY(2)\nstatic void __asan_report_load_n_noabort(void) {}\n"
            "static void __asan_other(void) {}\nvoid cta__san_ok(void);\n"),
    }
    with tempfile.TemporaryDirectory() as root:
        for p, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(p)), exist_ok=True)
            with open(os.path.join(root, p), "w") as fh:
                fh.write(text)
        bad = check(root)
    got = sorted(b.split(" ")[1] for b in bad if "no longer declared" not in b)
    want = sorted(["cta__bad_fn", "cta__bad_inline", "cta__bad_var", "cta__bad_ptr", "cta__bad_c",
                   "cta__sched_up", "cta__kc_other", "cta__ubx", "__asan_other"])
    stale = [b for b in bad if "no longer declared" in b]
    if got != want or len(stale) != len(ABI["sim/exec/regions.h"]) - 1:
        print("self-test: expected refusals of %s and %d stale ABI entries, got:\n%s"
              % (want, len(ABI["sim/exec/regions.h"]) - 1, "\n".join(bad)))
        return 1
    print("self-test: the %d unprefixed names refused, the prefixed ones and the ABI passed"
          % len(want))
    return 0


def main():
    if sys.argv[1:2] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    names = []
    bad = check(os.path.abspath(root), names)
    for b in bad:
        print(b)
    if bad:
        print("%d name(s) in sim/ headers without the prefix of their module or file" % len(bad))
        return 1
    print("all %d names sim/'s headers declare have the prefix of their module or file"
          % len(names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
