#!/usr/bin/python3
"""Scenario "parse" (issue 31): sc-parse's CPU against its floor, a bare
libxml2 HTML SAX pass (test/bench/bench-parsefloor.c: sc-parse's parser
options, the title's text gathered, each <a href> counted, nothing else),
over the same pages: every regular *.html file of Debian's python3.11-doc
and postgresql-doc-15 trees (1,699 pages, symlinks left out).  sc-parse
reads them as the records sc-fetch writes (built here once, on disk, and
read from the page cache), so its CPU includes what a pipeline makes it do
beyond the parse: the record's JSON decoded, charset sniffed, URLs resolved,
the record's JSON written.  CPU is the child's user + system time, from
wait4; one core (-j 1).  Targets: the default fields within 1.3x the floor,
--structured within 1.6x, --main --markdown within 3x.  Median of
SC_BENCH_REPS runs each, interleaved.

Runs alone (python3 test/bench/parse.py; SC_BIN=bin and SC_BENCH_C=
build/release/bench by default) or from test/bench/run.  SC_BENCH_SMOKE=1:
the first 100 pages, one run; SC_BENCH_ONLY, when set, must name "parse"."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SC_BIN = os.environ.get("SC_BIN", os.path.join(ROOT, "bin"))
BENCH_C = os.environ.get("SC_BENCH_C", os.path.join(ROOT, "build", "release", "bench"))
SMOKE = os.environ.get("SC_BENCH_SMOKE") == "1"
REPS = int(os.environ.get("SC_BENCH_REPS", "1" if SMOKE else "3"))
ONLY = set(os.environ.get("SC_BENCH_ONLY", "").split())
TREES = ["/usr/share/doc/python3.11/html", "/usr/share/doc/postgresql-doc-15/html"]
TARGETS = {"default fields": 1.3, "--structured": 1.6, "--main --markdown": 3.0}


def pages(trees):
    """The regular *.html files under trees, in a stable order: what
    bench-parsefloor reads."""
    out = []
    for root in trees:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                if name.endswith(".html") and os.path.isfile(path) and not os.path.islink(path):
                    out.append(path)
    return out


def cpu(cmd, stdin_path=None):
    """The child's user + system seconds; fails on a non-zero exit."""
    with open(stdin_path or os.devnull, "rb") as f:
        proc = subprocess.Popen(cmd, stdin=f, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime


def main():
    if ONLY and "parse" not in ONLY:
        return 0
    floor_bin = os.path.join(BENCH_C, "bench-parsefloor")
    if not os.access(floor_bin, os.X_OK):
        raise SystemExit(f"parse: {floor_bin} is not built (make bench builds it)")
    paths = pages(TREES)
    if SMOKE:
        paths = paths[:100]
    with tempfile.TemporaryDirectory() as tmp:
        # The floor reads a directory: the smoke run's pages linked into one.
        if SMOKE:
            tree = os.path.join(tmp, "tree")
            os.mkdir(tree)
            for i, p in enumerate(paths):
                shutil.copyfile(p, os.path.join(tree, f"{i:04d}.html"))
            floor_args = [tree]
        else:
            floor_args = TREES
        recs = os.path.join(tmp, "pages.jsonl")
        nbytes = 0
        with open(recs, "w", encoding="utf-8") as f:
            for p in paths:
                body = open(p, "rb").read()
                nbytes += len(body)
                f.write(json.dumps({"url": "http://docs.example" + p, "ok": True, "status": 200,
                                    "content_type": "text/html; charset=utf-8",
                                    "body": body.decode("utf-8", "replace")}) + "\n")
        sc = [os.path.join(SC_BIN, "sc-parse"), "-j", "1"]
        runs = {"floor": [floor_bin] + floor_args, "default fields": sc,
                "--structured": sc + ["--structured"], "--main --markdown": sc + ["--main", "--markdown"]}
        times = {k: [] for k in runs}
        for _ in range(REPS):  # interleaved, so that a noisy moment touches all
            for name, cmd in runs.items():
                times[name].append(cpu(cmd, None if name == "floor" else recs))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"## parse (issue 31): {len(paths)} pages, {nbytes / 1e6:.1f} MB, one core, CPU median of {REPS}")
    print("| program | CPU s | pages/s | ÷ floor | target |\n|---|---|---|---|---|")
    print(f"| bench-parsefloor (libxml2 SAX, title + hrefs) | {med['floor']:.3f} | "
          f"{len(paths) / med['floor']:.0f} | 1.00 | |")
    for name, target in TARGETS.items():
        x = med[name] / med["floor"]
        print(f"| sc-parse {name} | {med[name]:.3f} | {len(paths) / med[name]:.0f} | {x:.2f} | "
              f"≤ {target}x: {'met' if x <= target else 'NOT met'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
