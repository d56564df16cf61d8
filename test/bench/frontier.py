#!/usr/bin/python3
"""Scenario "frontier" (issue 11): the next round's URLs, sc-frontier against
the shell way, and sc-frontier's memory with a large seen set.

1. A round of N_LINKS links (pydocs-like URLs, 10% of them new) in page
   records, against a seen set of N_SEEN URLs:
     shell:        jq -r '.links[]' | sort -u | comm -13 seen.txt -
     sc-frontier:  sc-frontier --seen seen.db --no-commit
   side by side (interleaved, median of SC_BENCH_REPS), both giving the same
   set of new URLs (checked).  The shell way does less: no canonical form, no
   scope, no depth; sc-frontier also writes a record per URL.
2. Peak RSS of sc-frontier building a seen set of N_BIG URLs (--commit) and
   of a round of N_LINKS links against it.

Runs alone (python3 test/bench/frontier.py, SC_BIN=bin by default) or from
test/bench/run.  Writes markdown on stdout and to build/bench/frontier.md.
SC_BENCH_SMOKE=1 makes it seconds long; SC_BENCH_ONLY, when set, must
name "frontier" for it to run; SC_BENCH_FRONTIER="SEEN LINKS BIG" sets the
three sizes."""
import os
import random
import statistics
import subprocess
import sys
import tempfile
import shutil
import json

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SC_BIN = os.environ.get("SC_BIN", os.path.join(ROOT, "bin"))
SMOKE = os.environ.get("SC_BENCH_SMOKE") == "1"
REPS = int(os.environ.get("SC_BENCH_REPS", "1" if SMOKE else "3"))
ONLY = set(os.environ.get("SC_BENCH_ONLY", "").split())
# The sizes; SC_BENCH_FRONTIER="SEEN LINKS BIG" sets them for a quicker look.
N_SEEN, N_LINKS, N_BIG = ((50_000, 20_000, 200_000) if SMOKE else (5_000_000, 1_000_000, 10_000_000))
if os.environ.get("SC_BENCH_FRONTIER"):
    N_SEEN, N_LINKS, N_BIG = map(int, os.environ["SC_BENCH_FRONTIER"].split())
LINKS_PER_PAGE = 50
NEW_SHARE = 0.10
OUT = os.path.join(ROOT, "build", "bench")

SECTIONS = ["library", "reference", "tutorial", "howto", "c-api", "whatsnew", "using",
            "extending", "faq", "distributing", "install", "glossary"]
MODULES = ["asyncio-task", "os.path", "functions", "stdtypes", "collections", "itertools",
           "functools", "re", "json", "sqlite3", "subprocess", "threading", "typing",
           "pathlib", "datetime", "unittest", "logging", "argparse", "socket", "ssl",
           "urllib.request", "http.client", "email.parser", "xml.etree.elementtree",
           "concurrent.futures", "multiprocessing", "dataclasses", "enum", "contextlib",
           "inspect", "ast", "dis", "gc", "sys", "io", "shutil", "tempfile", "csv", "zipfile"]


def url(i):
    """The i-th URL of an endless docs site: distinct for distinct i."""
    return (f"https://docs.python.org/3.{i % 13}/{SECTIONS[(i // 13) % len(SECTIONS)]}/"
            f"{MODULES[(i // 156) % len(MODULES)]}-{i // 6084}.html")


out_lines = []


def times(a, b):
    """a / b as "N.NNx"; a dash where b is 0 (GNU time's CPU seconds are
    0.00 for runs shorter than its 10 ms resolution, as in smoke runs)."""
    return f"{a / b:.2f}x" if b else "—"


def say(line=""):
    print(line, flush=True)
    out_lines.append(line)


def note(msg):
    print(f"# {msg}", file=sys.stderr, flush=True)


