#!/usr/bin/env python3
"""Adds up the results of meson test runs (one build dir per argument) and
of other checks ("check:NAME=EXIT_STATUS" arguments), and prints the plain
closing line CI reads: "N passed, N failed"."""
import json
import os
import sys

passed = failed = skipped = 0
for d in sys.argv[1:]:
    if d.startswith("check:"):
        # A check run outside meson: "check:NAME=EXIT_STATUS".
        name, _, rc = d[len("check:"):].partition("=")
        if rc == "0":
            passed += 1
        else:
            failed += 1
            print(f"test-summary: {name} failed (exit {rc})")
        continue
    log = os.path.join(d, "meson-logs", "testlog.json")
    if not os.path.exists(log):
        failed += 1
        print(f"test-summary: {log} is missing")
        continue
    with open(log) as f:
        for line in f:
            r = json.loads(line)
            res = r.get("result")
            if res in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif res == "SKIP":
                skipped += 1
            else:
                failed += 1
                print(f"test-summary: {d}: {r.get('name')} {res}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
