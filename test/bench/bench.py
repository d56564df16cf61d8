"""The sc benchmarks: sc-fetch, sc-parse and sc-sink against what people use
instead, side by side, in one run, on one machine.

Every measured command runs under `timeout`; wall time is taken around it and
CPU time (user + sys) and peak RSS come from wait4(2), so they cover the whole
process tree (a pipeline's stages, xargs' curls).  Each measurement is taken
SC_BENCH_REPS times (3), the tools interleaved so that a burst of load from
elsewhere hits them alike, and the median is reported.  Ratios, not absolute
figures, are what carries from one machine to another.

Run by test/bench/run (make bench, make bench-smoke).  Smoke mode
(SC_BENCH_SMOKE=1) runs every scenario once with tiny counts and fails only
when a command fails, never on a ratio."""
import atexit
import datetime
import json
import os
import platform
import re
import resource
import shlex
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

import corpus
import crawl
import pydocs

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("SC_BIN") or os.path.join(ROOT, "bin")
TESTSERVER = os.environ.get("SC_TESTSERVER") or os.path.join(ROOT, "build/test/sc-testserver")
OUTDIR = os.path.join(ROOT, "build/bench")
SMOKE = os.environ.get("SC_BENCH_SMOKE") == "1"
REPS = 1 if SMOKE else max(1, int(os.environ.get("SC_BENCH_REPS", "3")))
ONLY = set(os.environ.get("SC_BENCH_ONLY", "").split())
PY = sys.executable
NPROC = os.cpu_count() or 1

# Counts: the in full mode; seconds-long in smoke mode.
if SMOKE:
    N = dict(pages=50, throughput=300, wrk_seconds=1, latency=40, delay_ms=100,
             scaling=((1, 5), (10, 40), (100, 200), (1000, 1000)),
             memory=(1000, 20_000), parse=100, xargs=100, parse_bs4=20, sink=2000,
             pipeline=200, timeout=60)
else:
    N = dict(pages=1000, throughput=20_000, wrk_seconds=5, latency=1000, delay_ms=100,
             scaling=((1, 100), (10, 1000), (100, 1000), (1000, 5000)),
             memory=(1000, 1_000_000), parse=5000, xargs=2000, parse_bs4=500, sink=100_000,
             pipeline=5000, timeout=300)
CONC = 20

TMP = None          # the run's scratch directory
failures = []       # commands that failed: the exit status in smoke mode
targets = []        # (scenario, what, measured, target, verdict)
out_lines = []      # the markdown report


def say(line=""):
    print(line, flush=True)
    out_lines.append(line)


def note(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def prog(name):
    path = os.path.join(BIN, name)
    return path if os.access(path, os.X_OK) else None


def prog_help(name):
    path = prog(name)
    if not path:
        return ""
    try:
        r = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=10)
        return r.stdout + r.stderr
    except (OSError, subprocess.TimeoutExpired):
        return ""


def has_option(name, letter):
    """Whether the usage text of program name shows the short option letter
    (as "-j" or inside a cluster such as "[-kq]")."""
    text = prog_help(name)
    return bool(re.search(rf"(?<![\w-])-{letter}\b|\[-[A-Za-z]*{letter}[A-Za-z]*\]", text))


def q(s):
    return shlex.quote(str(s))


# ---------------------------------------------------------------- measuring

class Failed(Exception):
    pass


def measure(cmd, timeout=None, label=None):
    """Runs cmd (bash, pipefail) under timeout(1) and GNU time.  Returns wall
    seconds, CPU seconds of the whole tree, and the largest process's peak
    RSS in MB.  Raises Failed on a non-zero exit.

    GNU time, not wait4() here: a child forked from this Python process
    starts with the parent's RSS as its high-water mark, and exec keeps it."""
    timeout = timeout or N["timeout"]
    errpath = os.path.join(TMP, "stderr.txt")
    timepath = os.path.join(TMP, "time.txt")
    with open(errpath, "wb") as err:
        t0 = time.monotonic()
        rc = subprocess.call(["/usr/bin/time", "-f", "%e %U %S %M", "-o", timepath,
                              "timeout", "-k", "5", str(timeout), "bash", "-c", "set -o pipefail; " + cmd],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, cwd=TMP)
        wall = time.monotonic() - t0
    if rc != 0:
        with open(errpath, "rb") as fe:
            tail = fe.read()[-600:].decode(errors="replace").strip()
        what = "timed out" if rc == 124 else f"exit {rc}"
        raise Failed(f"{label or cmd[:60]}: {what}: {tail}")
    with open(timepath) as ft:
        _, user, system, maxrss_kb = ft.read().split("\n")[-2].split()
    return {"wall": wall, "cpu": float(user) + float(system), "rss": int(maxrss_kb) / 1024}


def count_in_file(path, needle):
    """Occurrences of needle in the file, read in chunks; the tail of each
    chunk is carried into the next so that a needle across a boundary
    counts once."""
    n = 0
    keep = len(needle) - 1
    tail = b""
    with open(path, "rb") as fi:
        while True:
            chunk = fi.read(1 << 22)
            if not chunk:
                break
            data = tail + chunk
            n += data.count(needle)
            # A needle wholly inside the kept tail was counted already; the
            # tail is shorter than the needle, so it cannot hold one.
            tail = data[-keep:] if keep else b""
    return n


