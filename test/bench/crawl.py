"""Scenario 9: crawls, measured from outside (issues 11 and 12).

Two sites: the PostgreSQL 15 documentation (Debian's postgresql-doc-15)
served by the bench's nginx at /pg/, crawled from /pg/index.html to depth 2
(1,169 pages); and, in full mode, a site of about 20,000 pages at depth 3:
/big/index.html links to COPIES copies of the same documentation,
/big/K/ (symlinks), so depth 1 is the copies' index pages.  Each is
crawled within its directory by:
- Scrapy's CrawlSpider (py_crawl_scrapy.py: robots on, 8 concurrent, a
  JSONL item per page);
- `wget -r -l 2 --no-parent` and `wget2 -r -l 2 --no-parent --max-threads 8`,
  which only save files;
- the same URLs as flat lists, one `sc-fetch -c 8 | sc-parse` per depth,
  one after the other: the floor for a crawl made of rounds;
- share/sc/crawl.mk (`make -f crawl.mk SEEDS= DEPTH= DIR= C=8 PER_HOST=8`,
  as every page is on one host), skipped with the reason printed when it
  or sc-frontier is not there;
- crawl.mk with WORKERS (issue 12's fan-out): two GNU parallel workers,
  ": :" (local) unless SC_BENCH_WORKERS says otherwise.
SC_BENCH_CRAWL_SITES="9a" (or "9b") runs one of the two sites.
9s (always, first): issue 12's shard skew, the largest worker's URLs over
the mean, from the real split (crawl-split.awk) for 2, 3 and 8 workers, on
the fixture crawl's 8 hosts, the one-host docs crawl, a Zipf (s=1) mix of
1,000 hosts over 100,000 URLs, and that mix with a per-round host cap.
Wall, CPU of the process tree and the largest process's peak RSS.  Every
run is checked against the reference page set, which is computed here
from the files (a breadth-first walk of their <a>/<area> links), so every
tool must get exactly those pages.

The functions take the bench module (b) for its measuring and reporting
helpers."""
import glob
import json
import os
import shutil
import subprocess
from urllib.parse import urljoin

import tmpfs

PGDOCS = "/usr/share/doc/postgresql-doc-15/html"
CONC = 8
COPIES = 17   # 1 + 17 x 1,169 = 19,874 pages
# Every page has <link rev="made" href="pgsql-docs@lists.postgresql.org">,
# which wget follows to a 404 and then exits 8 ("server issued an error
# response"); the saved files are checked instead.
WGET_404_OK = "; rc=$?; [ $rc = 0 ] || [ $rc = 8 ]"


def reference_levels(root, depth):
    """Paths under root reached from index.html, by depth: [[index.html],
    [its links], ...], each page at the smallest depth it is found at."""
    from lxml import html as lhtml
    seen = {"index.html"}
    levels = [["index.html"]]
    for _ in range(depth):
        found = []
        for rel in levels[-1]:
            for el in lhtml.parse(os.path.join(root, rel)).getroot().iter("a", "area"):
                href = (el.get("href") or "").strip()
                url = urljoin("/pg/" + rel, href).split("#")[0]
                path = url[len("/pg/"):]
                if (href and url.startswith("/pg/") and path not in seen
                        and os.path.isfile(os.path.join(root, path))):
                    seen.add(path)
                    found.append(path)
        levels.append(found)
    return levels


def find_crawl_mk(b):
    path = os.environ.get("SC_CRAWL_MK") or os.path.join(b.ROOT, "share/sc/crawl.mk")
    return path if os.path.isfile(path) else None


def html_files(top):
    return len([p for p in glob.glob(os.path.join(top, "**", "*.html"), recursive=True) if os.path.isfile(p)])


def chunk_skew(crawl_dir):
    """max/mean of the URL counts of the round chunks crawl.mk wrote
    (round-N/ files of URLs or records), per round; None if none found."""
    skews = []
    for rnd in sorted(glob.glob(os.path.join(crawl_dir, "round-*"))):
        sizes = [lines_in(p) for p in glob.glob(os.path.join(rnd, "chunk-*.jsonl"))]
        sizes = [s for s in sizes if s]
        if len(sizes) > 1:
            skews.append(max(sizes) / (sum(sizes) / len(sizes)))
    return skews or None


