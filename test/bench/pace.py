#!/usr/bin/python3
"""The scenarios of issue 22, per-origin adaptive pace, measured from the
server's side (the fixture server's /log: when each request arrived and
what it was answered):

  pace-bucket  a token bucket of RATE requests/s (/bucket, bare 429s beyond
               it), a fixed number of URLs: sc-fetch (adaptive, the
               default) beside Scrapy with AutoThrottle at the same
               concurrency (py_pace_scrapy.py bucket).  After a convergence
               period: the share of requests refused, and the goodput (200s
               a second) as a share of RATE; the wall time.  Targets:
               sc-fetch under 1% refused, at least 90% of the rate.
  pace-hosts   a polite crawl of many origins: SERVERS fixture servers x 32
               loopback addresses (each host:port an origin) plus origins on
               a port nobody listens on (dead), hosts of Zipf sizes, some
               slow (leaf pages of /delay/MS), some flaky (generated pages,
               10% of their requests a 503 whatever the pace: the servers'
               --robots-dir H.unreliable), some with Crawl-delay: 1 (the
               servers' --robots-dir).  share/sc/crawl.mk the README's way
               (-j 4 C=64 PER_HOST=1 FETCH_ARGS=--delay 250), the same URLs
               as one flat list through sc-fetch, and Scrapy (py_pace_scrapy.py
               crawl: DOWNLOAD_DELAY, one request per origin, robots obeyed).
               crawl.mk hands a host held past DEFER_AFTER (here 500 ms,
               under the Crawl-delay of 1 s and over the --delay of 250)
               to the next round, so that no round waits on it: its
               politeness bound is that of the whole crawl, the largest
               over hosts of (all its URLs - 1) x its spacing + its
               latency (issue 26.3; target: within 1.1x).  Beside it, the
               same crawl with ADAPTIVE=0 (sc-fetch --no-adaptive) and
               with DEFER_AFTER=0 (rounds as barriers), held to the bound
               of a crawl in rounds: per round, the largest host's, summed.
  pace-cost    nothing wrong: sc-fetch with the controller (default) and
               with --no-adaptive, interleaved, on bench scenario 1 (nginx,
               ~20 KB pages, -c 20), scenario 2 (100 ms answers, -c 20) and
               scenario 3's -c 100 and -c 1000 rows: the ratio of wall
               times; target at most 1.05x.

Runs from test/bench/run (make bench, make bench-smoke) or alone
(/usr/bin/python3 test/bench/pace.py).  It uses bench.py's measuring and
servers.  SC_BENCH_ONLY, when set, must name "pace" or one of the three
for any to run.  Writes markdown on stdout and to build/bench/pace.md."""
import json
import math
import os
import shutil
import subprocess
import sys
import time
import urllib.request

import bench as b
import corpus

SCRAPY = os.path.join(b.HERE, "py_pace_scrapy.py")
# crawl.mk's DEFER_AFTER in pace-hosts: over --delay, under Crawl-delay.
DEFER_MS = 500
# The share of a flaky host's requests refused (503), whatever the pace.
FLAKY_PERCENT = 10
if b.SMOKE:
    P = dict(rate=50, bucket_urls=100, converge=1, servers=1, addrs=8, dead=1, zipf_top=3, depth=1,
             cost_urls=300, cost_delay=40, cost_wide=((100, 200), (1000, 1000)))
else:
    P = dict(rate=50, bucket_urls=1500, converge=5, servers=4, addrs=32, dead=8, zipf_top=8, depth=2,
             cost_urls=20_000, cost_delay=1000, cost_wide=((100, 1000), (1000, 5000)))
BUCKET_C = 8
DELAY_MS = 250
CRAWL_DELAY_MS = 1000
CRAWL_C = 64
COST_PAGES = 50 if b.SMOKE else 1000   # distinct pages of scenario 1's corpus
# A few seconds a run, on a shared machine: more runs than the bench's 3.
COST_REPS = 1 if b.SMOKE else max(b.REPS, 7)