def measure(cmd, cwd):
    """Wall s, CPU s, peak RSS MiB of a shell command (its largest process)."""
    tf = os.path.join(cwd, "time.out")
    rc = subprocess.call(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf, "bash", "-c",
                          "set -o pipefail; " + cmd], cwd=cwd, stderr=subprocess.DEVNULL)
    if rc != 0:
        raise SystemExit(f"failed ({rc}): {cmd}")
    with open(tf) as f:
        wall, user, sys_, rss = f.read().split("\n")[-2].split()
    return float(wall), float(user) + float(sys_), int(rss) / 1024


def write_pages(path, rng, pick_seen):
    """Page records of LINKS_PER_PAGE links each, NEW_SHARE of them new."""
    new_pool = max(1, int(N_LINKS * NEW_SHARE / 2))  # each new URL linked about twice
    with open(path, "w") as f:
        for _ in range(N_LINKS // LINKS_PER_PAGE):
            links = [url(N_SEEN + rng.randrange(new_pool)) if rng.random() < NEW_SHARE
                     else pick_seen() for _ in range(LINKS_PER_PAGE)]
            rec = {"url": url(rng.randrange(N_SEEN)), "ok": True, "status": 200, "depth": 1,
                   "seed": "https://docs.python.org/3.0/", "title": "Python docs", "links": links}
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")


def make_round(tmp):
    rng = random.Random(11)
    note(f"writing a seen set of {N_SEEN} URLs and rounds of {N_LINKS} links")
    with open(os.path.join(tmp, "seen.unsorted"), "w") as f:
        for i in range(N_SEEN):
            f.write(url(i) + "\n")
    subprocess.check_call("LC_ALL=C sort -o seen.txt seen.unsorted && rm seen.unsorted",
                          shell=True, cwd=tmp)
    # Worst case for any index: every seen link anywhere in the set.
    write_pages(os.path.join(tmp, "pages-uniform.jsonl"), rng, lambda: url(rng.randrange(N_SEEN)))
    # A site: 40 links that every page has (navigation, indexes), the rest
    # within the part of the site the round's pages belong to (100,000 URLs
    # spread over the whole set), as real docs pages link (python3.11-doc:
    # 170,000 links on its 530 pages, 4,000 distinct).
    nav = [url(rng.randrange(N_SEEN)) for _ in range(40)]
    hood = [rng.randrange(N_SEEN) for _ in range(min(N_SEEN, 100_000))]
    write_pages(os.path.join(tmp, "pages-site.jsonl"), rng,
                lambda: rng.choice(nav) if rng.random() < 0.45 else url(rng.choice(hood)))
    fr = os.path.join(SC_BIN, "sc-frontier")
    return measure(f"'{fr}' -q --commit --seen seen.db < seen.txt", tmp)


def compare(tmp, kind, fr):
    """The shell way and sc-frontier side by side on pages-KIND.jsonl."""
    pages = f"pages-{kind}.jsonl"
    shell = f"jq -r '.links[]' {pages} | LC_ALL=C sort -u | LC_ALL=C comm -13 seen.txt - > new.txt"
    ours = f"'{fr}' -q --seen seen.db --no-commit < {pages} > next.jsonl"
    runs = {"shell": [], "sc-frontier": []}
    for r in range(REPS):
        note(f"{kind}: rep {r + 1}/{REPS}")
        runs["shell"].append(measure(shell, tmp))
        runs["sc-frontier"].append(measure(ours, tmp))
    got = subprocess.check_output("jq -r .url next.jsonl | LC_ALL=C sort | cmp - new.txt && wc -l < new.txt",
                                  shell=True, cwd=tmp).decode().strip()
    distinct = subprocess.check_output(f"jq -r '.links[]' {pages} | LC_ALL=C sort -u | wc -l",
                                       shell=True, cwd=tmp).decode().strip()
    shutil.copy(os.path.join(tmp, "seen.db"), os.path.join(tmp, "seen2.db"))
    commit = measure(f"'{fr}' -q --seen seen2.db < {pages} > next2.jsonl", tmp)
    os.remove(os.path.join(tmp, "seen2.db"))
    med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) for k, v in runs.items()}
    return shell, med, commit, int(got), int(distinct)


