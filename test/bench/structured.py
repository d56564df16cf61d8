#!/usr/bin/python3
"""Scenario "structured" (issue 31): pages/s of sc-parse --structured against
extruct 0.14 (Debian's python3-extruct, extruct.extract with json-ld,
microdata, opengraph and rdfa) on one core, the same pages in the same run:
the corpus of test/structured/pages repeated to N records.  Target: at least
20x extruct's pages/s.  Median of SC_BENCH_REPS runs each.

Runs alone (python3 test/bench/structured.py; SC_BIN=bin by default) or from
test/bench/run.  SC_BENCH_SMOKE=1: 200 pages, one run; SC_BENCH_ONLY, when
set, must name "structured" for it to run."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SC_BIN = os.environ.get("SC_BIN", os.path.join(ROOT, "bin"))
SMOKE = os.environ.get("SC_BENCH_SMOKE") == "1"
REPS = int(os.environ.get("SC_BENCH_REPS", "1" if SMOKE else "3"))
ONLY = set(os.environ.get("SC_BENCH_ONLY", "").split())
N = 200 if SMOKE else 2000
PAGES = os.path.join(ROOT, "test", "structured", "pages")
KINDS = ["json-ld", "microdata", "opengraph", "rdfa"]

EXTRUCT = """
import json, sys, extruct
n = 0
for line in sys.stdin:
    rec = json.loads(line)
    out = extruct.extract(rec["body"], base_url=rec["url"], syntaxes=%r, errors="ignore")
    sys.stdout.write(json.dumps(out) + "\\n")
""" % KINDS


def timed(cmd, path):
    with open(path, "rb") as f:
        start = time.perf_counter()
        subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start


def main():
    if ONLY and "structured" not in ONLY:
        return 0
    names = sorted(n for n in os.listdir(PAGES) if n.endswith(".html"))
    bodies = [open(os.path.join(PAGES, n), encoding="utf-8").read() for n in names]
    with tempfile.TemporaryDirectory() as tmp:
        recs = os.path.join(tmp, "pages.jsonl")
        with open(recs, "w", encoding="utf-8") as f:
            for i in range(N):
                k = i % len(names)
                f.write(json.dumps({"url": f"http://pages.example/{i}/{names[k]}", "ok": True,
                                    "status": 200, "content_type": "text/html",
                                    "body": bodies[k]}) + "\n")
        sc = [os.path.join(SC_BIN, "sc-parse"), "-j", "1", "--structured=" + ",".join(KINDS)]
        ex = ["/usr/bin/python3", "-c", EXTRUCT]
        t_sc, t_ex = [], []
        for _ in range(REPS):  # interleaved
            t_sc.append(timed(sc, recs))
            t_ex.append(timed(ex, recs))
    sc_rate, ex_rate = N / statistics.median(t_sc), N / statistics.median(t_ex)
    ratio = sc_rate / ex_rate
    print(f"## structured (issue 31): {N} pages, one core, median of {REPS}")
    print("| program | pages/s |\n|---|---|")
    print(f"| sc-parse --structured | {sc_rate:.0f} |\n| extruct 0.14 | {ex_rate:.1f} |")
    print(f"sc-parse ÷ extruct: {ratio:.1f}x (target ≥ 20x: {'met' if ratio >= 20 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