def count_lines(path):
    return count_in_file(path, b"\n")


def median_sample(samples):
    return {k: statistics.median(s[k] for s in samples) for k in samples[0]}


def run_interleaved(runners, reps=None):
    """runners: list of dicts with name, cmd (None = skip with `why`),
    prep() (optional, before each run), check(sample) -> error or None,
    timeout.  Runs each runner reps times, interleaved; returns
    {name: median sample or {"error": text}}."""
    reps = reps or REPS
    samples = {r["name"]: [] for r in runners}
    errors = {}
    for rep in range(reps):
        for r in runners:
            name = r["name"]
            if r.get("cmd") is None or name in errors:
                continue
            if r.get("prep"):
                r["prep"]()
            try:
                s = measure(r["cmd"], r.get("timeout"), name)
                problem = r["check"](s) if r.get("check") else None
                if problem:
                    raise Failed(f"{name}: {problem}")
            except Failed as e:
                errors[name] = str(e)
                failures.append(str(e))
                note(f"FAILED {e}")
                continue
            finally:
                if r.get("cleanup"):
                    r["cleanup"]()
            samples[name].append(s)
            note(f"{name} run {rep + 1}/{reps}: wall {s['wall']:.3f}s cpu {s['cpu']:.3f}s rss {s['rss']:.1f}MB"
                 + (f" {s['extra']}" if s.get("extra") else ""))
    result = {}
    for r in runners:
        name = r["name"]
        if r.get("cmd") is None:
            result[name] = {"error": r.get("why", "not built")}
        elif name in errors:
            result[name] = {"error": "FAILED"}
        else:
            clean = [{k: v for k, v in s.items() if isinstance(v, (int, float))} for s in samples[name]]
            result[name] = median_sample(clean)
            # The least disturbed run, for a machine shared with other work.
            result[name].update({k + "_min": min(s[k] for s in clean) for k in ("wall", "cpu")})
    return result


# ----------------------------------------------------------------- formatting

def f(x, digits=0):
    if x is None:
        return "—"
    if digits == 0:
        return f"{x:,.0f}"
    return f"{x:,.{digits}f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fr(x):
    return "—" if x is None else f"{x:.2f}x"


def table(header, rows, align=None):
    """align: one character per column, l or r; default: first left, rest right."""
    align = align or "l" + "r" * (len(header) - 1)
    say("| " + " | ".join(header) + " |")
    say("|" + "|".join("---" if a == "l" else "---:" for a in align) + "|")
    for row in rows:
        # A pipe inside a cell (a pipeline's name) would split it.
        say("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    say()


def target(scenario, what, measured, goal, ok, shown=None, compare=False):
    """ok: True, False, or None (could not be measured).  compare: no
    target in the issue, only whether sc wins or loses."""
    if ok is None:
        verdict = "not measured"
    elif compare:
        verdict = "sc wins" if ok else "**sc loses**"
    else:
        verdict = "PASS" if ok else "**MISS**"
    targets.append((scenario, what, shown if shown is not None else fr(measured), goal, verdict))


def ge(measured, goal):
    return None if measured is None else measured >= goal


def heading(title):
    with open("/proc/loadavg") as fl:
        load = fl.read().split()[0]
    say(f"### {title}")
    say()
    say(f"Load average when the scenario started: {load}.")
    say()


# ------------------------------------------------------------------ servers

def begin(group, keys, title, interleaved=True):
    """The start of a scenario file run on its own (libsc.py, warc.py,
    pace.py): which of keys SC_BENCH_ONLY wants (all when it is empty or
    names group), a scratch TMP removed at exit, the children stopped on a
    signal, the heading and the load.  Returns (wanted, t_start); wanted
    is empty, and nothing else done, when none of keys is to run."""
    global TMP
    wanted = [k for k in keys if not ONLY or group in ONLY or k in ONLY]
    if not wanted:
        return wanted, None
    TMP = tempfile.mkdtemp(prefix=f"sc-bench-{group}-")
    atexit.register(lambda: shutil.rmtree(TMP, ignore_errors=True))
    atexit.register(stop_children)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: sys.exit(128 + s))
    t_start = time.monotonic()
    with open("/proc/loadavg") as fl:
        load = " ".join(fl.read().split()[:3])
    say(f"## {title}{' (smoke: tiny counts; not figures)' if SMOKE else ''}")
    say()
    runs = f"; median of {REPS} run{'s' if REPS > 1 else ''}, interleaved" if interleaved else ""
    say(f"Load average at start {load}; {NPROC} cores{runs}.")
    say()
    return wanted, t_start


def finish(title, report_name, t_start):
    """The end of a run (bench.py's, and each scenario file's run on its
    own: libsc.py, warc.py, pace.py): the targets table under title, the
    run's length and load,
    the failed commands, the report written to OUTDIR/report_name.
    Returns the exit status: 1 when a command failed."""
    say(f"### {title}")
    say()
    if SMOKE:
        say("Smoke run: counts too small for the verdicts to mean anything; this only shows every scenario runs.")
        say()
    table(["#", "Target", "Measured", "Goal", "Result"], [list(map(str, t)) for t in targets], "rlrll")
    with open("/proc/loadavg") as fl:
        load = " ".join(fl.read().split()[:3])
    say(f"Whole run: {time.monotonic() - t_start:.0f} s; load average at the end {load}.")
    if failures:
        say()
        say("Failed commands:")
        for failed in failures:
            say(f"- {failed}")
    os.makedirs(OUTDIR, exist_ok=True)
    with open(os.path.join(OUTDIR, report_name), "w") as fo:
        fo.write("\n".join(out_lines) + "\n")
    return 1 if failures else 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


