"""Scenario 8: sc-fetch against curl on real pages (issue 13's targets).

5,000 pages of the Python 3.11 documentation (Debian's python3.11-doc),
served by the bench's nginx on loopback with identity encoding, fetched at
concurrency 20, every output on tmpfs: sc-fetch writing its records to a
file against `curl --parallel` writing a file per body, and both writing to
/dev/null.  The documentation's HTML is dense in quotes and newlines, which
is what a JSON record's body has to escape; the generated pages of
scenario 1 are not.

The pages are the package's HTML files of at most MAX_PAGE bytes (the
long reference pages and indexes, up to 2.5 MB, are left out), about
44 KB on average; they are copied to tmpfs once, and the 5,000 distinct
URLs /pydocs/R/PATH are copies R = 0, 1, ... of the tree (symlinks), so
every URL is a real page with its real path.

The functions take the bench module (b) for its measuring and reporting
helpers."""
import json
import os
import shutil

import tmpfs

PYDOCS = "/usr/share/doc/python3.11/html"
MAX_PAGE = 100_000
CONC = 20


def select_pages(root, max_bytes):
    """Relative paths and sizes of the HTML files of at most max_bytes, in
    a stable order."""
    pages = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if name.endswith(".html") and not os.path.islink(path):
                size = os.path.getsize(path)
                if size <= max_bytes:
                    pages.append((os.path.relpath(path, root), size))
    return pages


