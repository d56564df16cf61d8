#!/usr/bin/python3
"""The scenarios of issue 20, web archives (WARC), each side by side in one
run:

  warc-capture  scenario 8's fetch (pages of the Python 3.11 docs served by
                nginx on loopback, sc-fetch -c 20, records to a file on
                tmpfs) without and with --warc (level 1, the default, and
                level 0 for what compression costs), and the floor of the
                work an archive must do: the run without --warc, plus
                `gzip -1` of the WARC's uncompressed bytes (zcat'd to
                tmpfs once; gzip writes to tmpfs), plus two SHA-1 passes
                over them (`sha1sum raw raw`).  Target: with --warc at most
                1.2 x the floor (wall).  sc-fetch compresses on its one
                thread (the fetch thread), so on one core.
  warc-read     `sc-warc records` and `sc-warc check` over that .warc.gz
                against `zcat` of it: MB/s of the compressed file.  Target:
                200 MB/s each.
  warc-crawl    scenario 9's site (the PostgreSQL 15 docs at /pg/) crawled
                with an archive: share/sc/crawl.mk with WARC=1 when it has
                that setting, else FETCH_ARGS='--warc FILE' (the rounds run
                one after the other, each sc-fetch adding to the file;
                crawl.mk's sc-retry step gets the same FETCH_ARGS), against
                `wget -r -l inf -np --warc-file` (Debian's wget, one
                connection, no -H so it stays on the bench's nginx), and the
                same pages as one flat list through `sc-fetch -c 8 --warc`
                (pages given in advance: no parsing, no rounds).  Each
                archive is read back with sc-warc records: every page of the
                reference set must be in it, ok.  Target: crawl.mk faster
                than wget.

Runs from test/bench/run (make bench, make bench-smoke) or alone
(/usr/bin/python3 test/bench/warc.py; SC_BIN=bin by default).  It uses
bench.py's measuring and servers.  SC_BENCH_ONLY, when set, must name
"warc" or one of the three for any to run.  Writes markdown on stdout and
to build/bench/warc.md."""
import glob
import json
import os
import shutil
import subprocess
import sys

import bench as b
import crawl
import pydocs
import tmpfs

CAPTURE_PAGES = 200 if b.SMOKE else 5000   # scenario 8's count
CRAWL_C = crawl.CONC
LEVEL = 1   # sc-fetch's default --warc-level


def summary_of(path, key):
    """The last JSON line of a file (sc-warc's summary on standard error)
    that has key, as a dict."""
    found = None
    with open(path, "rb") as fi:
        for line in fi:
            if line.startswith(b"{") and key.encode() in line:
                try:
                    found = json.loads(line)
                except ValueError:
                    continue
    return found


def warc_pages(warc_files, prefix):
    """Distinct URLs under prefix of the ok response records sc-warc records
    finds in the files, and the count of every record it writes."""
    out = subprocess.run([os.path.join(b.BIN, "sc-warc"), "records", "-q"] + warc_files,
                         capture_output=True, check=False, timeout=600).stdout
    urls, count = set(), 0
    for line in out.splitlines():
        count += 1
        rec = json.loads(line)
        if rec.get("ok") and rec.get("url", "").startswith(prefix):
            urls.add(rec["url"])
    return urls, count