def scenario():
    tmp = tempfile.mkdtemp(prefix="sc-bench-frontier-")
    fr = os.path.join(SC_BIN, "sc-frontier")
    try:
        build = make_round(tmp)
        say(f"### Frontier: a round of {N_LINKS:,} links against {N_SEEN:,} seen URLs")
        say()
        say(f"{N_LINKS // LINKS_PER_PAGE:,} page records of {LINKS_PER_PAGE} pydocs-like links, "
            f"{NEW_SHARE:.0%} of them to new URLs. *uniform*: every other link anywhere in the seen set "
            f"(the worst case for an index); *site*: 45% of them among 40 links every page has, the rest "
            f"among 100,000 URLs of the set. Both ways find the same new URLs (checked). Median of {REPS}, "
            f"interleaved; CPU is user + system of every process.")
        say()
        say("| links | way | wall s | CPU s | peak RSS MiB |")
        say("|---|---|--:|--:|--:|")
        ratios = []
        for kind in ("uniform", "site"):
            shell, med, commit, got, distinct = compare(tmp, kind, fr)
            sh = shell.replace("|", chr(92) + "|").replace(f"pages-{kind}.jsonl", "pages.jsonl")
            say(f"| {kind} ({distinct:,} distinct, {got:,} new) | `{sh}` | {med['shell'][0]:.2f} | "
                f"{med['shell'][1]:.2f} | {med['shell'][2]:.0f} |")
            say(f"| {kind} | `sc-frontier --seen seen.db --no-commit` | {med['sc-frontier'][0]:.2f} | "
                f"{med['sc-frontier'][1]:.2f} | {med['sc-frontier'][2]:.0f} |")
            say(f"| {kind} | `sc-frontier --seen seen.db` (commits; once) | {commit[0]:.2f} | "
                f"{commit[1]:.2f} | {commit[2]:.0f} |")
            ratios.append((kind, med["shell"][0] / med["sc-frontier"][0], times(med["shell"][1], med["sc-frontier"][1])))
        say()
        for kind, wall, cpu in ratios:
            say(f"- {kind}: shell / sc-frontier = **{wall:.2f}x** wall, {cpu} CPU (target >= 2x)")
        say(f"- Building the {N_SEEN:,}-URL seen set with `sc-frontier --commit`: {build[0]:.1f} s wall, "
            f"{build[1]:.1f} CPU s, {build[2]:.0f} MiB peak RSS.")
        say()

        note(f"building a seen set of {N_BIG} URLs")
        gen = (f"/usr/bin/python3 -c 'import sys; sys.path.insert(0, \"{os.path.dirname(__file__)}\"); "
               f"import frontier; w = sys.stdout.write\nfor i in range({N_BIG}): w(frontier.url(i) + \"\\n\")'")
        big = measure(f"{gen} | '{fr}' -q --commit --seen big.db", tmp)
        probe = measure(f"'{fr}' -q --seen big.db --no-commit < pages-uniform.jsonl > /dev/null", tmp)
        size = os.path.getsize(os.path.join(tmp, "big.db")) / 2**20
        say(f"### Frontier: memory with {N_BIG:,} seen URLs")
        say()
        say("| run | wall s | CPU s | peak RSS MiB |")
        say("|---|--:|--:|--:|")
        say(f"| build the set (`--commit`, {N_BIG:,} URLs; RSS of the largest process) | {big[0]:.1f} | {big[1]:.1f} | {big[2]:.0f} |")
        say(f"| a round of {N_LINKS:,} links (uniform) against it | {probe[0]:.2f} | {probe[1]:.2f} | {probe[2]:.0f} |")
        say()
        say(f"Seen set on disk: {size:.0f} MiB. Peak RSS target <= 64 MiB: "
            f"{'met' if max(big[2], probe[2]) <= 64 else 'NOT met'} ({max(big[2], probe[2]):.0f} MiB).")
        say()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "frontier.md"), "w") as f:
        f.write("\n".join(out_lines) + "\n")


if __name__ == "__main__":
    if ONLY and "frontier" not in ONLY:
        sys.exit(0)
    scenario()