def build_docroot(www, scratch, pages, n):
    """Copies the pages to scratch/tree, links www/pydocs/R to it for every
    copy R that the n URLs need; returns [(relative URL, size)] * n."""
    tree = os.path.join(scratch, "tree")
    for rel, _ in pages:
        os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
        shutil.copyfile(os.path.join(PYDOCS, rel), os.path.join(tree, rel))
    copies = os.path.join(scratch, "copies")
    os.makedirs(copies, exist_ok=True)
    for r in range(-(-n // len(pages))):
        os.symlink(tree, os.path.join(copies, str(r)))
    link = os.path.join(www, "pydocs")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(copies, link)
    return [(f"/pydocs/{i // len(pages)}/{pages[i % len(pages)][0]}", pages[i % len(pages)][1])
            for i in range(n)]


def last_summary(path):
    """sc-fetch's final summary line in its standard error, as a dict."""
    found = None
    with open(path, "rb") as fe:
        for line in fe:
            if b'"summary"' in line:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("event") == "summary":
                    found = rec
    return found


def scenario(b, www, base):
    n = 200 if b.SMOKE else 5000
    b.heading(f"8. Real pages: {n:,} pages of the Python 3.11 docs (python3.11-doc, nginx, identity), "
              f"concurrency {CONC}, outputs on tmpfs")
    if not os.path.isdir(PYDOCS):
        b.say(f"{PYDOCS} is not there (Debian's python3.11-doc): scenario skipped.")
        b.say()
        b.target(8, "sc-fetch > file ≥ 1.0 × curl, a file per body", None, "≥ 1.0x", None, "no python3.11-doc")
        return
    pages = select_pages(PYDOCS, MAX_PAGE)
    chosen = [pages[i % len(pages)][1] for i in range(n)]
    total = sum(chosen)
    scratch, where = tmpfs.scratch(b.TMP, "pydocs", 4 * total + (64 << 20))
    urls_sized = build_docroot(www, scratch, pages, n)
    urls = os.path.join(scratch, "urls.txt")
    with open(urls, "w") as fu:
        fu.writelines(f"{base}{u}\n" for u, _ in urls_sized)
    out = os.path.join(scratch, "records.jsonl")
    bodies = os.path.join(scratch, "bodies")
    codes = os.path.join(scratch, "codes.txt")
    cfg_files = os.path.join(scratch, "curl-files.cfg")
    cfg_null = os.path.join(scratch, "curl-null.cfg")
    with open(cfg_files, "w") as ff, open(cfg_null, "w") as fn:
        for i, (u, _) in enumerate(urls_sized):
            ff.write(f'url = "{base}{u}"\noutput = "{i}.html"\n')
            fn.write(f'url = "{base}{u}"\noutput = "/dev/null"\n')
    stderr = os.path.join(b.TMP, "stderr.txt")   # where b.measure puts it
    record_mb = {}

    def records_check(s):
        got = b.count_in_file(out, b'"ok":true')
        lines = b.count_lines(out)
        record_mb["file"] = os.path.getsize(out) / 1e6
        summ = last_summary(stderr) or {}
        s["extra"] = f"ok={got} lines={lines} body_bytes={summ.get('bytes')}"
        if got != n or lines != n:
            return f"{got} of {n} records ok, {lines} lines; first failures: {b.first_failures(out) or 'none'}"
        if summ.get("bytes") != total:
            return f"bodies of {summ.get('bytes')} bytes, not the pages' {total}"
        return None

    def summary_check(s):
        summ = last_summary(stderr)
        if not summ:
            return "no summary line on standard error"
        s["extra"] = f"records={summ['records']} ok={summ['ok']} bytes={summ['bytes']}"
        if summ["records"] != n or summ["ok"] != n or summ["bytes"] != total:
            return f"summary says {summ['records']} records, {summ['ok']} ok, {summ['bytes']} bytes; want {n}, {n}, {total}"
        return None

    def fresh_bodies():
        shutil.rmtree(bodies, ignore_errors=True)
        os.makedirs(bodies)

    def bodies_check(s):
        names = os.listdir(bodies)
        size = sum(os.path.getsize(os.path.join(bodies, x)) for x in names)
        s["extra"] = f"files={len(names)} bytes={size}"
        return None if len(names) == n and size == total else f"{len(names)} of {n} files, {size} of {total} bytes"

    def codes_check(s):
        ok = size = 0
        with open(codes) as fc:
            for line in fc:
                code, got = line.split()
                ok += code == "200"
                size += int(got)
        s["extra"] = f"200s={ok} bytes={size}"
        return None if ok == n and size == total else f"{ok} of {n} answered 200, {size} of {total} bytes"

    def rm(path):
        return lambda: os.path.exists(path) and os.unlink(path)

    fetch = b.sc_fetch_cmd(f" -c {CONC}")
    curl = shutil.which("curl")
    par = f"{curl} -sS --parallel --parallel-max {CONC}"
    names = {"file": "sc-fetch -c 20 > records file", "files": "curl --parallel, a file per body",
             "null": "sc-fetch -c 20 > /dev/null", "cnull": "curl --parallel > /dev/null"}
    runners = [
        dict(name=names["file"], cmd=fetch and f"{fetch} < {b.q(urls)} > {b.q(out)}",
             check=records_check, cleanup=rm(out)),
        dict(name=names["files"], cmd=f"{par} --output-dir {b.q(bodies)} -K {b.q(cfg_files)}",
             prep=fresh_bodies, check=bodies_check, cleanup=lambda: shutil.rmtree(bodies, ignore_errors=True)),
        dict(name=names["null"], cmd=fetch and f"{fetch} < {b.q(urls)} > /dev/null", check=summary_check),
        dict(name=names["cnull"],
             cmd=f"{par} -w '%{{http_code}} %{{size_download}}\\n' -K {b.q(cfg_null)} > {b.q(codes)}",
             check=codes_check, cleanup=rm(codes)),
    ]
    res = b.run_interleaved(runners)
    rps, cpu, best = {}, {}, {}
    rows = []
    for r in runners:
        m = res[r["name"]]
        if "error" in m:
            rows.append([r["name"], m["error"], "", "", "", "", "", "", ""])
            continue
        rps[r["name"]] = n / m["wall"]
        cpu[r["name"]] = m["cpu"] / n * 1000
        best[r["name"]] = m
        rows.append([r["name"], b.f(m["wall"], 3), b.f(rps[r["name"]]), b.f(total / 1e6 / m["wall"], 0),
                     b.f(m["cpu"], 3), b.f(cpu[r["name"]], 3), b.f(m["rss"], 1),
                     f"{m['wall_min']:.3f} / {m['cpu_min']:.3f}"])
    for row in rows:
        sc = names["null"] if "/dev/null" in row[0] else names["file"]
        row.append(b.fr(b.ratio(rps.get(sc), rps.get(row[0]))) if row[0] in rps else "")
    b.table(["Tool", "wall s", "req/s", "MB/s (bodies)", "CPU s", "CPU s / 1k req", "peak RSS MB",
             "best wall s / best CPU s", "sc-fetch ÷ this (same output kind)"], rows)
    b.say(f"{len(pages)} of the package's HTML files (those of at most {MAX_PAGE // 1000} KB), "
          f"{total / n / 1000:.1f} KB a page on average, {total / 1e6:.0f} MB of bodies in all"
          + (f", {record_mb['file']:.0f} MB of records" if record_mb else "")
          + f". Outputs in {os.path.realpath(scratch)}" + (f": **{where}**" if where else " (tmpfs)")
          + ". CPU is user + sys of the client's whole process tree (not nginx's); "
          "nginx (1 worker) and the client share the machine's cores. Every run is checked: "
          "all records ok with every body's bytes, every file present at its size, every curl answer a 200.")
    if len(best) == 4:
        def by_best(sc, other, key):
            return b.fr(b.ratio(best[other][key + "_min"], best[sc][key + "_min"]))
        b.say()
        b.say(f"On the best of {b.REPS} run{'s' if b.REPS > 1 else ''} (the least disturbed on a shared machine): sc-fetch > file is "
              f"{by_best(names['file'], names['files'], 'wall')} curl's speed with a file per body, on "
              f"{b.fr(b.ratio(best[names['file']]['cpu_min'], best[names['files']]['cpu_min']))} of its CPU; "
              f"sc-fetch > /dev/null is {by_best(names['null'], names['cnull'], 'wall')} curl's speed to /dev/null, "
              f"on {b.fr(b.ratio(best[names['null']]['cpu_min'], best[names['cnull']]['cpu_min']))} of its CPU.")
    b.say()
    sc_file, sc_null = rps.get(names["file"]), rps.get(names["null"])
    x = b.ratio(sc_file, rps.get(names["files"]))
    b.target(8, "sc-fetch > file ≥ 1.0 × curl --parallel, a file per body (req/s)", x, "≥ 1.0x", b.ge(x, 1.0))
    x = b.ratio(sc_null, rps.get(names["cnull"]))
    b.target(8, "sc-fetch > /dev/null ≥ 0.9 × curl --parallel > /dev/null (req/s)", x, "≥ 0.9x", b.ge(x, 0.9))
    x = b.ratio(cpu.get(names["file"]), cpu.get(names["files"]))
    b.target(8, "sc-fetch > file CPU per request ≤ curl, a file per body", x, "≤ 1.00x",
             None if x is None else x <= 1.0)
    tmpfs.remove(scratch)
    os.unlink(os.path.join(www, "pydocs"))
