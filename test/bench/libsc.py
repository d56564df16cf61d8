#!/usr/bin/python3
"""The targets of issue 23 (libsc), each side by side in one run:

  libsc-crawler  examples/crawler (a short crawler on libsc: one process that
                 fetches, parses and follows links; its main thread fetches,
                 two threads parse, each with its own sc_parser) against
                 `sc-fetch | sc-parse` on the same pages: scenario 9a's
                 1,169 PostgreSQL 15 documentation pages (every page to depth
                 2 from /pg/index.html, served by the bench's nginx).  Both
                 get the pages as one flat list (the fair comparison: the
                 pipeline does not follow links); the crawler's page limit is
                 the list's length, so everything it submits is on the list.
                 The crawler is also run from the seed alone (it follows
                 links, limit = the page count): a row for information.
                 Same settings both ways: the crawler's (--robots,
                 --per-host 4, sc-fetch's default concurrency) and the
                 crawler's fields (sc-parse's defaults: it calls
                 sc_parser_new with no fields).  Target: the crawler's wall
                 time at most the pipeline's.
  libsc-api      scenarios 1, 5 and 8 before and after libsc: sc-fetch on
                 scenario 1's generated pages and on scenario 8's Python
                 docs, sc-parse on scenario 5's fetch records, with the
                 programs of commit cb76fdf7 (before sc-fetch and sc-parse
                 used the public API) and the programs of this tree,
                 interleaved.  Target: after ÷ before wall ≤ 1.05 (the
                 noise of a shared machine) for each.

The programs of cb76fdf7: SC_BENCH_BEFORE_BIN (a bin/ directory built from
that commit), else built here once from `git archive cb76fdf7` into
build/bench/before-cb76fdf7/ (kept as a cache); in smoke mode that build is
skipped (say so) unless SC_BENCH_BEFORE_BIN is set.  SC_CRAWLER: the
example crawler (default build/release/examples/crawler).

Runs from test/bench/run or alone (/usr/bin/python3 test/bench/libsc.py).
SC_BENCH_ONLY, when set, must name "libsc" or one of the two for any to
run.  Writes markdown on stdout and to build/bench/libsc.md."""
import os
import shutil
import subprocess
import sys

import bench as b
import corpus
import crawl
import pydocs
import tmpfs

BEFORE = "cb76fdf7"
CRAWLER = os.environ.get("SC_CRAWLER") or os.path.join(b.ROOT, "build/release/examples/crawler")
PER_HOST = 4   # the crawler's
SLACK = 1.05   # after ÷ before: what a shared machine's noise allows


def count_prefixed(path, prefix):
    with open(path, "rb") as fi:
        return sum(1 for line in fi if line.startswith(prefix))


