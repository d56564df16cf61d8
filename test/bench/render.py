#!/usr/bin/python3
"""Rendering (issue 28): sc-render beside puppeteer-core and playwright-core.

  render-speed  the same pages through sc-render, puppeteer-core and
                playwright-core (test/bench/render-ref.js), the same
                Debian Chromium, 4 tabs and the same wait: PAGES of the
                real Python documentation (python3.11-doc, --wait load)
                and PAGES pages that JavaScript builds from a fetch()
                (test/render/gen-pages.py, --wait selector:#done), both
                served by nginx on loopback.  Pages a second (over the
                two runs), the peak memory of the whole process tree (the
                program and every Chromium process: the sum of their PSS,
                sampled every 100 ms), and whether each page's text
                agrees with puppeteer's.  Targets: sc-render at least
                1.2x puppeteer's pages/s, at most its peak memory, the
                same text on every page.
  render-auto   crawl.mk on a site of AUTO_PAGES pages (a 10-ary tree from
                its index, served by nginx) where one page in ten is a
                shell a script fills, politely (PER_HOST=1, --delay 50):
                RENDER=auto beside RENDER=0, the same pages crawled.
                Target: RENDER=auto at most 1.3x the wall time.
  render-flat   sc-render on FLAT pages (the JavaScript-built ones over
                and over): the tree's peak memory while the first tenth
                of the records were written, the last tenth, and over the
                whole run.  Target: no higher over the last tenth.

The browser resolves nothing but loopback (--host-resolver-rules, as in
the suite).  Runs alone too:

    SC_BENCH_ONLY=render-speed /usr/bin/python3 -B test/bench/render.py
"""
import html
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import bench as b

PAGES = 20 if b.SMOKE else 500
AUTO_DEPTH = 1 if b.SMOKE else 3   # 11 or 1,111 pages
AUTO_DELAY_MS = 50
# A run of the three renderers takes about 20 minutes: one run unless
# SC_BENCH_REPS asks for more.
REPS = 1 if b.SMOKE else max(1, int(os.environ.get("SC_BENCH_REPS", "1")))
FLAT = 200 if b.SMOKE else 5000
TABS = 4
BROWSER_PAGES = 1000  # sc-render's --browser-pages default (cmd/sc-render/main.c)
HOST_RULES = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.*, EXCLUDE localhost"
PYDOC = "/usr/share/doc/python3.11/html"
REF = os.path.join(b.HERE, "render-ref.js")
GEN = os.path.join(b.ROOT, "test/render/gen-pages.py")
NODE_MODULES = os.path.join(b.ROOT, "test/npm/node_modules")


def browser():
    for p in (os.environ.get("SC_BROWSER"), "/usr/lib/chromium/chromium-headless-shell",
              "/usr/lib/chromium/chromium"):
        if p and os.access(p, os.X_OK):
            return p
    return None


# ------------------------------------------------------------ the tree's memory