# sc-fetch exits 3 when a record is not ok: the dead origins' are not.
NOT_OK_ALLOWED = "; rc=$?; [ $rc = 0 ] || [ $rc = 3 ]"


def server_log(base):
    with urllib.request.urlopen(f"{base}/log", timeout=30) as r:
        return json.load(r)


def start_servers(count, addrs, robots_dirs):
    """count sc-testservers, each on 127.0.0.1..addrs with its robots dir;
    returns their ports."""
    ports = []
    for i in range(count):
        portfile = os.path.join(b.TMP, f"hosts-{i}.port")
        p = subprocess.Popen([b.TESTSERVER, "--port-file", portfile, "--loopback", str(addrs),
                              "--robots-dir", robots_dirs[i]],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        b.children.append(p)
        deadline = time.monotonic() + 10
        port = 0
        while not port and time.monotonic() < deadline:
            try:
                with open(portfile) as fp:
                    port = int(fp.read().strip() or 0)
            except (OSError, ValueError):
                time.sleep(0.05)
        if not port or not b.wait_port(port, p):
            raise SystemExit("pace: sc-testserver did not start")
        ports.append(port)
    return ports


# ------------------------------------------------------------ token bucket

def bucket_figures(base, bucket_id, wall):
    """From the server's log: requests, refused, ok, and after the
    convergence period the refused share and ok/s over the rate."""
    prefix = f"/bucket/{bucket_id}?"
    log = [e for e in server_log(base) if e["path"].startswith(prefix) and "stats=1" not in e["path"]]
    if not log:
        return None
    t0 = log[0]["t_ms"]
    after = [e for e in log if e["t_ms"] >= t0 + P["converge"] * 1000]
    secs = (after[-1]["t_ms"] - after[0]["t_ms"]) / 1000 if len(after) > 1 else 0
    ok_after = sum(1 for e in after if e["status"] == 200)
    return {"requests": len(log), "ok": sum(1 for e in log if e["status"] == 200),
            "refused": sum(1 for e in log if e["status"] == 429),
            "share_429": 100 * (len(after) - ok_after) / len(after) if after else 0,
            "goodput": 100 * ok_after / secs / P["rate"] if secs else 0, "wall": wall}


def scenario_bucket(tbase):
    n, rate = P["bucket_urls"], P["rate"]
    b.heading(f"pace-bucket. A token bucket of {rate} requests/s (bare 429 beyond it), {n:,} URLs, "
              f"concurrency {BUCKET_C}")
    urls = os.path.join(b.TMP, "bucket.txt")
    out = os.path.join(b.TMP, "bucket.jsonl")
    runs = {"id": 0}

    def prep():
        runs["id"] += 1
        with open(urls, "w") as fo:
            fo.writelines(f"{tbase}/bucket/r{runs['id']}?rate={rate}&burst=5&i={i}\n" for i in range(n))

    def check(s):
        fig = bucket_figures(tbase, f"r{runs['id']}", s["wall"])
        if not fig:
            return "no request reached the bucket"
        s.update(fig)
        s["extra"] = (f"ok={fig['ok']} refused={fig['refused']} after {P['converge']} s: "
                      f"{fig['share_429']:.2f}% refused, goodput {fig['goodput']:.1f}% of the rate")
        return None

    fetch = b.sc_fetch_cmd(f" -c {BUCKET_C}")
    runners = [
        dict(name=f"sc-fetch -c {BUCKET_C} (adaptive)", cmd=fetch and f"{fetch} < {b.q(urls)} > {b.q(out)}",
             prep=prep, check=check, timeout=600),
        # What the controller buys: the same run without it (its retries
        # may run out: exit 3 allowed).
        dict(name=f"sc-fetch -c {BUCKET_C} --no-adaptive",
             cmd=fetch and f"{fetch} --no-adaptive < {b.q(urls)} > {b.q(out)}{NOT_OK_ALLOWED}",
             prep=prep, check=check, timeout=600),
        dict(name=f"Scrapy, AutoThrottle, {BUCKET_C} concurrent",
             cmd=f"{b.q(b.PY)} {b.q(SCRAPY)} bucket -c {BUCKET_C} {b.q(out)} < {b.q(urls)}",
             prep=lambda: (prep(), os.path.exists(out) and os.unlink(out)), check=check, timeout=900),
    ]
    res = b.run_interleaved(runners, 1)
    rows = []
    for r in runners:
        m = res[r["name"]]
        if "error" in m:
            rows.append([r["name"], m["error"], "", "", "", "", ""])
            continue
        rows.append([r["name"], b.f(m["requests"]), f"{b.f(m['ok'])} of {n:,}", b.f(m["refused"]),
                     f"{m['share_429']:.2f}%", f"{m['goodput']:.1f}%", b.f(m["wall"], 1)])
    b.table(["Tool", "requests", "ok", "429s", f"429 share after {P['converge']} s",
             "goodput ÷ rate after it", "wall s"], rows)
    b.say(f"From the server's log: every request the bucket saw, by arrival. The ideal wall time is "
          f"{n / rate:.0f} s ({n:,} ÷ {rate}/s, the first 5 from the burst). Scrapy retries a 429 twice, "
          "then gives the URL up; AutoThrottle starts at a 5 s delay (its default) and steers by latency, "
          "not by 429s.")
    b.say()
    m = res[runners[0]["name"]]
    why = None if "error" not in m else m["error"]
    share = None if why else m["share_429"]
    good = None if why else m["goodput"]
    b.target("pace-bucket", f"sc-fetch: 429 share after {P['converge']} s < 1%", None, "< 1%",
             None if why else share < 1, why or f"{share:.2f}%")
    b.target("pace-bucket", f"sc-fetch: goodput after {P['converge']} s ≥ 90% of the bucket", None, "≥ 90%",
             None if why else good >= 90, why or f"{good:.1f}%")


# ------------------------------------------------------------ many hosts

def page_links(path):
    """The links of the fixture's /page/N (sc-testserver build_page), as
    paths; a ?x=1 page has the same links as its page."""
    n = int(path.split("/")[2].split("?")[0])
    return [f"/page/{n + 1}", f"/page/{n + 2}", f"/page/{n + 3}?x=1", f"/page/{n + 4}", f"/page/{n // 2}"]


class Host:
    def __init__(self, origin, rank, kind, seeds):
        self.origin, self.rank, self.kind, self.seeds = origin, rank, kind, seeds
        self.spacing = CRAWL_DELAY_MS if kind == "crawl-delay" else DELAY_MS
        self.latency = int(seeds[0].split("/")[2].split("?")[0]) if kind == "slow" else 0

    def levels(self, depth):
        """Paths by depth from the seeds, each at the smallest depth."""
        seen = set(self.seeds)
        levels = [list(self.seeds)]
        for _ in range(depth if self.kind in ("page", "crawl-delay", "flaky") else 0):
            found = []
            for p in levels[-1]:
                for link in page_links(p):
                    if link not in seen:
                        seen.add(link)
                        found.append(link)
            levels.append(found)
        return levels


def make_hosts(ports, dead_port):
    """The origins: Zipf sizes by rank (zipf_top seeds for the largest,
    at least one); every 5th a slow host of leaf pages (/delay/MS), every
    9th with Crawl-delay: 1, every 7th flaky (a tenth of its page
    requests refused), the rest generated pages; and dead origins."""
    hosts = []
    origins = [f"127.0.0.{a}:{p}" for a in range(1, P["addrs"] + 1) for p in ports]
    for rank, origin in enumerate(origins, 1):
        k = max(1, round(P["zipf_top"] / rank))
        if rank % 5 == 2:
            ms = (50, 100, 200)[rank // 5 % 3]
            hosts.append(Host(origin, rank, "slow", [f"/delay/{ms}?n={j}" for j in range(3 * k)]))
        else:
            # A flaky site: 10% of its page requests answer 503 whatever
            # the pace (the server's robots-dir H.unreliable).
            kind = "crawl-delay" if rank % 9 == 4 else "flaky" if rank % 7 == 3 else "page"
            hosts.append(Host(origin, rank, kind, [f"/page/{1000 * j + 10}" for j in range(k)]))
    for a in range(1, P["dead"] + 1):
        hosts.append(Host(f"127.0.0.{a}:{dead_port}", 0, "dead", ["/page/10"]))
    return hosts


def robots_dirs(hosts, ports):
    dirs = []
    for i, port in enumerate(ports):
        d = os.path.join(b.TMP, f"robots-{i}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "default"), "w") as fo:
            fo.write("User-agent: *\nDisallow:\n")
        for h in hosts:
            if h.kind == "crawl-delay" and h.origin.endswith(f":{port}"):
                with open(os.path.join(d, h.origin.split(":")[0]), "w") as fo:
                    fo.write(f"User-agent: *\nCrawl-delay: {CRAWL_DELAY_MS // 1000}\n")
            if h.kind == "flaky" and h.origin.endswith(f":{port}"):
                with open(os.path.join(d, h.origin.split(":")[0] + ".unreliable"), "w") as fo:
                    fo.write(f"{FLAKY_PERCENT}\n")
        dirs.append(d)
    return dirs


def bounds(hosts, depth, scrapy=False):
    """(rounds bound, whole-crawl bound) in seconds.  Rounds: per depth,
    the largest over live hosts of (URLs - 1) x spacing + latency, summed.
    Whole crawl (a crawler not in rounds): the largest over hosts of
    (all its URLs - 1) x spacing + latency.  scrapy: Scrapy ignores
    Crawl-delay, so every host is spaced by DOWNLOAD_DELAY."""
    def spacing(h):
        return DELAY_MS if scrapy else h.spacing

    def requests(h, n):
        """A flaky host's refused requests are asked again: n pages
        take n / (1 - share) requests."""
        return math.ceil(n * 100 / (100 - FLAKY_PERCENT)) if h.kind == "flaky" else n
    live = [h for h in hosts if h.kind != "dead"]
    per_round = []
    for d in range(depth + 1):
        per_round.append(max(((requests(h, len(lv[d])) - 1) * spacing(h) + h.latency
                              for h, lv in ((h, h.levels(depth)) for h in live) if d < len(lv) and lv[d]),
                             default=0))
    whole = max((requests(h, sum(len(x) for x in h.levels(depth))) - 1) * spacing(h) + h.latency
                for h in live)
    return sum(per_round) / 1000, whole / 1000


def closest_gaps(ports, hosts, depth):
    """From the servers' logs, the gaps between two pages' arrivals at one
    origin, over its spacing: the closest, how many were under 95% of it
    (more than 12.5 ms early at 250 ms), and how many of those were between
    pages of different depths (the end of one round and the start of the
    next, for a crawl in rounds).  robots.txt is left out (it is not a
    page: a crawler may fetch it just before the first)."""
    spacing = {h.origin: h.spacing for h in hosts}
    level = {(h.origin, p): d for h in hosts for d, lv in enumerate(h.levels(depth)) for p in lv}
    closest, short, across, total = None, 0, 0, 0
    for port in ports:
        arrivals = {}
        for e in server_log(f"http://127.0.0.1:{port}"):
            if e["path"] != "/robots.txt" and e["host"] in spacing:
                arrivals.setdefault(e["host"], []).append((e["t_ms"], level.get((e["host"], e["path"]))))
        for origin, seen in arrivals.items():
            seen.sort()
            for (t1, d1), (t2, d2) in zip(seen, seen[1:]):
                x = (t2 - t1) / spacing[origin]
                closest = x if closest is None else min(closest, x)
                total += 1
                if x < 0.95:
                    short += 1
                    across += d1 != d2
    return {"closest": closest or 0.0, "short": short, "across": across, "gaps": total}


def scenario_hosts():
    depth = P["depth"]
    ports_n, addrs = P["servers"], P["addrs"]
    dead_port = b.free_port()
    # The servers read their robots files at each request: the files are
    # written once the ports (and so the hosts) are known.
    dirs = [os.path.join(b.TMP, f"robots-{i}") for i in range(ports_n)]
    for d in dirs:
        os.makedirs(d, exist_ok=True)
    ports = start_servers(ports_n, addrs, dirs)
    hosts = make_hosts(ports, dead_port)
    robots_dirs(hosts, ports)
    live = [h for h in hosts if h.kind != "dead"]
    want = sum(sum(len(x) for x in h.levels(depth)) for h in live)
    sizes = sorted((sum(len(x) for x in h.levels(depth)) for h in live), reverse=True)
    kinds = {k: sum(1 for h in hosts if h.kind == k) for k in ("page", "slow", "flaky", "crawl-delay", "dead")}
    b.heading(f"pace-hosts. A polite crawl of {len(hosts)} origins ({ports_n} servers × {addrs} loopback "
              f"addresses + {kinds['dead']} dead), depth {depth}, {want:,} pages, C={CRAWL_C} PER_HOST=1, "
              f"--delay {DELAY_MS}")
    work = os.path.join(b.TMP, "hosts")
    seeds = os.path.join(work, "seeds.txt")
    flat = os.path.join(work, "flat.txt")
    os.makedirs(work)
    with open(seeds, "w") as fo:
        fo.writelines(f"http://{h.origin}{p}\n" for h in hosts for p in h.seeds)
    with open(flat, "w") as fo:
        fo.writelines(f"http://{h.origin}{p}\n" for h in hosts for lv in h.levels(depth) for p in lv)
    crawl_dir = os.path.join(work, "crawl")
    out = os.path.join(work, "out.jsonl")
    items = os.path.join(work, "scrapy.jsonl")

    def fresh():
        shutil.rmtree(crawl_dir, ignore_errors=True)
        for p in (out, items):
            if os.path.exists(p):
                os.unlink(p)
        for port in ports:  # /stats/reset also empties the server's log
            urllib.request.urlopen(f"http://127.0.0.1:{port}/stats/reset", timeout=30).read()

    def spaced(s, got):
        s["pages"] = got
        s.update(closest_gaps(ports, hosts, depth))
        s["extra"] = (f"pages={got} closest gap ÷ spacing {s['closest']:.3f}, under 95% {s['short']} of "
                      f"{s['gaps']} ({s['across']} between depths)")
        return None if got == want else f"{got} ok pages, want {want}"

    def ok_count(path):
        return lambda s: spaced(s, b.count_in_file(path, b'"ok":true') if os.path.exists(path) else 0)

    def items_check(s):
        with open(items) as fi:
            recs = [json.loads(line) for line in fi]
        return spaced(s, len({r["url"] for r in recs if r["status"] == 200}))

    mk = os.path.join(b.ROOT, "share/sc/crawl.mk")
    fetch = b.sc_fetch_cmd(f" -c {CRAWL_C} --per-host 1 --delay {DELAY_MS} --robots")
    env = f"PATH={b.q(b.BIN)}:\"$PATH\" XDG_CACHE_HOME={b.q(work)}/.cache"
    def crawl_mk(extra):
        return dict(name=f"make -f crawl.mk -j 4 C={CRAWL_C} PER_HOST=1 FETCH_ARGS='--delay {DELAY_MS}' {extra}",
                    cmd=(f"{env} make -s -f {b.q(mk)} -j 4 SEEDS={b.q(seeds)} DEPTH={depth} "
                         f"DIR={b.q(crawl_dir)} C={CRAWL_C} PER_HOST=1 FETCH_ARGS='--delay {DELAY_MS}' "
                         f"{extra}") if os.path.isfile(mk) else None,
                    why="share/sc/crawl.mk is not there", prep=fresh,
                    check=ok_count(os.path.join(crawl_dir, "pages.jsonl")), timeout=1800)

    runners = [
        crawl_mk(f"DEFER_AFTER={DEFER_MS}"),
        crawl_mk(f"DEFER_AFTER={DEFER_MS} ADAPTIVE=0"),
        crawl_mk("DEFER_AFTER=0"),
        dict(name="sc-fetch --robots, the same URLs as one flat list", cmd=fetch and
             f"{env} {fetch} < {b.q(flat)} > {b.q(out)}{NOT_OK_ALLOWED}", prep=fresh, check=ok_count(out),
             timeout=1800),
        dict(name="Scrapy CrawlSpider, DOWNLOAD_DELAY 0.25, 1 per origin, robots",
             cmd=(f"{b.q(b.PY)} {b.q(SCRAPY)} crawl -c {CRAWL_C} --delay {DELAY_MS / 1000} --depth {depth} "
                  f"{b.q(items)} {b.q(seeds)}"), prep=fresh, check=items_check, timeout=3600),
    ]
    res = b.run_interleaved(runners, 1)
    rounds, whole = bounds(hosts, depth)
    _, whole_scrapy = bounds(hosts, depth, scrapy=True)
    rows = []
    for r, bound in zip(runners, (whole, whole, rounds, whole, whole_scrapy)):
        m = res[r["name"]]
        if "error" in m:
            rows.append([r["name"], m["error"] if r.get("cmd") else f"skipped: {m['error']}", "", "", "", "", "", ""])
            continue
        rows.append([r["name"], b.f(m.get("pages")), b.f(m["wall"], 1), b.f(bound, 1), b.fr(m["wall"] / bound),
                     f"{m['closest']:.3f}", f"{b.f(m['short'])} of {b.f(m['gaps'])} ({b.f(m['across'])})",
                     b.f(m["cpu"], 1)])
    b.table(["Tool", "ok pages", "wall s", "bound s", "wall ÷ bound", "closest gap ÷ spacing",
             "gaps under 95% of it (between depths)", "CPU s"], rows)
    b.say(f"Hosts: {kinds['page']} of generated pages (/page/N, 5 links each), {kinds['slow']} slow ones of leaf "
          f"pages (/delay/50, 100 or 200), {kinds['flaky']} flaky ones of generated pages "
          f"({FLAKY_PERCENT}% of page requests refused with a 503 whatever the pace), {kinds['crawl-delay']} with Crawl-delay: 1, {kinds['dead']} dead "
          f"(a port nobody listens on); Zipf sizes, largest {sizes[0]}, {sizes[len(sizes) // 2]} the median. "
          f"crawl.mk with DEFER_AFTER, the flat list and Scrapy are held to the largest host of the whole "
          f"crawl, (all its URLs - 1) × its spacing + its latency (a flaky host's URLs counted with the requests its "
          f"refusals add); crawl.mk with DEFER_AFTER=0 (its rounds "
          f"barriers) to the bound of a crawl in rounds ({depth + 1} rounds: the largest host of each, "
          f"summed: {rounds:.1f} s against {whole:.1f} s). Scrapy does not apply Crawl-delay (its bound spaces "
          f"every host by 0.25 s), and keys its slots by host name without the port: the spider names each "
          f"origin as its download_slot. The gaps are between arrivals of pages at the server (robots.txt left "
          f"out), so they include the jitter of the client's and the server's scheduling on a busy machine; "
          f"between depths: the two pages were of different depths (for crawl.mk, the last of one round and "
          f"the first of the next, in two processes). One run each.")
    b.say()
    m = res[runners[0]["name"]]
    x = None if "error" in m else m["wall"] / whole
    b.target("pace-hosts", "crawl.mk (DEFER_AFTER) wall ≤ 1.1 × the politeness bound of the whole crawl", x,
             "≤ 1.10x", None if x is None else x <= 1.1, None if x is not None else m["error"])


# ------------------------------------------------------------ no cost

def scenario_cost(nbase, tbase):
    """Scenarios 1 and 2 of bench.py at -c 20, and scenario 3's two widest
    rows (-c 100 and -c 1000 on one origin, where the controller's limit on
    requests in flight is the widest), each with and without the controller."""
    n, nd = P["cost_urls"], P["cost_delay"]
    b.heading(f"pace-cost. Nothing wrong: sc-fetch with the controller (default) and with --no-adaptive, "
              f"interleaved, median of {COST_REPS}")
    urls = os.path.join(b.TMP, "cost.txt")
    corpus.write_urls(urls, nbase, n, COST_PAGES)
    cases = [(f"1: {n:,} pages of ~20 KB (nginx), -c 20", urls, n, 20)]
    for c, count in ((20, nd),) + P["cost_wide"]:
        path = os.path.join(b.TMP, f"cost-delay-{c}.txt")
        corpus.write_same_url(path, f"{tbase}/delay/100", count)
        cases.append((f"{2 if c == 20 else 3}: {count:,} answers of 100 ms (sc-testserver), -c {c}", path, count, c))
    out = os.path.join(b.TMP, "cost.jsonl")
    runs = []
    for what, path, count, c in cases:
        fetch = b.sc_fetch_cmd(f" -c {c}")
        pair = [dict(name=f"{what}, {mode}", cmd=fetch and f"{fetch}{flag} < {b.q(path)} > {b.q(out)}",
                     check=b.check_ok_records(out, count))
                for mode, flag in (("adaptive", ""), ("--no-adaptive", " --no-adaptive"))]
        runs.append((what, pair, b.run_interleaved(pair, COST_REPS)))
    rows = []
    for what, pair, res in runs:
        a, c = res[pair[0]["name"]], res[pair[1]["name"]]
        if "error" in a or "error" in c:
            rows.append([what, a.get("error", ""), c.get("error", ""), "", "", "", "", ""])
            b.target("pace-cost", f"{what}: adaptive wall ≤ 1.05 × --no-adaptive", None, "≤ 1.05x", None,
                     "failed")
            continue
        x = a["wall"] / c["wall"]
        rows.append([what, b.f(a["wall"], 2), b.f(c["wall"], 2), b.fr(x), b.fr(b.ratio(a["wall_min"], c["wall_min"])),
                     b.f(a["cpu"], 2), b.f(c["cpu"], 2), b.fr(b.ratio(a["cpu"], c["cpu"]))])
        b.target("pace-cost", f"{what}: adaptive wall ≤ 1.05 × --no-adaptive", x, "≤ 1.05x", x <= 1.05)
    b.table(["Scenario", "adaptive wall s", "--no-adaptive wall s", "ratio", "ratio of the fastest runs",
             "adaptive CPU s", "--no-adaptive CPU s", "CPU ratio"], rows)
    b.say("Medians; the fastest runs are the least disturbed by the machine's other work. The other scenarios "
          "of make bench run sc-fetch with its defaults, so with the controller on.")
    b.say()


def main():
    wanted, t_start = b.begin("pace", ("pace-bucket", "pace-hosts", "pace-cost"), "Adaptive pace (issue 22)", interleaved=False)
    if not wanted:
        return 0
    tbase = b.start_testserver()
    if not tbase:
        raise SystemExit("pace: build/test/sc-testserver is not built (make testserver)")
    if "pace-bucket" in wanted:
        scenario_bucket(tbase)
    if "pace-hosts" in wanted:
        scenario_hosts()
    if "pace-cost" in wanted:
        www = os.path.join(b.TMP, "www")
        corpus.write_corpus(www, COST_PAGES)
        scenario_cost(b.start_nginx(www), tbase)
    return b.finish("Adaptive pace: targets", "pace.md", t_start)


if __name__ == "__main__":
    sys.exit(main())