children = []


def stop_children():
    for p in children:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    children.clear()


def start_nginx(www):
    """nginx as the current user, config from nginx.conf.in, one worker, on
    a free loopback port.  Returns the base URL."""
    with open(os.path.join(HERE, "nginx.conf.in")) as fi:
        template = fi.read()
    ndir = os.path.join(TMP, "nginx")
    os.makedirs(ndir, exist_ok=True)
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    for _ in range(5):
        port = free_port()
        conf = (template.replace("@DIR@", ndir).replace("@PORT@", str(port))
                .replace("@USER@", "user root;" if os.geteuid() == 0 else ""))
        conf = conf.replace(f"root {ndir}/www;", f"root {www};")
        path = os.path.join(ndir, "nginx.conf")
        with open(path, "w") as fo:
            fo.write(conf)
        p = subprocess.Popen([nginx, "-e", os.path.join(ndir, "nginx-error.log"),
                              "-p", ndir, "-c", path],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(ndir, "stderr.txt"), "wb"))
        children.append(p)
        if wait_port(port, p):
            return f"http://127.0.0.1:{port}"
        if p.poll() is None:
            p.terminate()
            p.wait()
    with open(os.path.join(ndir, "stderr.txt")) as fe:
        raise SystemExit(f"bench: nginx did not start: {fe.read()[-500:]}")


def start_testserver():
    """build/test/sc-testserver on a free port; returns the base URL or None."""
    if not os.access(TESTSERVER, os.X_OK):
        return None
    portfile = os.path.join(TMP, "testserver.port")
    p = subprocess.Popen([TESTSERVER, "--port-file", portfile],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(TMP, "testserver.stderr"), "wb"))
    children.append(p)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and p.poll() is None:
        try:
            with open(portfile) as fp:
                port = int(fp.read().strip() or 0)
            if port and wait_port(port, p, 2):
                return f"http://127.0.0.1:{port}"
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    note("sc-testserver did not start")
    return None


# ---------------------------------------------------------------- scenarios

def sc_fetch_cmd(extra=""):
    path = prog("sc-fetch")
    if not path:
        return None
    quiet = " -q" if has_option("sc-fetch", "q") else ""
    return f"{q(path)}{quiet}{extra}"


def check_ok_records(path, want, needle=b'"ok":true'):
    def check(s):
        got = count_in_file(path, needle)
        s["extra"] = f"ok={got}"
        if got == want:
            return None
        return (f"{got} of {want} records ok, {count_lines(path)} lines; "
                f"first failures: {first_failures(path) or 'none (records missing)'}")
    return check


def first_failures(path, limit=3):
    """The error members of the first records that are not ok."""
    found = []
    with open(path, "rb") as fi:
        for line in fi:
            if b'"ok":true' in line:
                continue
            try:
                rec = json.loads(line)
                found.append(json.dumps({k: rec.get(k) for k in ("url", "status", "error")}))
            except ValueError:
                found.append(line[:200].decode(errors="replace"))
            if len(found) >= limit:
                break
    return "; ".join(found)