def _children():
    """{ppid: [pid, ...]} of every process now."""
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fs:
                stat = fs.read()
        except OSError:
            continue
        # The command may hold spaces and parentheses: fields after the last ')'.
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def _pss_kb(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fs:
            for line in fs:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_pss_kb(root):
    """The sum of the PSS of root and its descendants (PSS: shared pages
    split among the processes that share them, so that a multi-process
    browser is not counted many times over)."""
    kids, total, todo = _children(), 0, [root]
    while todo:
        pid = todo.pop()
        total += _pss_kb(pid)
        todo.extend(kids.get(pid, ()))
    return total


def run_sampled(cmd, progress_path=None, timeout=1800):
    """Runs cmd (bash) sampling its tree's PSS every 100 ms.  Returns
    {"wall", "peak_mb", "samples": [(lines of progress_path, kB)]}.
    Raises b.Failed on a non-zero exit."""
    errpath = os.path.join(b.TMP, "render-stderr.txt")
    samples = []
    with open(errpath, "wb") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(["timeout", "-k", "5", str(timeout), "bash", "-c", "set -o pipefail; " + cmd],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, cwd=b.TMP)
        done = threading.Event()

        def sample():
            lines, offset = 0, 0
            while not done.wait(0.1):
                kb = tree_pss_kb(p.pid)
                # The records written so far: the new bytes' newlines.
                if progress_path and os.path.exists(progress_path):
                    with open(progress_path, "rb") as fp:
                        fp.seek(offset)
                        new = fp.read()
                    offset += len(new)
                    lines += new.count(b"\n")
                samples.append((lines, kb))
        t = threading.Thread(target=sample, daemon=True)
        t.start()
        rc = p.wait()
        done.set()
        t.join()
        wall = time.monotonic() - t0
    if rc != 0:
        with open(errpath, "rb") as fe:
            tail = fe.read()[-600:].decode(errors="replace").strip()
        raise b.Failed(f"{cmd[:60]}: exit {rc}: {tail}")
    return {"wall": wall, "peak_mb": max((kb for _, kb in samples), default=0) / 1024, "samples": samples}


# ------------------------------------------------------------ the pages' text

SCRIPT_OR_STYLE = re.compile(r"<(script|style)\b.*?</\1\s*>", re.S | re.I)
TAG = re.compile(r"<[^>]*>")
SPACE = re.compile(r"\s+")


def page_text(body):
    """A body's text: scripts and styles left out, tags removed,
    entities decoded, white space made one space."""
    return SPACE.sub(" ", html.unescape(TAG.sub(" ", SCRIPT_OR_STYLE.sub(" ", body or "")))).strip()


def texts(path):
    import json
    out = {}
    with open(path) as fi:
        for line in fi:
            r = json.loads(line)
            out[r["url"]] = (r.get("ok"), page_text(r.get("body")))
    return out


# ------------------------------------------------------------ the scenarios

def auto_site(www):
    """www/auto/I.html, a 10-ary tree from 0.html to AUTO_DEPTH: page I
    links to 10I+1 .. 10I+10; every page whose number ends in 9 is a shell
    whose text its script writes (its links are in its HTML, so that a
    crawl without a browser finds the same pages).  Returns the number of
    pages."""
    d = os.path.join(www, "auto")
    os.makedirs(d)
    count = sum(10 ** k for k in range(AUTO_DEPTH + 1))
    words = "crawl render page polite archive script shell browser tree leaf".split()
    for i in range(count):
        text = " ".join(words[(i + k) % len(words)] for k in range(60))
        kids = [10 * i + k for k in range(1, 11) if 10 * i + k < count]
        links = "".join(f'<li><a href="{k}.html">{k}</a></li>' for k in kids)
        if i % 10 == 9:
            # Its links in the HTML (both crawls find the same pages), its
            # text written by its script: under 200 characters as sent.
            body = (f"<ul>{links}</ul><div id=\"app\"></div><script>document.getElementById('app')"
                    f".innerHTML = '<h1>page {i}</h1><p>' + {text!r} + '</p>';</script>")
        else:
            body = f"<h1>page {i}</h1><p>{text}</p><ul>{links}</ul>"
        with open(os.path.join(d, f"{i}.html"), "w") as fo:
            fo.write(f"<!DOCTYPE html><html><head><title>page {i}</title></head><body>{body}</body></html>\n")
    return count


def scenario_auto(base, count):
    b.heading(f"render-auto. crawl.mk on {count:,} pages, one in ten a shell its script fills, PER_HOST=1 "
              f"FETCH_ARGS='--delay {AUTO_DELAY_MS}', RENDER=auto beside RENDER=0")
    work = os.path.join(b.TMP, "auto-crawl")
    os.makedirs(work)
    seeds = os.path.join(work, "seeds.txt")
    with open(seeds, "w") as fo:
        fo.write(f"{base}/auto/0.html\n")
    mk = os.path.join(b.ROOT, "share/sc/crawl.mk")
    crawl_dir = os.path.join(work, "c")
    env = (f"PATH={b.q(b.BIN)}:\"$PATH\" XDG_CACHE_HOME={b.q(work)}/.cache "
           f"SC_RENDER_BROWSER_ARGS={b.q('--host-resolver-rules=' + HOST_RULES)}")

    def fresh():
        shutil.rmtree(crawl_dir, ignore_errors=True)

    def check(want_rendered):
        def f(s):
            pages = os.path.join(crawl_dir, "pages.jsonl")
            ok = b.count_in_file(pages, b'"ok":true') if os.path.exists(pages) else 0
            rendered = b.count_in_file(pages, b'"rendered":') if os.path.exists(pages) else 0
            s["pages"], s["rendered"] = ok, rendered
            s["extra"] = f"pages={ok} rendered={rendered}"
            if ok != count:
                return f"{ok} ok pages, want {count}"
            if want_rendered and rendered != count // 10:
                return f"{rendered} rendered, want {count // 10}"
            return None
        return f

    def crawl(extra, want_rendered):
        return dict(name=f"make -f crawl.mk PER_HOST=1 FETCH_ARGS='--delay {AUTO_DELAY_MS}' {extra}",
                    cmd=(f"{env} make -s -f {b.q(mk)} -j 2 SEEDS={b.q(seeds)} DEPTH={AUTO_DEPTH} "
                         f"DIR={b.q(crawl_dir)} C=8 PER_HOST=1 PROGRESS=0 "
                         f"FETCH_ARGS='--delay {AUTO_DELAY_MS}' {extra}"),
                    prep=fresh, check=check(want_rendered), timeout=3600)

    runners = [crawl("RENDER=0", False), crawl("RENDER=auto", True)]
    res = b.run_interleaved(runners, REPS)
    rows = []
    for r in runners:
        m = res[r["name"]]
        if "error" in m:
            rows.append([r["name"], m["error"][:100], "", "", ""])
            continue
        rows.append([r["name"], b.f(m.get("pages")), b.f(m.get("rendered")), b.f(m["wall"], 1), b.f(m["cpu"], 1)])
    b.table(["Crawl", "ok pages", "rendered", "wall s", "CPU s"], rows)
    b.say(f"The same pages in both (checked by count); with RENDER=auto the shells (one in ten) are rendered, "
          f"the rest parsed as fetched. Politeness bound: {count:,} requests {AUTO_DELAY_MS} ms apart, "
          f"{(count - 1) * AUTO_DELAY_MS / 1000:.1f} s.")
    b.say()
    a, z = res[runners[1]["name"]], res[runners[0]["name"]]
    x = a["wall"] / z["wall"] if "error" not in a and "error" not in z else None
    b.target("render-auto", "crawl.mk RENDER=auto wall ≤ 1.3 × RENDER=0's (one page in ten needs the browser)",
             x, "≤ 1.30x", None if x is None else x <= 1.3, None if x is not None else "not measured")


def site():
    """nginx serving the Python documentation (doc/) and PAGES pages that
    JavaScript builds (js/); the two URL lists."""
    www = os.path.join(b.TMP, "www")
    os.makedirs(www)
    os.symlink(PYDOC, os.path.join(www, "doc"))
    subprocess.run([b.PY, GEN, str(max(PAGES, 1)), www], check=True, stdout=subprocess.DEVNULL)
    auto_count = auto_site(www)
    base = b.start_nginx(www)
    docs = []
    for d, _, files in sorted(os.walk(PYDOC)):
        for name in sorted(files):
            if name.endswith(".html"):
                docs.append(os.path.relpath(os.path.join(d, name), PYDOC))
    docs = docs[:PAGES]
    doc_urls = os.path.join(b.TMP, "doc-urls.txt")
    js_urls = os.path.join(b.TMP, "js-urls.txt")
    with open(doc_urls, "w") as fo:
        fo.writelines(f"{base}/doc/{p}\n" for p in docs)
    with open(js_urls, "w") as fo:
        fo.writelines(f"{base}/js/{i}.html\n" for i in range(PAGES))
    return base, doc_urls, js_urls, auto_count


def sc_render(extra, urls, out):
    return (f"SC_RENDER_BROWSER_ARGS={b.q('--host-resolver-rules=' + HOST_RULES)} "
            f"{b.q(b.prog('sc-render'))} -c {TABS} -m 30 {extra} < {b.q(urls)} > {b.q(out)}; "
            f"rc=$?; [ $rc = 0 ] || [ $rc = 3 ]")


def reference(engine, extra, urls, out):
    return (f"SC_RENDER_HOST_RULES={b.q(HOST_RULES)} node {b.q(REF)} --engine {engine} -c {TABS} -m 30 "
            f"{extra} < {b.q(urls)} > {b.q(out)}")


def scenario_speed(doc_urls, js_urls):
    b.heading(f"render-speed. {PAGES} pages of the Python documentation (--wait load) and {PAGES} pages "
              f"JavaScript builds (--wait selector:#done), {TABS} tabs, Debian's {os.path.basename(browser())}")
    tools = {
        "sc-render": lambda w, u, o: sc_render(f"--wait {b.q(w)}", u, o),
        "puppeteer-core": lambda w, u, o: reference("puppeteer", f"--wait {b.q(w)}", u, o),
        "playwright-core": lambda w, u, o: reference("playwright", f"--wait {b.q(w)}", u, o),
    }
    results, outs = {}, {}
    for rep in range(REPS):
        for name, make in tools.items():
            if name in results and "error" in results[name]:
                continue
            doc_out = os.path.join(b.TMP, f"{name}-doc.jsonl")
            js_out = os.path.join(b.TMP, f"{name}-js.jsonl")
            cmd = make("load", doc_urls, doc_out) + " && " + make("selector:#done", js_urls, js_out)
            try:
                s = run_sampled(cmd, timeout=3600)
            except b.Failed as e:
                results[name] = {"error": str(e)}
                b.failures.append(str(e))
                b.note(f"FAILED {e}")
                continue
            got = b.count_in_file(doc_out, b'"ok":true') + b.count_in_file(js_out, b'"ok":true')
            s["ok"] = got
            b.note(f"{name} run {rep + 1}/{REPS}: wall {s['wall']:.2f}s peak tree PSS {s['peak_mb']:.0f} MB, "
                   f"{got} of {2 * PAGES} ok")
            results.setdefault(name, {"runs": []})["runs"].append(s)
            outs[name] = (doc_out, js_out)
    # The text of every page, against puppeteer's (the last run's).
    ref = {}
    if "puppeteer-core" in outs:
        for path in outs["puppeteer-core"]:
            ref.update(texts(path))
    rows, speed = [], {}
    for name in tools:
        r = results.get(name, {"error": "not run"})
        if "error" in r:
            rows.append([name, r["error"][:120], "", "", "", ""])
            continue
        walls = sorted(s["wall"] for s in r["runs"])
        peaks = sorted(s["peak_mb"] for s in r["runs"])
        wall, peak = walls[len(walls) // 2], peaks[len(peaks) // 2]
        mine = {}
        for path in outs[name]:
            mine.update(texts(path))
        same = sum(1 for u, (ok, t) in mine.items() if ok and u in ref and ref[u][0] and ref[u][1] == t)
        speed[name] = {"pps": 2 * PAGES / wall, "peak": peak, "same": same, "ok": r["runs"][-1]["ok"]}
        rows.append([name, b.f(r["runs"][-1]["ok"]), b.f(wall, 2), b.f(2 * PAGES / wall, 1), b.f(peak),
                     f"{b.f(same)} of {b.f(len(ref))}"])
    b.table(["Renderer", "ok pages", "wall s", "pages/s", "peak tree PSS MB", "same text as puppeteer"], rows)
    b.say(f"Median of {REPS} run{'s' if REPS > 1 else ''}, interleaved; each run renders both sets, one after the other, in one "
          f"process of each renderer per set. Peak memory: the sum of the PSS of the renderer and every "
          f"process below it (the browser and its renderers), sampled every 100 ms. Text: the body's text "
          f"with scripts, styles and tags left out, white space made one space, compared page by page with "
          f"puppeteer-core's.")
    b.say()
    sc, pup = speed.get("sc-render"), speed.get("puppeteer-core")
    x = sc["pps"] / pup["pps"] if sc and pup else None
    b.target("render-speed", "sc-render pages/s ≥ 1.2 × puppeteer-core's", x, "≥ 1.20x",
             None if x is None else x >= 1.2, None if x is not None else "not measured")
    y = sc["peak"] / pup["peak"] if sc and pup and pup["peak"] else None
    b.target("render-memory", "sc-render peak tree memory ≤ puppeteer-core's", y, "≤ 1.00x",
             None if y is None else y <= 1.0, None if y is not None else "not measured")
    if sc and pup:
        b.target("render-text", "sc-render's text is puppeteer-core's on every page", sc["same"],
                 f"{2 * PAGES}", sc["same"] == 2 * PAGES, f"{sc['same']} of {2 * PAGES}")


def scenario_flat(js_urls):
    b.heading(f"render-flat. sc-render on {FLAT:,} renders of the pages JavaScript builds, {TABS} tabs")
    urls = os.path.join(b.TMP, "flat-urls.txt")
    with open(js_urls) as fi:
        lines = fi.readlines()
    with open(urls, "w") as fo:
        for i in range(FLAT):
            fo.write(lines[i % len(lines)])
    out = os.path.join(b.TMP, "flat.jsonl")
    try:
        s = run_sampled(sc_render("--wait selector:#done", urls, out), progress_path=out, timeout=7200)
    except b.Failed as e:
        b.failures.append(str(e))
        b.target("render-flat", "peak tree memory over the last tenth ≤ over the first tenth", None, "≤ 1.00x", None,
                 str(e)[:100])
        return
    tenth = FLAT // 10
    early = max((kb for n, kb in s["samples"] if n <= tenth), default=0) / 1024
    late = max((kb for n, kb in s["samples"] if n >= FLAT - tenth), default=0) / 1024
    whole = s["peak_mb"]
    ok = b.count_in_file(out, b'"ok":true')
    b.table(["Renders", "ok", "wall s", f"peak PSS MB, first {tenth:,}", f"peak PSS MB, last {tenth:,}",
             "peak PSS MB, whole run"],
            [[b.f(FLAT), b.f(ok), b.f(s["wall"], 1), b.f(early), b.f(late), b.f(whole)]])
    b.say("The peak of the tree's PSS (sampled every 100 ms) while the first tenth of the records were "
          "written, while the last tenth were, and over the whole run; sc-render's recycling "
          "(--tab-pages, --browser-pages, --browser-rss) at their defaults.")
    b.say()
    # The same comparison within a browser's life: sc-render starts a new
    # browser every BROWSER_PAGES pages, so the first tenth is the first
    # half of the first browser's life and the last tenth the second half
    # of the last one's.  Each half of the first and the last life, side
    # by side, tells a sawtooth (the same peaks in each life) from a climb.
    lives = FLAT // BROWSER_PAGES
    if lives >= 2:
        half = BROWSER_PAGES // 2

        def peak(lo, hi):
            return max((kb for n, kb in s["samples"] if lo <= n < hi), default=0) / 1024
        rows = []
        for life in (0, lives - 1):
            lo = life * BROWSER_PAGES
            rows.append([f"browser {life + 1} of {lives}", b.f(peak(lo, lo + half)),
                         b.f(peak(lo + half, lo + BROWSER_PAGES))])
        b.table(["Browser life", f"peak PSS MB, its first {half:,} renders",
                 f"peak PSS MB, its last {half:,}"], rows)
        b.say(f"Each browser renders {BROWSER_PAGES:,} pages (--browser-pages' default) before the next "
              "starts: its halves, for the first browser of the run and the last.")
        b.say()
    x = late / early if early else None
    b.target("render-flat", "peak tree memory over the last tenth ≤ over the first tenth", x, "≤ 1.00x",
             None if x is None else x <= 1.0, None if x is not None else "not measured")


def main():
    wanted, t_start = b.begin("render", ("render-speed", "render-auto", "render-flat"), "Rendering (issue 28)",
                              interleaved=False)
    if not wanted:
        return 0
    if not browser():
        raise SystemExit("render: no Chromium (make deps installs chromium-headless-shell)")
    if not os.path.isdir(NODE_MODULES):
        raise SystemExit("render: test/npm/node_modules is missing (make deps installs puppeteer-core)")
    if not os.path.isdir(PYDOC):
        raise SystemExit(f"render: {PYDOC} is missing (python3.11-doc)")
    base, doc_urls, js_urls, auto_count = site()
    if "render-speed" in wanted:
        scenario_speed(doc_urls, js_urls)
    if "render-auto" in wanted:
        scenario_auto(base, auto_count)
    if "render-flat" in wanted:
        scenario_flat(js_urls)
    return b.finish("Rendering: targets", "render.md", t_start)


if __name__ == "__main__":
    sys.exit(main())