def shard_sizes(b, records, workers, work, cap=0):
    """URLs per shard when crawl-split.awk splits the records (dicts with
    url and host) over that many workers, one chunk per shard (CHUNK huge),
    with crawl.mk's ROUND_MAX_PER_HOST=cap (0: none)."""
    os.makedirs(work, exist_ok=True)
    for p in glob.glob(os.path.join(work, "chunk-*.urls")) + glob.glob(os.path.join(work, "deferred.jsonl")):
        os.unlink(p)
    src = os.path.join(work, "urls.jsonl")
    with open(src, "w") as fo:
        fo.writelines(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    split = os.path.join(b.ROOT, "share/sc/crawl-split.awk")
    out = subprocess.run(["awk", "-v", f"SHARDS={workers}", "-v", "CHUNK=1000000000", "-v", f"CAP={cap}", "-v", f"DIR={work}",
                          "-f", split, src, src], check=True, capture_output=True, text=True,
                         env=dict(os.environ, LC_ALL="C")).stdout
    sizes = [0] * workers
    for line in out.splitlines():
        if line.startswith("N."):
            chunk, _, n = line[2:].partition(" := ")
            sizes[int(chunk.split("-")[0])] += int(n)
    return sizes


def skew_of(sizes):
    """Largest shard over the mean (issue 12's skew); empty shards count."""
    return max(sizes) / (sum(sizes) / len(sizes)) if sum(sizes) else None


def zipf_counts(hosts, urls, s=1.0):
    """URLs per host, host k (1-based) getting urls * k^-s / H: exact
    shares, largest remainders rounded up, so the mix is the same every run."""
    weights = [k ** -s for k in range(1, hosts + 1)]
    total = sum(weights)
    shares = [urls * w / total for w in weights]
    counts = [int(x) for x in shares]
    for k in sorted(range(hosts), key=lambda k: counts[k] - shares[k])[:urls - sum(counts)]:
        counts[k] += 1
    return counts


def skew_scenario(b, scratch):
    """Issue 12's skew: the largest shard's URLs over the mean, from the
    real split (crawl-split.awk), for 2, 3 and 8 workers: the fixture's
    crawl (8 hosts, 127.0.0.1-8, equal), the PostgreSQL docs crawl (one
    host), a Zipf (s=1) mix of 1,000 hosts over 100,000 URLs, and that mix
    as the first round of a crawl with a per-round cap per host (what a
    host over the cap has left goes to later rounds)."""
    b.heading("9s. Shard skew (issue 12): largest worker's URLs ÷ mean, from crawl-split.awk")
    split = os.path.join(b.ROOT, "share/sc/crawl-split.awk")
    if not os.path.isfile(split):
        b.say("share/sc/crawl-split.awk is not there: skipped.")
        b.say()
        return
    n_hosts, n_urls = (100, 10000) if b.SMOKE else (1000, 100000)
    counts = zipf_counts(n_hosts, n_urls)
    cap = 1000 if not b.SMOKE else 100

    def records(per_host):
        return [{"url": f"http://{h}/page/{i}", "host": h} for h, n in per_host for i in range(n)]

    zipf = [(f"h{k}.example", n) for k, n in enumerate(counts)]
    mixes = [("fixture crawl: 8 hosts (127.0.0.1-8), 40 URLs each", [(f"127.0.0.{k}", 40) for k in range(1, 9)], 0),
             ("PostgreSQL docs crawl: 1 host, 1,169 URLs", [("127.0.0.1", 1169)], 0),
             (f"Zipf s=1: {n_hosts:,} hosts, {n_urls:,} URLs (largest host {counts[0]:,})", zipf, 0),
             (f"same Zipf mix, ROUND_MAX_PER_HOST={cap}: the first round "
              f"({sum(min(n, cap) for n in counts):,} URLs; the largest host needs "
              f"{-(-counts[0] // cap)} rounds)", zipf, cap)]
    rows = []
    work = os.path.join(scratch, "skew")
    for what, per_host, round_cap in mixes:
        recs = records(per_host)
        row = [what]
        for w in (2, 3, 8):
            sizes = shard_sizes(b, recs, w, work, round_cap)
            row.append(f"{skew_of(sizes):.2f} ({'/'.join(str(x) for x in sizes)})")
        rows.append(row)
    shutil.rmtree(work, ignore_errors=True)
    b.table(["URL mix", "2 workers", "3 workers", "8 workers"], rows)
    b.say("Skew 1.00 is perfect balance; the round lasts as long as its largest shard. A host is never split "
          "over workers (politeness), so one giant host bounds the skew from below: it is split over time "
          "instead, by a per-round cap per host (ROUND_MAX_PER_HOST, sc-crawl(7), \"Skew\").")
    b.say()


def lines_in(path):
    with open(path, "rb") as fi:
        return sum(1 for _ in fi)


def big_site(www, scratch, copies, pg_levels):
    """www/big: an index linking to copies of the docs at big/K/; returns
    the reference levels of a crawl from big/index.html (paths under big/),
    which are the docs' levels one deeper, once per copy."""
    top = os.path.join(scratch, "big")
    os.makedirs(top)
    with open(os.path.join(top, "index.html"), "w") as fo:
        fo.write("<!DOCTYPE html>\n<html><head><title>Copies of the PostgreSQL 15 docs</title></head><body>\n"
                 + "".join(f'<p><a href="{k}/index.html">Copy {k}</a></p>\n' for k in range(copies))
                 + "</body></html>\n")
    for k in range(copies):
        os.symlink(PGDOCS, os.path.join(top, str(k)))
    link = os.path.join(www, "big")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(top, link)
    return [["index.html"]] + [[f"{k}/{p}" for k in range(copies) for p in lv] for lv in pg_levels]


def scenario(b, www, base):
    """Both sites; in smoke mode the small one to depth 1 and a big one of
    2 copies to depth 2."""
    if not os.path.isdir(PGDOCS):
        b.heading("9. Crawl")
        b.say(f"{PGDOCS} is not there (Debian's postgresql-doc-15): scenario skipped.")
        b.say()
        return
    link = os.path.join(www, "pg")
    if not os.path.lexists(link):
        os.symlink(PGDOCS, link)
    # Allow-all, as a site's robots.txt: a 404 makes wget exit 8.
    with open(os.path.join(www, "robots.txt"), "w") as fr:
        fr.write("User-agent: *\nDisallow:\n")
    scratch, where = tmpfs.scratch(b.TMP, "crawl", 1 << 30)
    skew_scenario(b, scratch)
    sites = os.environ.get("SC_BENCH_CRAWL_SITES", "9a 9b").split()
    small_depth = 1 if b.SMOKE else 2
    small = big = None
    if "9a" in sites:
        small = crawl_site(b, base, scratch, where, "9a", "the PostgreSQL 15 docs (postgresql-doc-15) at /pg/", "pg",
                           reference_levels(PGDOCS, small_depth))
    if "9b" in sites:
        copies = 2 if b.SMOKE else COPIES
        levels = big_site(www, scratch, copies, reference_levels(PGDOCS, small_depth))
        # Scrapy once on the big site: about 20 times the small one's minutes.
        big = crawl_site(b, base, scratch, where, "9b", f"{copies} copies of the PostgreSQL 15 docs at /big/K/",
                         "big", levels, scrapy_reps=0 if b.SMOKE else 1)
    x = b.ratio(big, small)
    b.target(9, "crawl.mk peak RSS flat: large crawl ≤ 1.25 × small crawl", x, "≤ 1.25x",
             None if x is None else x <= 1.25, None if x is not None else "crawl.mk not measured")
    tmpfs.remove(scratch)


def crawl_site(b, base, scratch, where, key, what, top, levels, scrapy_reps=None):
    """Crawls base/top/index.html to len(levels) - 1 with every tool; levels
    are the reference paths under top/ by depth; Scrapy runs scrapy_reps
    times (default: as many as the others; 0: not at all).  Returns crawl.mk's peak RSS
    or None."""
    depth = len(levels) - 1
    want = sum(len(lv) for lv in levels)
    b.heading(f"{key}. Crawl: {what}, from index.html to depth {depth} ({want:,} pages), concurrency {CONC}")
    work = os.path.join(scratch, key)
    os.makedirs(work)
    start = f"{base}/{top}/index.html"
    lists = []
    for d, lv in enumerate(levels):
        lists.append(os.path.join(work, f"depth-{d}.txt"))
        with open(lists[-1], "w") as fo:
            fo.writelines(f"{base}/{top}/{p}\n" for p in lv)
    seeds = lists[0]
    items = os.path.join(work, "scrapy.jsonl")
    saved = os.path.join(work, "saved")
    flat = os.path.join(work, "flat")
    crawl_dir = os.path.join(work, "crawl")

    def fresh_dir(path):
        def prep():
            shutil.rmtree(path, ignore_errors=True)
            os.makedirs(path)
        return prep

    def fresh_file(path):
        return lambda: os.path.exists(path) and os.unlink(path)

    def lines_check(path_fn, what, needle=b"\n"):
        """Lines (or ok records, with needle) in the files, against want:
        a crawl may also keep a not-ok record for a broken link."""
        def check(s):
            paths = path_fn()
            got = sum(b.count_in_file(p, needle) for p in paths if os.path.exists(p))
            s["extra"] = f"{what}={got}"
            s["pages"] = got
            return None if got == want else f"{got} {what}, want the {want} pages"
        return check

    def items_check(s):
        """Scrapy fetches the start URL twice (start requests bypass its
        duplicate filter), so distinct URLs are counted."""
        with open(items) as fi:
            urls = [json.loads(line)["url"] for line in fi]
        s["extra"] = f"items={len(urls)} distinct={len(set(urls))}"
        s["pages"] = len(set(urls))
        return None if len(set(urls)) == want else f"{len(set(urls))} distinct URLs, want the {want} pages"

    def files_check(s):
        got = html_files(saved)
        s["extra"] = f"html files={got}"
        s["pages"] = got
        return None if got == want else f"{got} HTML files saved, want the {want} pages"

    py = f"{b.q(b.PY)} {b.q(os.path.join(b.HERE, 'py_crawl_scrapy.py'))}"
    fetch, parse = b.sc_fetch_cmd(f" -c {CONC}"), b.prog("sc-parse")
    flat_cmd = None
    if fetch and parse:
        flat_cmd = "; ".join(f"{fetch} < {b.q(p)} | {b.q(parse)} > {b.q(os.path.join(flat, f'{d}.jsonl'))}"
                             for d, p in enumerate(lists))
    runners = [
        dict(name="Scrapy CrawlSpider (robots, 8 concurrent, JSONL)",
             cmd=f"{py} --depth {depth} --concurrency {CONC} {b.q(items)} {b.q(start)}",
             prep=fresh_file(items), check=items_check, timeout=3600),
        dict(name=f"wget -r -l {depth} --no-parent",
             cmd=f"wget -q -r -l {depth} --no-parent -P {b.q(saved)} {b.q(start)}{WGET_404_OK}",
             prep=fresh_dir(saved), check=files_check),
        dict(name=f"wget2 -r -l {depth} --no-parent --max-threads {CONC}",
             cmd=f"wget2 -q -r -l {depth} --no-parent --max-threads {CONC} -P {b.q(saved)} {b.q(start)}{WGET_404_OK}",
             prep=fresh_dir(saved), check=files_check),
        dict(name=f"sc-fetch -c {CONC} | sc-parse, a flat list per depth", cmd=flat_cmd,
             prep=fresh_dir(flat), why="sc-fetch or sc-parse not built",
             check=lines_check(lambda: glob.glob(os.path.join(flat, "*.jsonl")), "records")),
    ]
    mk, frontier = find_crawl_mk(b), b.prog("sc-frontier")
    crawl_why = ("share/sc/crawl.mk is not there (branch crawl not merged)" if not mk
                 else "sc-frontier is not built" if not frontier else None)
    make = (f"PATH={b.q(b.BIN)}:\"$PATH\" make -s -f {b.q(mk)} SEEDS={b.q(seeds)} DEPTH={depth} "
            f"DIR={b.q(crawl_dir)} C={CONC} PER_HOST={CONC} {os.environ.get('SC_BENCH_CRAWL_VARS', '')}"
            ) if mk else None
    pages_check = lines_check(lambda: [os.path.join(crawl_dir, "pages.jsonl")], "ok records in pages.jsonl",
                              b'"ok":true')
    runners.append(dict(name=f"make -f crawl.mk DEPTH={depth} C={CONC}", cmd=None if crawl_why else make,
                        why=crawl_why, prep=fresh_dir(crawl_dir), check=pages_check))
    # Two GNU parallel workers on this machine (":" is the local host, no
    # ssh); SC_BENCH_WORKERS="127.0.0.1 127.0.0.1" goes through ssh instead.
    # Local workers keep their robots.txt cache in the crawl's folder, fresh
    # each run like the local crawl's, not in the user's ~/.cache.
    workers = os.environ.get("SC_BENCH_WORKERS") or (": :" if shutil.which("parallel") else None)
    with open(mk) if mk else open(os.devnull) as fm:
        knows_workers = "WORKERS" in fm.read()
    workers_why = (crawl_why or ("crawl.mk has no WORKERS" if not knows_workers else None)
                   or (None if workers else "no GNU parallel, and SC_BENCH_WORKERS not set"))
    runners.append(dict(name="make -f crawl.mk, 2 workers (WORKERS)",
                        cmd=None if workers_why else
                        f"XDG_CACHE_HOME={b.q(crawl_dir)}/.cache {make} WORKERS={b.q(workers)}",
                        why=workers_why, prep=fresh_dir(crawl_dir), check=pages_check))
    # Issue 21: the progress watcher and the request lines in the chunk
    # logs (METRICS) against the crawl without them, side by side.  Without
    # a terminal the watcher looks every PROGRESS_EVERY s (60); at 1 s it
    # does a terminal's work.
    for extra in ("PROGRESS_EVERY=1", "PROGRESS=0", "PROGRESS=0 METRICS=0"):
        runners.append(dict(name=f"make -f crawl.mk DEPTH={depth} C={CONC} {extra}",
                            cmd=None if crawl_why else f"{make} {extra}",
                            why=crawl_why, prep=fresh_dir(crawl_dir), check=pages_check))
    if scrapy_reps == 0:
        runners[0].update(cmd=None, why="smoke mode runs Scrapy on the small site only")
    res = b.run_interleaved(runners[:1], scrapy_reps)
    res.update(b.run_interleaved(runners[1:]))
    walls, rows = {}, []
    for r in runners:
        m = res[r["name"]]
        if "error" in m:
            rows.append([r["name"], f"skipped: {m['error']}" if r.get("cmd") is None else m["error"],
                         "", "", "", "", ""])
            continue
        walls[r["name"]] = m["wall"]
        rows.append([r["name"], b.f(m.get("pages", want)), b.f(m["wall"], 2), b.f(want / m["wall"]),
                     b.f(m["cpu"], 2), b.f(m["rss"], 1)])
    crawl = walls.get(runners[4]["name"])
    for row in rows:
        if row[0] in walls:
            row.append(b.fr(b.ratio(walls[row[0]], crawl)))
    b.table(["Tool", "pages", "wall s", "pages/s", "CPU s", "peak RSS MB", "this ÷ crawl.mk (wall)"], rows)
    b.say(f"Reference set: {want:,} pages ({' + '.join(f'{len(lv):,}' for lv in levels)} by depth), from a "
          "breadth-first walk of the files' links; every run must fetch exactly those (Scrapy fetches the start "
          "URL twice, as start requests bypass its duplicate filter: its pages are distinct URLs). wget and wget2 "
          "only save files; the flat lists are the crawl's rounds given in advance. Outputs in "
          f"{os.path.realpath(scratch)}" + (f": **{where}**" if where else " (tmpfs)") + ". nginx (1 worker) shares the cores.")
    skew = chunk_skew(crawl_dir) if crawl else None
    if skew:
        b.say()
        b.say("Chunk skew of the crawl (largest chunk ÷ mean, per round): "
              + ", ".join(f"{x:.2f}" for x in skew) + ".")
    b.say()
    why = None if crawl else (crawl_why or "crawl failed")
    x = b.ratio(walls.get(runners[0]["name"]), crawl)
    b.target(key, "crawl.mk ≥ 10 × Scrapy CrawlSpider (wall)", x, "≥ 10x", b.ge(x, 10), why)
    for name, goal, what in ((runners[3]["name"], 1.3, "crawl.mk wall ≤ 1.3 × flat lists through sc-fetch | sc-parse"),
                             (runners[2]["name"], 2.0, "crawl.mk wall ≤ 2 × wget2 -r")):
        x = b.ratio(crawl, walls.get(name))
        b.target(key, what, x, f"≤ {goal:.1f}x", None if x is None else x <= goal, why)
    x = b.ratio(walls.get(runners[5]["name"]), crawl)
    b.target(key, "crawl.mk with 2 workers wall ≤ 1.2 × one local run (issue 12)", x, "≤ 1.2x",
             None if x is None else x <= 1.2, None if x is not None else (workers_why or "not measured"))
    def wall_of(i):
        return walls.get(runners[i]["name"])
    for a, base, what in ((crawl, wall_of(7), "crawl.mk wall ≤ 1.05 × PROGRESS=0 (issue 21: the watcher)"),
                          (crawl, wall_of(8), "crawl.mk wall ≤ 1.05 × PROGRESS=0 METRICS=0 (issue 21: watcher, request lines)"),
                          (wall_of(6), wall_of(8), "crawl.mk PROGRESS_EVERY=1 wall ≤ 1.05 × PROGRESS=0 METRICS=0 (issue 21)")):
        x = b.ratio(a, base)
        b.target(key, what, x, "≤ 1.05x", None if x is None else x <= 1.05, why)
    m = res[runners[4]["name"]]
    return None if "error" in m else m["rss"]