def scenario_throughput(base):
    n = N["throughput"]
    heading(f"1. Throughput: {n:,} URLs of ~20 KB at concurrency {CONC} (nginx on loopback)")
    urls = os.path.join(TMP, "urls.txt")
    corpus.write_urls(urls, base, n, N["pages"])
    out = os.path.join(TMP, "out.jsonl")
    pages_dir = os.path.join(TMP, "pages")
    codes = os.path.join(TMP, "codes.txt")

    # curl configs: one url/output pair per URL.
    cfg_files = os.path.join(TMP, "curl-files.cfg")
    cfg_null = os.path.join(TMP, "curl-null.cfg")
    with open(cfg_files, "w") as ff, open(cfg_null, "w") as fn:
        for i in range(n):
            u = f"{base}/p/{i % N['pages']}.html"
            ff.write(f'url = "{u}"\noutput = "page-{i}"\n')
            fn.write(f'url = "{u}"\noutput = "/dev/null"\n')

    # wrk: same pages in the same order, pre-formatted requests.
    lua = os.path.join(TMP, "pages.lua")
    with open(lua, "w") as fl:
        # Formatted in init(), once wrk has set the Host header.
        fl.write(f"local reqs = {{}}\ninit = function(args)\n  for i = 0, {N['pages'] - 1} do\n"
                 f"    reqs[#reqs + 1] = wrk.format(\"GET\", \"/p/\" .. i .. \".html\")\n  end\nend\n"
                 "local i = 0\nrequest = function()\n  i = i % #reqs + 1\n  return reqs[i]\nend\n")
    wrk_out = os.path.join(TMP, "wrk.txt")

    def wrk_check(s):
        text = open(wrk_out).read()
        m = re.search(r"(\d+) requests in ([\d.]+)(\w+)", text)
        errs = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors", text)
        if not m:
            return "no result from wrk"
        if errs:
            return "wrk saw errors: " + errs.group(0)
        s["requests"] = int(m.group(1))
        s["rps"] = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
        return None

    def rm_pages():
        shutil.rmtree(pages_dir, ignore_errors=True)
        os.makedirs(pages_dir)

    def files_check(s):
        got = len(os.listdir(pages_dir))
        size = sum(os.path.getsize(os.path.join(pages_dir, x)) for x in os.listdir(pages_dir))
        s["extra"] = f"files={got} bytes={size}"
        return None if got == n and size > n * 15000 else f"{got} of {n} files"

    def codes_check_n(want):
        def check(s):
            got = count_in_file(codes, b"200\n")
            return None if got == want else f"{got} of {want} answered 200"
        return check
    codes_check = codes_check_n(n)

    # xargs starts one curl per URL: a few hundred a second, so it gets fewer.
    nx = min(n, N["xargs"])
    urls_x = os.path.join(TMP, "urls-xargs.txt")
    corpus.write_urls(urls_x, base, nx, N["pages"])

    def rm(path):
        return lambda: os.path.exists(path) and os.unlink(path)

    fetch = sc_fetch_cmd(f" -c {CONC}")
    curl = shutil.which("curl")
    runners = [
        dict(name="wrk -t1 -c20 (ceiling)",
             cmd=f"wrk -t1 -c{CONC} -d{N['wrk_seconds']}s -s {q(lua)} {q(base)} > {q(wrk_out)}",
             check=wrk_check),
        dict(name="sc-fetch -c 20 > file", cmd=fetch and f"{fetch} < {q(urls)} > {q(out)}",
             check=check_ok_records(out, n), cleanup=rm(out)),
        # Not in the targets: what writing the records costs sc-fetch.
        dict(name="sc-fetch -c 20 > /dev/null", cmd=fetch and f"{fetch} < {q(urls)} > /dev/null"),
        dict(name="curl --parallel, a file per URL",
             cmd=f"{curl} -sS --parallel --parallel-max {CONC} --output-dir {q(pages_dir)} -K {q(cfg_files)}",
             prep=rm_pages, check=files_check, cleanup=lambda: shutil.rmtree(pages_dir, ignore_errors=True)),
        dict(name="curl --parallel, bodies to /dev/null",
             cmd=f"{curl} -sS --parallel --parallel-max {CONC} -w '%{{http_code}}\\n' -K {q(cfg_null)} > {q(codes)}",
             check=codes_check),
        dict(name="xargs -P 20 curl (to /dev/null)",
             cmd=f"xargs -P {CONC} -n 1 {curl} -sS -o /dev/null -w '%{{http_code}}\\n' < {q(urls_x)} > {q(codes)}",
             check=codes_check_n(nx), n=nx),
        dict(name="Python aiohttp scraper > file",
             cmd=f"{q(PY)} {q(os.path.join(HERE, 'py_scrape.py'))} -c {CONC} {q(out)} < {q(urls)}",
             check=check_ok_records(out, n), cleanup=rm(out)),
    ]
    res = run_interleaved(runners)
    rows = []
    rps = {}
    cpuk = {}
    for r in runners:
        m = res[r["name"]]
        if "error" in m:
            rows.append([r["name"], m["error"], "", "", "", ""])
            continue
        reqs = m.get("requests", r.get("n", n))
        rps[r["name"]] = m.get("rps", reqs / m["wall"])
        cpuk[r["name"]] = m["cpu"] / reqs * 1000
        rows.append([r["name"], f(reqs), f(m["wall"], 2), f(rps[r["name"]]), f(cpuk[r["name"]], 3), f(m["rss"], 1)])
    sc = rps.get("sc-fetch -c 20 > file")
    for row in rows:
        row.append(fr(ratio(sc, rps.get(row[0]))) if row[0] in rps else "")
    table(["Tool", "requests", "wall s", "req/s", "CPU s / 1k req", "peak RSS MB", "sc-fetch ÷ this (req/s)"], rows)
    say(f"wrk runs for a fixed time ({N['wrk_seconds']} s) rather than a fixed count, and writes nothing; "
        f"xargs gets {nx:,} URLs (it starts one curl per URL) and its RSS is the largest single curl. "
        "nginx (1 worker) and the client share the machine's cores.")
    say()
    for name, goal, what in (("wrk -t1 -c20 (ceiling)", 0.8, "sc-fetch req/s ≥ 0.8 × wrk"),
                             ("curl --parallel, a file per URL", 1.5, "sc-fetch req/s ≥ 1.5 × curl --parallel (a file per URL)"),
                             ("curl --parallel, bodies to /dev/null", 0.8, "sc-fetch req/s ≥ 0.8 × curl --parallel (to /dev/null)"),
                             ("Python aiohttp scraper > file", 5.0, "sc-fetch req/s ≥ 5 × aiohttp scraper")):
        x = ratio(sc, rps.get(name))
        target(1, what, x, f"≥ {goal}x", ge(x, goal))
    for name in ("curl --parallel, a file per URL", "curl --parallel, bodies to /dev/null"):
        a, b = cpuk.get("sc-fetch -c 20 > file"), cpuk.get(name)
        x = ratio(a, b)
        short = "files" if "file" in name else "/dev/null"
        target(1, f"sc-fetch CPU per request ≤ curl --parallel ({short})", x, "≤ 1.00x",
               None if x is None else x <= 1.0)


