#!/usr/bin/python3
"""Scenario "report" (issue 21): sc-report over N metrics lines against the
shell a user would write for the same p50/p95/p99 from the same lines:

    grep | cut | datamash:  grep -o '"latency_ms":[0-9.]*' m.log | cut -d: -f2 \
                                | datamash perc:50 1 perc:95 1 perc:99 1
    jq | datamash:          jq -r 'select(.event == "request") | .latency_ms' m.log \
                                | datamash perc:50 1 perc:95 1 perc:99 1
    sc-report:              sc-report --json m.log   (every figure, not only three)

side by side (interleaved, median of SC_BENCH_REPS), on lines shaped as
sc-fetch writes them (500 hosts, a few status codes, log-normal latencies).
Targets: sc-report in at most 2 s and under 64 MiB peak RSS for 1,000,000
lines, at least 2x grep|cut|datamash and 5x jq|datamash (wall).  The three
percentiles are printed side by side: datamash interpolates between ranks,
sc-report takes the nearest rank, so they differ by at most one step.

Runs alone (python3 test/bench/report.py; SC_BIN=bin by default) or from
test/bench/run.  Writes markdown on stdout and to build/bench/report.md.
SC_BENCH_SMOKE=1: 50,000 lines, one run; SC_BENCH_REPORT=N sets the count;
SC_BENCH_ONLY, when set, must name "report" for it to run."""
import datetime
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SC_BIN = os.environ.get("SC_BIN", os.path.join(ROOT, "bin"))
SMOKE = os.environ.get("SC_BENCH_SMOKE") == "1"
REPS = int(os.environ.get("SC_BENCH_REPS", "1" if SMOKE else "3"))
ONLY = set(os.environ.get("SC_BENCH_ONLY", "").split())
N = int(os.environ.get("SC_BENCH_REPORT", "50000" if SMOKE else "1000000"))
OUT = os.path.join(ROOT, "build", "bench")
PERC = "datamash perc:50 1 perc:95 1 perc:99 1"

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
    """Wall s, CPU s (every process), peak RSS MiB (the largest) of a shell command."""
    tf = os.path.join(cwd, "time.out")
    rc = subprocess.call(["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf, "bash", "-c",
                          "set -o pipefail; " + cmd], cwd=cwd, stderr=subprocess.DEVNULL)
    if rc != 0:
        raise SystemExit(f"failed ({rc}): {cmd}")
    with open(tf) as f:
        wall, user, sys_, rss = f.read().split("\n")[-2].split()
    return float(wall), float(user) + float(sys_), int(rss) / 1024


def write_metrics(path):
    """N request lines as sc-fetch writes them, a millisecond apart."""
    rng = random.Random(21)
    t0 = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.timezone.utc).timestamp()
    hosts = [f"https://host{i}.example.org:443" for i in range(500)]
    statuses = [200] * 20 + [404, 429, 503, 304]
    with open(path, "w") as f:
        for i in range(N):
            t = t0 + i / 1000
            ts = (datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc)
                  .strftime("%Y-%m-%dT%H:%M:%S.") + f"{i % 1000:03d}Z")
            host = hosts[int(rng.paretovariate(1.2)) % 500]
            lat = round(rng.lognormvariate(3, 1), 1)
            st = rng.choice(statuses)
            err = "null" if st in (200, 304) else '"http"'
            f.write(f'{{"event":"request","ts":"{ts}","url":"{host}/p/{i}","host":"{host}",'
                    f'"status":{st},"latency_ms":{lat},"bytes":{rng.randrange(20000)},"attempt":1,'
                    f'"error":{err},"wait_ms":0,"next":"done","timing":{{"queue_ms":0.0,'
                    f'"dns_ms":0.1,"connect_ms":0.3,"tls_ms":1.2,"ttfb_ms":{round(lat * 0.8, 1)},'
                    f'"redirect_ms":0.0,"total_ms":{lat}}}}}\n')


def figures(cmd, cwd):
    out = subprocess.check_output(["bash", "-c", cmd], cwd=cwd).decode().split()
    return [float(x) for x in out]


def scenario():
    tmp = tempfile.mkdtemp(prefix="sc-bench-report-")
    rep = os.path.join(SC_BIN, "sc-report")
    ways = {
        "grep | cut | datamash": f"grep -o '\"latency_ms\":[0-9.]*' m.log | cut -d: -f2 | {PERC} > out.txt",
        "jq | datamash": f"jq -r 'select(.event == \"request\") | .latency_ms' m.log | {PERC} > out.txt",
        "sc-report --json": f"'{rep}' --json m.log > out.json",
    }
    try:
        note(f"writing {N} metrics lines")
        write_metrics(os.path.join(tmp, "m.log"))
        size = os.path.getsize(os.path.join(tmp, "m.log")) / 2**20
        runs = {k: [] for k in ways}
        for r in range(REPS):
            for k, cmd in ways.items():
                note(f"rep {r + 1}/{REPS}: {k}")
                runs[k].append(measure(cmd, tmp))
        med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) for k, v in runs.items()}
        dm = figures(f"grep -o '\"latency_ms\":[0-9.]*' m.log | cut -d: -f2 | {PERC}", tmp)
        ours = figures(f"'{rep}' --json m.log | jq -r '.latency_ms | .p50, .p95, .p99'", tmp)
        say(f"### Report: p50/p95/p99 of {N:,} metrics lines ({size:.0f} MiB)")
        say()
        say(f"Lines as sc-fetch writes them (500 hosts, log-normal latencies). Median of {REPS}, "
            f"interleaved; CPU is user + system of every process of the pipeline; RSS the largest "
            f"process's. sc-report computes every figure of its report (hosts, phases, status codes, "
            f"timeline), the shell only three percentiles.")
        say()
        say("| way | wall s | CPU s | peak RSS MiB |")
        say("|---|--:|--:|--:|")
        for k in ways:
            say(f"| `{k.replace('|', chr(92) + '|')}` | {med[k][0]:.2f} | {med[k][1]:.2f} | {med[k][2]:.0f} |")
        say()
        ours_wall, ours_cpu, ours_rss = med["sc-report --json"]
        for k, goal in (("grep | cut | datamash", 2), ("jq | datamash", 5)):
            ratio = med[k][0] / ours_wall if ours_wall else 0
            say(f"- {k} / sc-report = **{ratio:.2f}x** wall, {times(med[k][1], ours_cpu)} CPU "
                f"(target >= {goal}x: {'met' if ratio >= goal else 'NOT met'})")
        say(f"- sc-report: {ours_wall:.2f} s wall, {ours_cpu:.2f} CPU s, {ours_rss:.0f} MiB "
            f"(targets for 1,000,000 lines: <= 2 s, < 64 MiB)")
        say(f"- p50/p95/p99: datamash {dm[0]:g}/{dm[1]:g}/{dm[2]:g} ms, "
            f"sc-report {ours[0]:g}/{ours[1]:g}/{ours[2]:g} ms")
        say()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "report.md"), "w") as f:
        f.write("\n".join(out_lines) + "\n")


if __name__ == "__main__":
    if ONLY and "report" not in ONLY:
        sys.exit(0)
    scenario()