def capture_scenario(www, base):
    """warc-capture; returns the level-1 WARC's path (kept for warc-read)
    and the count of pages in it, or (None, None)."""
    n = CAPTURE_PAGES
    b.heading(f"warc-capture. Scenario 8 with and without --warc: {n:,} pages of the Python 3.11 docs, "
              f"concurrency {pydocs.CONC}, outputs on tmpfs, against the floor (gzip -1 + two SHA-1)")
    if not os.path.isdir(pydocs.PYDOCS):
        b.say(f"{pydocs.PYDOCS} is not there (Debian's python3.11-doc): scenario skipped.")
        b.say()
        return None, None
    pages = pydocs.select_pages(pydocs.PYDOCS, pydocs.MAX_PAGE)
    total = sum(pages[i % len(pages)][1] for i in range(n))
    scratch, where = tmpfs.scratch(b.TMP, "warc", 6 * total + (64 << 20))
    urls_sized = pydocs.build_docroot(www, scratch, pages, n)
    urls = os.path.join(scratch, "urls.txt")
    with open(urls, "w") as fu:
        fu.writelines(f"{base}{u}\n" for u, _ in urls_sized)
    out = os.path.join(scratch, "records.jsonl")
    warc1 = os.path.join(scratch, "capture.warc.gz")
    warc0 = os.path.join(scratch, "capture-level0.warc.gz")
    raw = os.path.join(scratch, "capture.warc")
    gz = os.path.join(scratch, "capture.warc.gz1")

    def records_check(warc=None):
        def check(s):
            got, lines = b.count_in_file(out, b'"ok":true'), b.count_lines(out)
            s["extra"] = f"ok={got}"
            if got != n or lines != n:
                return f"{got} of {n} records ok, {lines} lines; first failures: {b.first_failures(out) or 'none'}"
            if warc and not os.path.isfile(warc):
                return f"{warc} not written"
            if warc:
                s["extra"] += f" warc={os.path.getsize(warc)}"
            return None
        return check

    def rm(*paths):
        def prep():
            for p in paths:
                if os.path.exists(p):
                    os.unlink(p)
        return prep

    def unzipped():
        """The level-1 WARC's bytes, once, from the first run's file."""
        if not os.path.exists(raw):
            subprocess.run(f"zcat {b.q(warc1)} > {b.q(raw)}", shell=True, check=True)

    fetch = b.sc_fetch_cmd(f" -c {pydocs.CONC}")
    names = {"plain": f"sc-fetch -c {pydocs.CONC} > records file (no --warc)",
             "warc": f"sc-fetch -c {pydocs.CONC} --warc F > records file (level {LEVEL}, the default)",
             "warc0": f"sc-fetch -c {pydocs.CONC} --warc F --warc-level 0 > records file (stored)",
             "gzip": "gzip -1 of the WARC's uncompressed bytes (tmpfs to tmpfs)",
             "sha1": "sha1sum of those bytes, twice (one process, two passes)"}
    runners = [
        dict(name=names["plain"], cmd=fetch and f"{fetch} < {b.q(urls)} > {b.q(out)}",
             prep=rm(out), check=records_check()),
        dict(name=names["warc"], cmd=fetch and f"{fetch} --warc {b.q(warc1)} < {b.q(urls)} > {b.q(out)}",
             prep=rm(out, warc1), check=records_check(warc1)),
        dict(name=names["warc0"],
             cmd=fetch and f"{fetch} --warc {b.q(warc0)} --warc-level 0 < {b.q(urls)} > {b.q(out)}",
             prep=rm(out, warc0), check=records_check(warc0)),
        dict(name=names["gzip"], cmd=fetch and f"gzip -1 -c {b.q(raw)} > {b.q(gz)}", prep=unzipped),
        dict(name=names["sha1"], cmd=fetch and f"sha1sum {b.q(raw)} {b.q(raw)} > /dev/null", prep=unzipped),
    ]
    res = b.run_interleaved(runners)
    if any("error" in res[r["name"]] for r in runners):
        for r in runners:
            if "error" in res[r["name"]]:
                b.say(f"- {r['name']}: {res[r['name']]['error']}")
        b.say()
        b.target("warc-capture", "sc-fetch --warc wall ≤ 1.2 × floor", None, "≤ 1.2x", None, "not measured")
        return None, None
    m = {k: res[v] for k, v in names.items()}
    floor = {k: m["plain"][k] + m["gzip"][k] + m["sha1"][k] for k in ("wall", "cpu", "wall_min", "cpu_min")}
    raw_mb, gz_mb, gz0_mb = (os.path.getsize(p) / 1e6 for p in (raw, warc1, warc0))
    rows = []
    for k in ("plain", "warc", "warc0", "gzip", "sha1"):
        rows.append([names[k], b.f(m[k]["wall"], 3), b.f(m[k]["cpu"], 3), b.f(m[k]["rss"], 1),
                     f"{m[k]['wall_min']:.3f} / {m[k]['cpu_min']:.3f}"])
    rows.append(["**floor** = no --warc + gzip -1 + two SHA-1", b.f(floor["wall"], 3), b.f(floor["cpu"], 3), "",
                 f"{floor['wall_min']:.3f} / {floor['cpu_min']:.3f}"])
    b.table(["Run", "wall s", "CPU s", "peak RSS MB", "best wall s / best CPU s"], rows)
    x = m["warc"]["wall"] / floor["wall"]
    b.say(f"{n:,} pages, {total / 1e6:.0f} MB of bodies. The WARC: {raw_mb:.0f} MB uncompressed (warcinfo, and a "
          f"request, a response and a metadata record per page), {gz_mb:.0f} MB at level {LEVEL} "
          f"({gz_mb / raw_mb:.2f} of it; gzip -1 of the same bytes as one stream: "
          f"{os.path.getsize(gz) / 1e6:.0f} MB), {gz0_mb:.0f} MB "
          f"at level 0. Every record is its own gzip member (the per-member restart is in sc-fetch's cost, "
          f"not in the floor's one stream). sc-fetch compresses and hashes on its one thread, the fetch "
          f"thread: one core for the fetch and the archive, the second core left to nginx.")
    b.say()
    b.say(f"--warc over the floor: **{x:.2f}x** wall ({b.fr(b.ratio(m['warc']['wall_min'], floor['wall_min']))} on "
          f"the best runs), {b.fr(b.ratio(m['warc']['cpu'], floor['cpu']))} CPU; --warc over no --warc: "
          f"{m['warc']['wall'] / m['plain']['wall']:.2f}x wall, {b.fr(b.ratio(m['warc']['cpu'], m['plain']['cpu']))} "
          f"CPU; level 0 over no --warc: {m['warc0']['wall'] / m['plain']['wall']:.2f}x wall.")
    b.say()
    b.target("warc-capture", f"sc-fetch --warc (level {LEVEL}) wall ≤ 1.2 × floor", x, "≤ 1.2x", x <= 1.2)
    for p in (raw, gz, warc0, out):
        if os.path.exists(p):
            os.unlink(p)
    return warc1, n