def scenario_latency(tbase):
    n, d = N["latency"], N["delay_ms"]
    ideal = n / CONC * d / 1000
    heading(f"2. Latency-bound: {n:,} URLs that each take {d} ms, concurrency {CONC} (ideal {ideal:g} s)")
    if not tbase:
        say("sc-testserver not built: scenario skipped.")
        say()
        target(2, "sc-fetch wall ≤ 1.10 × ideal", None, "≤ 1.10x", None, "sc-testserver not built")
        return
    urls = os.path.join(TMP, "delay.txt")
    corpus.write_same_url(urls, f"{tbase}/delay/{d}", n)
    out = os.path.join(TMP, "delay.jsonl")
    codes = os.path.join(TMP, "codes.txt")
    cfg = os.path.join(TMP, "curl-delay.cfg")
    with open(cfg, "w") as fc:
        for _ in range(n):
            fc.write(f'url = "{tbase}/delay/{d}"\noutput = "/dev/null"\n')

    def codes_check(s):
        got = count_in_file(codes, b"200\n")
        return None if got == n else f"{got} of {n} answered 200"

    fetch = sc_fetch_cmd(f" -c {CONC}")
    runners = [
        dict(name="sc-fetch -c 20", cmd=fetch and f"{fetch} < {q(urls)} > {q(out)}",
             check=check_ok_records(out, n)),
        dict(name="curl --parallel --parallel-max 20",
             cmd=f"curl -sS --parallel --parallel-max {CONC} -w '%{{http_code}}\\n' -K {q(cfg)} > {q(codes)}",
             check=codes_check),
        dict(name="Python aiohttp scraper",
             cmd=f"{q(PY)} {q(os.path.join(HERE, 'py_scrape.py'))} -c {CONC} {q(out)} < {q(urls)}",
             check=check_ok_records(out, n)),
    ]
    res = run_interleaved(runners)
    rows = []
    for r in runners:
        m = res[r["name"]]
        if "error" in m:
            rows.append([r["name"], m["error"], "", "", ""])
            continue
        rows.append([r["name"], f(m["wall"], 2), fr(m["wall"] / ideal), f(m["cpu"], 2), f(m["rss"], 1)])
    table(["Tool", "wall s", "wall ÷ ideal", "CPU s", "peak RSS MB"], rows)
    m = res["sc-fetch -c 20"]
    x = None if "error" in m else m["wall"] / ideal
    target(2, "sc-fetch wall ≤ 1.10 × ideal", x, "≤ 1.10x", None if x is None else x <= 1.10)