def crawler_scenario(www, base):
    if not os.path.isdir(crawl.PGDOCS):
        b.heading("libsc-crawler. The example crawler against sc-fetch | sc-parse")
        b.say(f"{crawl.PGDOCS} is not there (Debian's postgresql-doc-15): scenario skipped.")
        b.say()
        return
    link = os.path.join(www, "pg")
    if not os.path.lexists(link):
        os.symlink(crawl.PGDOCS, link)
    with open(os.path.join(www, "robots.txt"), "w") as fr:
        fr.write("User-agent: *\nDisallow:\n")
    depth = 1 if b.SMOKE else 2   # scenario 9a's
    levels = crawl.reference_levels(crawl.PGDOCS, depth)
    pages = [p for lv in levels for p in lv]
    n = len(pages)
    b.heading(f"libsc-crawler. examples/crawler (libsc, one process) against sc-fetch | sc-parse: scenario 9a's "
              f"{n:,} PostgreSQL 15 pages (depth {depth} from /pg/index.html), --robots, --per-host {PER_HOST}")
    scratch, where = tmpfs.scratch(b.TMP, "libsc-crawl", 1 << 28)
    flat = os.path.join(scratch, "flat.txt")
    seed = os.path.join(scratch, "seed.txt")
    with open(flat, "w") as fo:
        fo.writelines(f"{base}/pg/{p}\n" for p in pages)
    with open(seed, "w") as fo:
        fo.write(f"{base}/pg/index.html\n")
    out = os.path.join(scratch, "out.txt")
    crawler = CRAWLER if os.access(CRAWLER, os.X_OK) else None
    fetch, parse = b.sc_fetch_cmd(f" --robots --per-host {PER_HOST}"), b.prog("sc-parse")

    def lines_check(needle, want, exact=True):
        def check(s):
            got, lines = count_prefixed(out, needle), b.count_lines(out)
            s["extra"] = f"ok={got} lines={lines}"
            if got != want or (exact and lines != want):
                return f"{got} of {want} pages ok, {lines} lines"
            return None
        return check

    names = {"crawler": f"crawler {n} < flat list (libsc, one process)",
             "pipe": f"sc-fetch --robots --per-host {PER_HOST} | sc-parse < flat list (two processes)",
             "seed": f"crawler {n} < seed (follows links; for information)"}
    runners = [
        dict(name=names["crawler"], cmd=crawler and f"{b.q(crawler)} {n} < {b.q(flat)} > {b.q(out)}",
             why=f"{CRAWLER} not built (make test builds it)", check=lines_check(b"200\t", n)),
        dict(name=names["pipe"], cmd=fetch and parse and f"{fetch} < {b.q(flat)} | {b.q(parse)} > {b.q(out)}",
             why="sc-fetch or sc-parse not built", check=lines_check(b'{"url"', n)),
        dict(name=names["seed"], cmd=crawler and f"{b.q(crawler)} {n} < {b.q(seed)} > {b.q(out)}",
             why=f"{CRAWLER} not built", check=lines_check(b"200\t", n, exact=False)),
    ]
    res = b.run_interleaved(runners)
    rows = []
    for r in runners:
        m = res[r["name"]]
        if "error" in m:
            rows.append([r["name"], m["error"], "", "", "", "", ""])
            continue
        rows.append([r["name"], b.f(m["wall"], 2), b.f(n / m["wall"]), b.f(m["cpu"], 2),
                     b.f(m["cpu"] / n * 1000, 2), b.f(m["rss"], 1),
                     f"{m['wall_min']:.2f} / {m['cpu_min']:.2f}"])
    b.table(["Run", "wall s", "pages/s", "CPU s (all processes)", "CPU ms / page", "largest RSS MB",
             "best wall s / best CPU s"], rows)
    b.say(f"The flat list is the {n:,} pages of scenario 9a's reference set (a breadth-first walk of the files' "
          f"links from index.html). The crawler is given the list and a limit of {n:,}: it submits the list, "
          f"and the links it parses are all seen already or over the limit, so both sides fetch and parse the "
          f"same pages once. Same settings: robots.txt asked, {PER_HOST} per host, sc-fetch's default "
          f"concurrency; sc-parse with its default fields, which are the crawler's (sc_parser_new with no "
          f"field: title, description, canonical, lang, h1, links). The crawler parses on two threads beside "
          f"its fetch thread, sc-parse on its default -j (the core count, {b.NPROC}). The crawler also reads "
          f"each record back with jansson and prints a line (status, URL, title); the pipeline writes the "
          f"records. "
          f"Outputs in {os.path.realpath(scratch)}" + (f": **{where}**" if where else " (tmpfs)")
          + "; nginx (1 worker) shares the cores.")
    b.say()
    cr, pp = res[names["crawler"]], res[names["pipe"]]
    x = None if "error" in cr or "error" in pp else cr["wall"] / pp["wall"]
    b.target("libsc-crawler", "examples/crawler wall ≤ sc-fetch | sc-parse wall (crawler ÷ pipeline)", x,
             "≤ 1.00x", None if x is None else x <= 1.0)
    tmpfs.remove(scratch)


def build_before():
    """The bin/ directory of cb76fdf7's programs, or (None, why)."""
    given = os.environ.get("SC_BENCH_BEFORE_BIN")
    if given:
        return (given, None) if os.path.isdir(given) else (None, f"SC_BENCH_BEFORE_BIN={given} is not a directory")
    if b.SMOKE:
        return None, (f"smoke run: building {BEFORE} is skipped (set SC_BENCH_BEFORE_BIN to a bin/ built from it); "
                      f"the full run builds it")
    top = os.path.join(b.OUTDIR, f"before-{BEFORE}")
    binp = os.path.join(top, "bin")
    if not (os.access(os.path.join(binp, "sc-fetch"), os.X_OK) and os.access(os.path.join(binp, "sc-parse"), os.X_OK)):
        b.note(f"building the programs of {BEFORE} in {top}")
        shutil.rmtree(top, ignore_errors=True)
        os.makedirs(top)
        r = subprocess.run(f"git -C {b.q(b.ROOT)} archive {BEFORE} | tar -x -C {b.q(top)} && "
                           f"make -C {b.q(top)} -j2 all", shell=True, capture_output=True, check=False)
        if r.returncode != 0:
            return None, f"building {BEFORE} failed: {r.stderr[-300:].decode(errors='replace')}"
    return binp, None