def read_scenario(warc, pages):
    """warc-read over the capture's WARC."""
    size = os.path.getsize(warc)
    raw_size = int(subprocess.run(f"zcat {b.q(warc)} | wc -c", shell=True, capture_output=True, check=True,
                                  text=True).stdout)
    b.heading(f"warc-read. sc-warc records and check over the capture's .warc.gz ({size / 1e6:.0f} MB, "
              f"{pages:,} pages) against zcat")
    stderr = os.path.join(b.TMP, "stderr.txt")   # where b.measure puts it
    sc_warc = b.prog("sc-warc")
    records = {}

    def summary_check(key, want_zero):
        def check(s):
            summ = summary_of(stderr, f'"{key}"')
            if not summ:
                return "no summary line on standard error"
            s["extra"] = json.dumps(summ)
            records[key] = summ
            return None if summ[key] == 0 and summ["records"] >= pages else f"summary {summ}, want {want_zero}"
        return check

    names = {"zcat": "zcat F > /dev/null", "records": "sc-warc records F > /dev/null",
             "check": "sc-warc check F"}
    runners = [
        dict(name=names["zcat"], cmd=f"zcat {b.q(warc)} > /dev/null"),
        dict(name=names["records"], cmd=sc_warc and f"{b.q(sc_warc)} records {b.q(warc)} > /dev/null",
             check=summary_check("failed", "every record ok")),
        dict(name=names["check"], cmd=sc_warc and f"{b.q(sc_warc)} check {b.q(warc)}",
             check=summary_check("bad", "no bad record")),
    ]
    res = b.run_interleaved(runners)
    zcat = res[names["zcat"]]
    rows = []
    for k in ("zcat", "records", "check"):
        m = res[names[k]]
        if "error" in m:
            rows.append([names[k], m["error"], "", "", "", ""])
            continue
        rows.append([names[k], b.f(m["wall"], 3), b.f(size / 1e6 / m["wall"], 0), b.f(raw_size / 1e6 / m["wall"], 0),
                     b.f(m["cpu"], 3), b.f(size / 1e6 / m["cpu"], 0) if m["cpu"] else "—",
                     f"{m['wall_min']:.3f} / {size / 1e6 / m['wall_min']:.0f}", b.f(m["rss"], 1),
                     b.fr(b.ratio(zcat.get("wall"), m["wall"]))])
    b.table(["Reader", "wall s", "MB/s (.warc.gz)", "MB/s (uncompressed)", "CPU s", ".warc.gz MB per CPU s",
             "best wall s / its MB/s", "peak RSS MB", "speed ÷ zcat's"], rows)
    b.say(f"The file of warc-capture's last --warc run (level {LEVEL}), {size / 1e6:.0f} MB, "
          f"{raw_size / 1e6:.0f} MB uncompressed, on tmpfs; one process each, one core "
          f"(none of the three uses a second thread). records writes a fetch record per response record "
          f"(summary: {json.dumps(records.get('failed'))}); check verifies every record's header and both "
          f"digests (summary: {json.dumps(records.get('bad'))}). zcat (GNU gzip's own inflate) is the "
          f"reference for what decompressing alone costs on this machine; at this file's ratio 200 MB/s of "
          f".warc.gz is {200 * raw_size / size:.0f} MB/s of WARC to inflate. Wall time includes starting the process under "
          f"timeout and GNU time (a few hundredths of a second), the same for the three.")
    b.say()
    for k in ("records", "check"):
        m = res[names[k]]
        mbs = None if "error" in m else size / 1e6 / m["wall"]
        b.target("warc-read", f"sc-warc {k} ≥ 200 MB/s of .warc.gz (zcat: "
                 f"{size / 1e6 / zcat['wall']:.0f} MB/s)" if "error" not in zcat else f"sc-warc {k} ≥ 200 MB/s",
                 mbs, "≥ 200 MB/s", b.ge(mbs, 200), None if mbs is None else f"{mbs:.0f} MB/s")


