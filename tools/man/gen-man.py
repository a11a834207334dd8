#!/usr/bin/env python3
"""Writes a man page (roff, section 1) for `ctasim` or one of its
subcommands from the command's own --help text, so the pages never drift
from the program. Usage: gen-man.py CTASIM COMMAND|- OUT.1 VERSION"""
import re
import subprocess
import sys


def esc(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    # A line may not start with a control character.
    return "\\&" + s if s[:1] in (".", "'") else s


def main():
    exe, cmd, out, version = sys.argv[1:5]
    args = [exe, "--help"] if cmd == "-" else [exe, cmd, "--help"]
    text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    lines = text.rstrip("\n").split("\n")
    title = "ctasim" if cmd == "-" else "ctasim-" + cmd
    summary = ""
    if cmd != "-":
        top = subprocess.run([exe, "--help"], check=True, capture_output=True, text=True).stdout
        m = re.search(r"^  " + re.escape(cmd) + r"\s+(.*)$", top, re.M)
        summary = m.group(1) if m else ""
    else:
        summary = "a CPU simulator of the GPU thread-block scheduler"
    o = [
        '.TH %s 1 "" "ctasim %s" "ctasim manual"' % (title.upper(), version),
        ".SH NAME",
        "%s \\- %s" % (esc(title), esc(summary)),
    ]
    usage = []
    while lines and lines[0].startswith(("usage:", "       ")) or (lines and usage and lines[0].startswith("  ") and not lines[0].strip().startswith("-")):
        usage.append(lines.pop(0).replace("usage:", "", 1).strip())
    o += [".SH SYNOPSIS"]
    for u in usage:
        o += [".nf", esc(u), ".fi"]
    section = None
    para = []

    def flush():
        if para:
            o.append(esc(" ".join(p.strip() for p in para)))
            para.clear()

    for ln in lines:
        opt = re.match(r"^  (\S.*?)(\s{2,}(\S.*))?$", ln)
        if not ln.strip():
            flush()
            if section == "desc":
                o.append(".PP")
            continue
        if ln.startswith("exit"):
            flush()
            o += [".SH EXIT STATUS", esc(ln.split(":", 1)[1].strip() if ":" in ln else ln)]
            section = "exit"
            continue
        if opt and (ln.startswith("  -") or section in ("opts", "list")):
            flush()
            if section not in ("opts", "list"):
                hdr = "OPTIONS" if ln.startswith("  -") else "COMMANDS"
                o.append(".SH " + hdr)
                section = "opts" if ln.startswith("  -") else "list"
            o += [".TP", "\\fB%s\\fR" % esc(opt.group(1).strip())]
            if opt.group(3):
                o.append(esc(opt.group(3)))
            continue
        if ln.startswith("    ") and section in ("opts", "list"):
            o.append(esc(ln.strip()))
            continue
        if ln.endswith(":") and not ln.startswith(" "):
            flush()
            o.append(".SH " + esc(ln[:-1].upper()))
            section = "list"
            continue
        if section is None:
            o.append(".SH DESCRIPTION")
            section = "desc"
        elif section in ("opts", "list", "exit") and not ln.startswith(" "):
            flush()
            o.append(".PP")
            section = "desc"
        para.append(ln)
    flush()
    see = ["ctasim (1)"] if cmd != "-" else []
    o += [".SH SEE ALSO", esc(", ".join(see + ["docs/ and traces/FORMAT.md of the ctasim sources"]))]
    with open(out, "w") as f:
        f.write("\n".join(o) + "\n")


if __name__ == "__main__":
    main()