def api_scenario(www, base):
    b.heading(f"libsc-api. Scenarios 1, 5 and 8 before ({BEFORE}, before libsc) and after (this tree: sc-fetch "
              f"and sc-parse on the public API)")
    before, why = build_before()
    if not before:
        b.say(f"Skipped: {why}.")
        b.say()
        if not b.SMOKE:
            b.failures.append(f"libsc-api: {why}")
        return
    after = b.BIN
    scratch, where = tmpfs.scratch(b.TMP, "libsc-api", 1 << 30)
    n1, n5 = b.N["throughput"], b.N["parse"]
    n8 = 200 if b.SMOKE else 5000
    urls1 = os.path.join(scratch, "urls1.txt")
    corpus.write_urls(urls1, base, n1, b.N["pages"])
    recs5 = os.path.join(scratch, "fetch.jsonl")
    corpus.write_fetch_records(recs5, "https://example.com", n5, b.N["pages"])
    urls8 = None
    if os.path.isdir(pydocs.PYDOCS):
        pages = pydocs.select_pages(pydocs.PYDOCS, pydocs.MAX_PAGE)
        urls8 = os.path.join(scratch, "urls8.txt")
        with open(urls8, "w") as fu:
            fu.writelines(f"{base}{u}\n" for u, _ in pydocs.build_docroot(www, scratch, pages, n8))
    out = os.path.join(scratch, "out.jsonl")

    def lines_check(want, needle=None):
        def check(s):
            got = b.count_in_file(out, needle) if needle else b.count_lines(out)
            s["extra"] = f"got={got}"
            return None if got == want else f"{got} of {want} records"
        return check

    cases = [("1", f"sc-fetch -c {b.CONC}, {n1:,} generated pages", "sc-fetch", f" -q -c {b.CONC}", urls1, n1,
              b'"ok":true'),
             ("5", f"sc-parse, {n5:,} fetch records, default fields", "sc-parse", "", recs5, n5, None),
             ("8", f"sc-fetch -c {pydocs.CONC}, {n8:,} Python docs pages", "sc-fetch", f" -q -c {pydocs.CONC}",
              urls8, n8, b'"ok":true')]
    runners = []
    for key, what, prog, args, inp, n, needle in cases:
        for tag, d in (("before", before), ("after", after)):
            path = os.path.join(d, prog)
            runners.append(dict(name=f"{key} {tag}: {what}", key=key, tag=tag,
                                cmd=(inp and os.access(path, os.X_OK) or None) and
                                f"{b.q(path)}{args} < {b.q(inp)} > {b.q(out)}",
                                why="no python3.11-doc" if not inp else f"{path} not built",
                                check=lines_check(n, needle)))
    res = b.run_interleaved(runners)
    rows = []
    for key, what, *_ in cases:
        bm, am = res[f"{key} before: {what}"], res[f"{key} after: {what}"]
        if "error" in bm or "error" in am:
            rows.append([key, what, bm.get("error", ""), am.get("error", ""), "", "", ""])
            b.target("libsc-api", f"scenario {key}: after ÷ before wall ≤ {SLACK}", None, f"≤ {SLACK}x", None,
                     "not measured")
            continue
        x = am["wall"] / bm["wall"]
        rows.append([key, what, f"{bm['wall']:.2f} / {bm['cpu']:.2f}", f"{am['wall']:.2f} / {am['cpu']:.2f}",
                     b.fr(x), b.fr(b.ratio(am["cpu"], bm["cpu"])), b.fr(b.ratio(am["wall_min"], bm["wall_min"]))])
        b.target("libsc-api", f"scenario {key} ({what.split(',')[0]}): after ÷ before wall ≤ {SLACK}", x,
                 f"≤ {SLACK}x", x <= SLACK)
    b.table(["#", "Run", "before wall s / CPU s", "after wall s / CPU s", "after ÷ before (wall)",
             "after ÷ before (CPU)", "after ÷ before (best walls)"], rows, "llrrrrr")
    b.say(f"Before: the programs of {BEFORE} ({before}); after: {after}. The same inputs, nginx and "
          f"settings as scenarios 1, 5 and 8; outputs on tmpfs; median of {b.REPS}, before and after "
          f"interleaved. {SLACK}x allows for a machine shared with other work.")
    b.say()
    tmpfs.remove(scratch)


def main():
    wanted, t_start = b.begin("libsc", ("libsc-crawler", "libsc-api"), "libsc (issue 23)")
    if not wanted:
        return 0
    www = os.path.join(b.TMP, "www")
    corpus.write_corpus(www, b.N["pages"])
    base = b.start_nginx(www)
    if "libsc-crawler" in wanted:
        crawler_scenario(www, base)
    if "libsc-api" in wanted:
        api_scenario(www, base)
    return b.finish("libsc: targets", "libsc.md", t_start)


if __name__ == "__main__":
    sys.exit(main())