def find_crawl_mk():
    path = os.environ.get("SC_CRAWL_MK") or os.path.join(b.ROOT, "share/sc/crawl.mk")
    return path if os.path.isfile(path) else None


def crawl_scenario(www, base):
    """warc-crawl: crawl.mk with an archive against wget --warc-file."""
    if not os.path.isdir(crawl.PGDOCS):
        b.heading("warc-crawl. Crawl with an archive")
        b.say(f"{crawl.PGDOCS} is not there (Debian's postgresql-doc-15): scenario skipped.")
        b.say()
        return
    os.symlink(crawl.PGDOCS, os.path.join(www, "pg"))
    # Allow-all, as a site's robots.txt: a 404 makes wget exit 8.
    with open(os.path.join(www, "robots.txt"), "w") as fr:
        fr.write("User-agent: *\nDisallow:\n")
    # Smoke: depth 1; else every page reachable from index.html (wget -l inf).
    levels = crawl.reference_levels(crawl.PGDOCS, 1 if b.SMOKE else 64)
    while not levels[-1]:
        levels.pop()
    depth = len(levels) - 1
    want = sum(len(lv) for lv in levels)
    wget_depth = "1" if b.SMOKE else "inf"
    b.heading(f"warc-crawl. Crawl with an archive: the PostgreSQL 15 docs at /pg/ from index.html, "
              f"{'depth 1' if b.SMOKE else 'every page it reaches'} ({want:,} pages, depth {depth}), "
              f"crawl.mk against wget --warc-file")
    scratch, where = tmpfs.scratch(b.TMP, "warc-crawl", 1 << 29)
    start = f"{base}/pg/index.html"
    seeds = os.path.join(scratch, "seeds.txt")
    flat_urls = os.path.join(scratch, "flat.txt")
    with open(seeds, "w") as fo:
        fo.write(start + "\n")
    with open(flat_urls, "w") as fo:
        fo.writelines(f"{base}/pg/{p}\n" for lv in levels for p in lv)
    crawl_dir = os.path.join(scratch, "crawl")
    saved = os.path.join(scratch, "saved")
    wget_prefix = os.path.join(scratch, "wget")
    sc_warc_file = os.path.join(scratch, "crawl.warc.gz")
    flat_warc = os.path.join(scratch, "flat.warc.gz")
    flat_out = os.path.join(scratch, "flat.jsonl")
    cache = os.path.join(scratch, "cache")
    prefix = f"{base}/pg/"

    def fresh(*paths):
        def prep():
            for p in paths:
                if os.path.isdir(p):
                    shutil.rmtree(p)
                elif os.path.exists(p):
                    os.unlink(p)
            os.makedirs(crawl_dir, exist_ok=True)
        return prep

    def archive_check(files_fn):
        def check(s):
            files = files_fn()
            if not files:
                return "no WARC file written"
            urls, count = warc_pages(files, prefix)
            html = {u for u in urls if u.endswith(".html")}
            s["extra"] = f"warc files={len(files)} response records={count} ok pages={len(html)}"
            s["pages"] = len(html)
            s["warc_mb"] = sum(os.path.getsize(p) for p in files) / 1e6
            return None if len(html) == want else f"{len(html)} ok pages in the archive, want the {want} pages"
        return check

    mk, frontier = find_crawl_mk(), b.prog("sc-frontier")
    with open(mk) if mk else open(os.devnull) as fm:
        has_warc = any(line.startswith("WARC ") or line.startswith("WARC\t") for line in fm)
    crawl_why = ("share/sc/crawl.mk is not there" if not mk else "sc-frontier is not built" if not frontier
                 else None)
    archive = "WARC=1" if has_warc else f"FETCH_ARGS='--warc {sc_warc_file}'"
    make = (f"XDG_CACHE_HOME={b.q(cache)} PATH={b.q(b.BIN)}:\"$PATH\" make -s -f {b.q(mk)} SEEDS={b.q(seeds)} "
            f"DEPTH={depth} DIR={b.q(crawl_dir)} C={CRAWL_C} PER_HOST={CRAWL_C} {archive}") if mk else None
    crawl_files = ((lambda: sorted(glob.glob(os.path.join(crawl_dir, "**", "*.warc.gz"), recursive=True)))
                   if has_warc else (lambda: [sc_warc_file] if os.path.exists(sc_warc_file) else []))
    fetch = b.sc_fetch_cmd(f" -c {CRAWL_C}")
    names = {"crawl": f"make -f crawl.mk DEPTH={depth} C={CRAWL_C} {'WARC=1' if has_warc else 'FETCH_ARGS=--warc F'}",
             "wget": f"wget -r -l {wget_depth} -np --warc-file",
             "flat": f"sc-fetch -c {CRAWL_C} --warc F, the {want:,} pages as one flat list"}
    runners = [
        dict(name=names["crawl"], cmd=None if crawl_why else make, why=crawl_why,
             prep=fresh(crawl_dir, sc_warc_file, cache), check=archive_check(crawl_files)),
        dict(name=names["wget"],
             cmd=(f"wget -q -r -l {wget_depth} -np -D 127.0.0.1 --warc-file={b.q(wget_prefix)} -P {b.q(saved)} "
                  f"{b.q(start)}{crawl.WGET_404_OK}"),
             prep=fresh(saved, wget_prefix + ".warc.gz"),
             check=archive_check(lambda: [p for p in [wget_prefix + ".warc.gz"] if os.path.exists(p)])),
        dict(name=names["flat"], cmd=fetch and f"{fetch} --warc {b.q(flat_warc)} < {b.q(flat_urls)} > {b.q(flat_out)}",
             prep=fresh(flat_warc, flat_out), check=archive_check(lambda: [flat_warc])),
    ]
    res = b.run_interleaved(runners)
    rows, walls = [], {}
    for r in runners:
        m = res[r["name"]]
        if "error" in m:
            rows.append([r["name"], f"skipped: {m['error']}" if r.get("cmd") is None else m["error"],
                         "", "", "", "", "", ""])
            continue
        walls[r["name"]] = m["wall"]
        rows.append([r["name"], b.f(m.get("pages", want)), b.f(m["wall"], 2), b.f(want / m["wall"]),
                     b.f(m["cpu"], 2), b.f(m["rss"], 1), b.f(m.get("warc_mb"), 1)])
    for row in rows:
        if row[0] in walls:
            row.append(b.fr(b.ratio(walls.get(names["wget"]), walls[row[0]])))
    b.table(["Tool", "pages in the archive", "wall s", "pages/s", "CPU s", "peak RSS MB", "WARC MB",
             "wget's wall ÷ this"], rows)
    how = ("WARC=1" if has_warc else
           "FETCH_ARGS='--warc F' (crawl.mk has no WARC setting here): each round's sc-fetch adds its "
           "exchanges to the one file, after a warcinfo record of its own; the rounds run one after the other "
           "(make without -j, one chunk a round as every page is on one host)")
    b.say(f"crawl.mk with {how}; it parses every page (sc-parse) and makes each next "
          f"round with sc-frontier, robots.txt asked (ROBOTS=1, a fresh cache each run), C={CRAWL_C} "
          f"PER_HOST={CRAWL_C}. wget: `wget -q -r -l {wget_depth} -np -D 127.0.0.1 --warc-file=F -P DIR`, "
          f"Debian's wget, one connection at a time, no -H (so one host), robots.txt obeyed, every page also "
          f"saved as a file; it also follows each page's `<link rev=\"made\" href=\"pgsql-docs@...\">` to a "
          f"404 (so exits 8, accepted). The flat list is the floor of a crawl: the pages given in advance, "
          f"no parsing, no rounds. Every archive is read back with sc-warc records and must hold an ok "
          f"response for each of the {want:,} pages of the reference set (a breadth-first walk of the "
          f"files' links). Outputs in {os.path.realpath(scratch)}"
          + (f": **{where}**" if where else " (tmpfs)") + "; nginx (1 worker) shares the cores.")
    b.say()
    x = b.ratio(walls.get(names["wget"]), walls.get(names["crawl"]))
    b.target("warc-crawl", "crawl.mk with an archive faster than wget -r --warc-file (wget ÷ crawl.mk, wall)",
             x, "> 1x", None if x is None else x > 1, None if x is not None else (crawl_why or "not measured"))
    tmpfs.remove(scratch)


def main():
    wanted, t_start = b.begin("warc", ("warc-capture", "warc-read", "warc-crawl"), "Web archives (issue 20)")
    if not wanted:
        return 0
    www = os.path.join(b.TMP, "www")
    os.makedirs(www)
    base = b.start_nginx(www)
    warc = pages = None
    if "warc-capture" in wanted or "warc-read" in wanted:
        warc, pages = capture_scenario(www, base)
    if "warc-read" in wanted and warc:
        read_scenario(warc, pages)
    if "warc-crawl" in wanted:
        crawl_scenario(www, base)
    return b.finish("Web archives: targets", "warc.md", t_start)


if __name__ == "__main__":
    sys.exit(main())