def scenario_scaling(tbase):
    d = N["delay_ms"]
    heading(f"3. Concurrency scaling: sc-fetch on {d} ms URLs")
    if not tbase:
        say("sc-testserver not built: scenario skipped.")
        say()
        return
    rows = []
    for c, n in N["scaling"]:
        urls = os.path.join(TMP, f"scale-{c}.txt")
        corpus.write_same_url(urls, f"{tbase}/delay/{d}", n)
        out = os.path.join(TMP, "scale.jsonl")
        ideal = -(-n // c) * d / 1000
        fetch = sc_fetch_cmd(f" -c {c}")
        res = run_interleaved([dict(name=f"sc-fetch -c {c}", cmd=fetch and f"{fetch} < {q(urls)} > {q(out)}",
                                    check=check_ok_records(out, n))])
        m = res[f"sc-fetch -c {c}"]
        if "error" in m:
            rows.append([f"-c {c}", f(n), f(ideal, 2), m["error"], "", "", ""])
            continue
        rows.append([f"-c {c}", f(n), f(ideal, 2), f(m["wall"], 2), fr(m["wall"] / ideal),
                     f(n / m["wall"]), f(m["rss"], 1)])
    table(["concurrency", "URLs", "ideal s", "wall s", "wall ÷ ideal", "req/s", "peak RSS MB"], rows)
    say("URL counts differ per row so that each row takes seconds, not minutes; the ideal is ⌈URLs ÷ c⌉ × delay.")
    say()


def scenario_memory(base):
    small, big = N["memory"]
    heading(f"4. Memory: sc-fetch peak RSS at {small:,} and {big:,} URLs (nginx's tiny /tiny response, -c {CONC})")
    rows = []
    rss = {}
    fetch = sc_fetch_cmd(f" -c {CONC}")
    for n, reps in ((small, REPS), (big, 1)):
        urls = os.path.join(TMP, f"tiny-{n}.txt")
        corpus.write_same_url(urls, f"{base}/tiny", n)
        out = os.path.join(TMP, "tiny.jsonl")
        res = run_interleaved([dict(name=f"sc-fetch {n}", cmd=fetch and f"{fetch} < {q(urls)} > {q(out)}",
                                    check=check_ok_records(out, n), timeout=max(N["timeout"], 900),
                                    cleanup=lambda: os.path.exists(out) and os.unlink(out))], reps)
        os.unlink(urls)
        m = res[f"sc-fetch {n}"]
        if "error" in m:
            rows.append([f(n), m["error"], "", "", ""])
            continue
        rss[n] = m["rss"]
        rows.append([f(n), f(m["wall"], 2), f(n / m["wall"]), f(m["cpu"] / n * 1000, 3), f(m["rss"], 1)])
    table(["URLs", "wall s", "req/s", "CPU s / 1k req", "peak RSS MB"], rows)
    say(f"The {big:,}-URL run is taken once (it is the long one); records go to a file that is deleted after.")
    say()
    x = ratio(rss.get(big), rss.get(small))
    target(4, f"sc-fetch RSS flat: RSS({big:,}) ≤ 1.25 × RSS({small:,})", x, "≤ 1.25x",
           None if x is None else x <= 1.25)


def scenario_parse():
    n, nb = N["parse"], N["parse_bs4"]
    heading(f"5. Parse: {n:,} fetch records of ~20 KB HTML (BeautifulSoup: {nb:,}), default fields")
    recs = os.path.join(TMP, "fetch.jsonl")
    recs_b = os.path.join(TMP, "fetch-bs4.jsonl")
    html_mb = corpus.write_fetch_records(recs, "https://example.com", n, N["pages"]) / 1e6
    html_mb_b = corpus.write_fetch_records(recs_b, "https://example.com", nb, N["pages"]) / 1e6
    out = os.path.join(TMP, "parsed.jsonl")

    def lines_check(want):
        def check(s):
            got = count_lines(out)
            return None if got == want else f"{got} of {want} records out"
        return check

    parse = prog("sc-parse")
    has_j = parse and has_option("sc-parse", "j")
    pyp = f"{q(PY)} {q(os.path.join(HERE, 'py_parse.py'))}"
    runners = []
    for j in (1, NPROC):
        tag = "1 process" if j == 1 else f"{j} processes"
        sc_cmd = None
        if parse and (j == 1 or has_j):
            sc_cmd = f"{q(parse)}{f' -j {j}' if has_j else ''} < {q(recs)} > {q(out)}"
        runners += [
            dict(name=f"sc-parse, {tag}", cmd=sc_cmd, check=lines_check(n), n=n, mb=html_mb, j=j,
                 why="not built" if not parse else "no -j option"),
            dict(name=f"lxml.html, {tag}", cmd=f"{pyp} --parser lxml -j {j} < {q(recs)} > {q(out)}",
                 check=lines_check(n), n=n, mb=html_mb, j=j),
            dict(name=f"BeautifulSoup(html.parser), {tag}",
                 cmd=f"{pyp} --parser bs4 -j {j} < {q(recs_b)} > {q(out)}",
                 check=lines_check(nb), n=nb, mb=html_mb_b, j=j),
        ]
    same = parse_outputs_agree(parse, pyp, recs_b) if parse else None
    res = run_interleaved(runners)
    rows = []
    rate = {}
    for r in runners:
        m = res[r["name"]]
        if "error" in m:
            rows.append([r["name"], f(r["n"]), m["error"], "", "", "", "", ""])
            continue
        rate[r["name"]] = r["n"] / m["wall"]
        rows.append([r["name"], f(r["n"]), f(m["wall"], 2), f(rate[r["name"]]), f(r["mb"] / m["wall"], 1),
                     f(ratio(r["n"], m["cpu"])), f(m["rss"], 1)])
    for row in rows:
        name = row[0]
        tag = name.split(", ", 1)[1]
        row.append(fr(ratio(rate.get(f"sc-parse, {tag}"), rate.get(name))) if name in rate else "")
    table(["Parser", "records", "wall s", "records/s", "MB/s (HTML)", "records per CPU s", "peak RSS MB",
           "sc-parse ÷ this"], rows)
    say("Fields: sc-parse's defaults; the Python scripts extract the same: title, meta description, canonical, lang, "
        "the first h1 and the distinct absolute links (test/bench/py_parse.py). All cores: sc-parse -j N "
        "against a multiprocessing.Pool of N.")
    if same is not None:
        say()
        say(f"Same output check ({nb} records, as parsed JSON objects): sc-parse = lxml.html: {same[0]}; "
            f"sc-parse = BeautifulSoup: {same[1]}.")
    say()
    sc1 = rate.get("sc-parse, 1 process")
    x = ratio(sc1, rate.get("lxml.html, 1 process"))
    target(5, "sc-parse ≥ 1.5 × lxml.html per core", x, "≥ 1.5x", ge(x, 1.5))
    x = ratio(sc1, rate.get("BeautifulSoup(html.parser), 1 process"))
    target(5, "sc-parse ≥ 20 × BeautifulSoup per core", x, "≥ 20x", ge(x, 20))
    for path in (recs, recs_b, out):
        os.unlink(path) if os.path.exists(path) else None


def parse_outputs_agree(parse, pyp, recs):
    """Whether sc-parse and the two Python parsers give the same records."""
    outs = []
    for cmd in (q(parse), f"{pyp} --parser lxml", f"{pyp} --parser bs4"):
        r = subprocess.run(f"timeout 120 {cmd} < {q(recs)}", shell=True, capture_output=True, cwd=TMP)
        outs.append([json.loads(line) for line in r.stdout.splitlines()] if r.returncode == 0 else None)

    def verdict(other):
        if outs[0] is None or other is None:
            return "could not run"
        if outs[0] == other:
            return "yes"
        diff = sorted({k for a, b in zip(outs[0], other) for k in set(a) | set(b) if a.get(k) != b.get(k)})
        return "no (" + ", ".join(diff or ["record count"]) + ")"
    return verdict(outs[1]), verdict(outs[2])


def scenario_sink():
    n = N["sink"]
    heading(f"6. Sink: {n:,} flat records to CSV and SQLite")
    recs = os.path.join(TMP, "sink.jsonl")
    corpus.write_sink_records(recs, n)
    mb = os.path.getsize(recs) / 1e6
    csv_out = os.path.join(TMP, "out.csv")
    db = os.path.join(TMP, "out.db")
    fields = ",".join("." + k for k in corpus.SINK_FIELDS)

    def csv_check(s):
        got = count_lines(csv_out)
        return None if got in (n, n + 1) else f"{got} CSV lines for {n} records"

    def db_check(s):
        con = sqlite3.connect(db)
        try:
            tables = [r[0] for r in con.execute("select name from sqlite_master where type='table'")]
            got = max((con.execute(f'select count(*) from "{t}"').fetchone()[0] for t in tables), default=0)
        finally:
            con.close()
        return None if got == n else f"{got} rows for {n} records"

    def rm_db():
        for suffix in ("", "-wal", "-shm", "-journal"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)

    sink = prog("sc-sink")
    py_csv = ("import csv,json,sys\nw=None\nfor line in sys.stdin:\n    r=json.loads(line)\n"
              "    if w is None:\n        w=csv.DictWriter(sys.stdout,list(r))\n        w.writeheader()\n"
              "    w.writerow(r)\n")
    # Like sc-sink's table: the columns plus "record", the whole line.
    py_sql = ("import json,sqlite3,sys\ncon=sqlite3.connect(sys.argv[1])\n"
              f"cols={list(corpus.SINK_FIELDS)!r}+['record']\n"
              "def rows():\n    for line in sys.stdin:\n        r=json.loads(line)\n"
              "        yield tuple(r.get(c) for c in cols[:-1])+(line.rstrip('\\n'),)\n"
              "con.execute('create table records(%s)' % ','.join(cols))\n"
              "with con:\n    con.executemany('insert into records values(%s)' % ','.join('?'*len(cols)), rows())\n")
    runners = [
        dict(name="sc-sink --csv", cmd=sink and f"{q(sink)} --csv {q(csv_out)} < {q(recs)}", check=csv_check),
        dict(name="mlr --ijsonl --ocsv cat", cmd=f"mlr --ijsonl --ocsv cat < {q(recs)} > {q(csv_out)}",
             check=csv_check),
        dict(name="jq -r '[...]|@csv'", cmd=f"jq -r {q('[' + fields + ']|@csv')} < {q(recs)} > {q(csv_out)}",
             check=csv_check),
        dict(name="Python csv.DictWriter", cmd=f"{q(PY)} -c {q(py_csv)} < {q(recs)} > {q(csv_out)}",
             check=csv_check),
        dict(name="sc-sink --sqlite", cmd=sink and f"{q(sink)} --sqlite {q(db)} < {q(recs)}",
             prep=rm_db, check=db_check),
        dict(name="Python sqlite3 executemany", cmd=f"{q(PY)} -c {q(py_sql)} {q(db)} < {q(recs)}",
             prep=rm_db, check=db_check),
    ]
    res = run_interleaved(runners)
    rate = {}
    rows = []
    for r in runners:
        m = res[r["name"]]
        if "error" in m:
            rows.append([r["name"], m["error"], "", "", "", "", ""])
            continue
        rate[r["name"]] = n / m["wall"]
        rows.append([r["name"], f(m["wall"], 2), f(rate[r["name"]]), f(mb / m["wall"], 1), f(m["cpu"], 2),
                     f(m["rss"], 1)])
    for row in rows:
        name = row[0]
        base = "sc-sink --sqlite" if "sqlite" in name.lower() else "sc-sink --csv"
        row.append(fr(ratio(rate.get(base), rate.get(name))) if name in rate else "")
    table(["Tool", "wall s", "records/s", "MB/s (JSONL in)", "CPU s", "peak RSS MB", "sc-sink ÷ this"], rows)
    sc = rate.get("sc-sink --csv")
    x = ratio(sc, rate.get("mlr --ijsonl --ocsv cat"))
    target(6, "sc-sink --csv ≥ 2 × mlr", x, "≥ 2x", ge(x, 2))
    x = ratio(sc, rate.get("jq -r '[...]|@csv'"))
    target(6, "sc-sink --csv ≥ jq", x, "≥ 1x", ge(x, 1))
    x = rate.get("sc-sink --sqlite")
    xr = ratio(x, rate.get("Python sqlite3 executemany"))
    target(6, "sc-sink --sqlite records/s against Python sqlite3", xr, "(no target)",
           None if xr is None else xr >= 1, shown=None if x is None else f"{x:,.0f}/s ({fr(xr)})", compare=True)
    for path in (recs, csv_out):
        os.unlink(path) if os.path.exists(path) else None
    rm_db()


def scenario_pipeline(base):
    n = N["pipeline"]
    heading(f"7. Whole pipeline: {n:,} URLs → fetch (c {CONC}) → parse → CSV, end to end")
    urls = os.path.join(TMP, "pipe-urls.txt")
    corpus.write_urls(urls, base, n, N["pages"])
    csv_out = os.path.join(TMP, "pipe.csv")

    def check(s):
        got = count_lines(csv_out)
        return None if got in (n, n + 1) else f"{got} CSV lines for {n} URLs"

    fetch, parse, sink = sc_fetch_cmd(f" -c {CONC}"), prog("sc-parse"), prog("sc-sink")
    sc_cmd = None
    if fetch and parse and sink:
        sc_cmd = f"{fetch} < {q(urls)} | {q(parse)} | {q(sink)} --csv {q(csv_out)}"
    missing = ", ".join(p for p, ok in (("sc-fetch", fetch), ("sc-parse", parse), ("sc-sink", sink)) if not ok)
    runners = [
        dict(name="sc-fetch | sc-parse | sc-sink --csv", cmd=sc_cmd, check=check,
             why=f"not built ({missing})"),
        dict(name="Python aiohttp + lxml + csv",
             cmd=f"{q(PY)} {q(os.path.join(HERE, 'py_pipeline.py'))} -c {CONC} {q(csv_out)} < {q(urls)}",
             check=check),
    ]
    res = run_interleaved(runners)
    rows = []
    rate = {}
    cpu = {}
    for r in runners:
        m = res[r["name"]]
        if "error" in m:
            rows.append([r["name"], m["error"], "", "", "", ""])
            continue
        rate[r["name"]] = n / m["wall"]
        cpu[r["name"]] = m["cpu"]
        rows.append([r["name"], f(m["wall"], 2), f(rate[r["name"]]), f(m["cpu"] / n * 1000, 3), f(m["rss"], 1)])
    sc = rate.get("sc-fetch | sc-parse | sc-sink --csv")
    for row in rows:
        row.append(fr(ratio(sc, rate.get(row[0]))) if row[0] in rate else "")
    table(["Pipeline", "wall s", "URLs/s", "CPU s / 1k URLs (all stages)", "largest RSS MB", "sc ÷ this (URLs/s)"],
          rows)
    x = ratio(sc, rate.get("Python aiohttp + lxml + csv"))
    target(7, "sc pipeline against the Python pipeline (URLs/s)", x, "(no target)",
           None if x is None else x > 1, compare=True)
    os.unlink(urls)


# --------------------------------------------------------------------- main

def versions():
    def first_line(cmd):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
            return (r.stdout or r.stderr).strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "?"
    import aiohttp
    import bs4
    import lxml.etree
    return {
        "nginx": first_line(["nginx", "-v"]).replace("nginx version: nginx/", ""),
        "curl": first_line(["curl", "--version"]).split(" (")[0].replace("curl ", ""),
        "wrk": first_line(["sh", "-c", "wrk -v 2>&1 | head -1"]).split(" [")[0].replace("wrk debian/", ""),
        "mlr": first_line(["mlr", "--version"]).replace("mlr ", ""),
        "jq": first_line(["jq", "--version"]).replace("jq-", ""),
        "Python": platform.python_version(),
        "aiohttp": aiohttp.__version__, "lxml": lxml.etree.__version__, "bs4": bs4.__version__,
    }


def header():
    cpu = "?"
    with open("/proc/cpuinfo") as fc:
        for line in fc:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    try:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        commit = "?"
    with open("/proc/loadavg") as fl:
        load = " ".join(fl.read().split()[:3])
    say(f"## sc benchmarks{' (smoke: tiny counts, one run each; not figures)' if SMOKE else ''}")
    say()
    say(f"- Date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; sc at {commit}")
    say(f"- Machine: {NPROC} cores (`nproc`), {cpu}, Linux {platform.release()}; load average at start {load}")
    say(f"- Each figure is the median of {REPS} run{'s' if REPS > 1 else ''}, tools interleaved; ratios are of medians.")
    say("- Versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()))
    say()


def main():
    global TMP
    os.makedirs(OUTDIR, exist_ok=True)
    TMP = tempfile.mkdtemp(prefix="sc-bench-")
    atexit.register(lambda: shutil.rmtree(TMP, ignore_errors=True))
    atexit.register(stop_children)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: sys.exit(128 + s))
    # c=1000 needs more than the usual 1024 descriptors.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    t_start = time.monotonic()

    header()
    www = os.path.join(TMP, "www")
    corpus.write_corpus(www, N["pages"])
    base = start_nginx(www)
    tbase = start_testserver()
    note(f"nginx at {base}; sc-testserver at {tbase}; scratch {TMP}")

    this = sys.modules[__name__]  # the helpers the scenario modules use
    scenarios = [("1", lambda: scenario_throughput(base)), ("2", lambda: scenario_latency(tbase)),
                 ("3", lambda: scenario_scaling(tbase)), ("4", lambda: scenario_memory(base)),
                 ("5", scenario_parse), ("6", scenario_sink), ("7", lambda: scenario_pipeline(base)),
                 ("8", lambda: pydocs.scenario(this, www, base)), ("9", lambda: crawl.scenario(this, www, base))]
    for key, fn in scenarios:
        if ONLY and key not in ONLY:
            continue
        t0 = time.monotonic()
        fn()
        note(f"scenario {key} took {time.monotonic() - t0:.1f}s")

    status = finish("Targets", "results.md", t_start)
    with open(os.path.join(OUTDIR, "targets.json"), "w") as fo:
        json.dump([dict(zip(("scenario", "target", "measured", "goal", "result"), t)) for t in targets], fo,
                  ensure_ascii=False, indent=1)
    note(f"wrote {os.path.join(OUTDIR, 'results.md')}")
    return status


if __name__ == "__main__":
    sys.exit(main())
