#!/usr/bin/python3
"""Scenario "maintext" (issue 31): sc-parse --main against Mozilla's
Readability (npm @mozilla/readability 0.6.0 on jsdom, test/npm) and
readability-lxml (Debian's python3-readability) on pages whose main content
is known: Debian's Python documentation (the article is the Sphinx
template's <div class="body" role="main">) and the boilerplate-heavy pages
of test/maintext (the article's element named below).  Token-level F1 of
each program's text against the known content (tokens: \\w+ runs, lower
case, counted as a multiset), and pages/s on one core, in the same run.
Targets: F1 at least the better anchor's, pages/s at least 10x Mozilla's
and 3x readability-lxml's.

Runs alone (python3 test/bench/maintext.py; SC_BIN=bin by default) or from
test/bench/run.  SC_BENCH_SMOKE=1: 30 documentation pages, one run;
SC_BENCH_ONLY, when set, must name "maintext"."""
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import lxml.html

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SC_BIN = os.environ.get("SC_BIN", os.path.join(ROOT, "bin"))
SMOKE = os.environ.get("SC_BENCH_SMOKE") == "1"
REPS = int(os.environ.get("SC_BENCH_REPS", "1" if SMOKE else "3"))
ONLY = set(os.environ.get("SC_BENCH_ONLY", "").split())
DOCS = "/usr/share/doc/python3.11/html"
N_DOCS = 30 if SMOKE else 300
FIXTURES = {  # page: XPath of its article
    "blog.html": "//div[@class='post-content']",
    "news.html": "//article",
}
LXML = """
import json, sys, lxml.html
from readability import Document
for line in sys.stdin:
    rec = json.loads(line)
    try:
        html = Document(rec["body"], url=rec["url"]).summary(html_partial=True)
        text = lxml.html.fromstring(html).text_content()
    except Exception:
        text = None
    sys.stdout.write(json.dumps({"url": rec["url"], "text": text}) + "\\n")
"""


def tokens(text):
    return collections.Counter(re.findall(r"\w+", (text or "").lower()))


def f1(got, want):
    g, w = tokens(got), tokens(want)
    common = sum((g & w).values())
    if not common:
        return 0.0
    p, r = common / sum(g.values()), common / sum(w.values())
    return 2 * p * r / (p + r)


def gold(body, xpath):
    el = lxml.html.fromstring(body).xpath(xpath)[0]
    for junk in el.xpath(".//a[@class='headerlink']|.//script|.//style"):
        junk.drop_tree()
    return el.text_content()


def corpus():
    names = []
    for d, _, files in os.walk(DOCS):
        names += [os.path.join(d, f) for f in files if f.endswith(".html")]
    names = sorted(n for n in names if "genindex" not in n and "/_" not in n)
    step = max(1, len(names) // N_DOCS)
    pages = []
    for n in names[::step][:N_DOCS]:
        body = open(n, encoding="utf-8", errors="replace").read()
        if "role=\"main\"" in body:
            pages.append(("docs", "file://" + n, body, gold(body, "//div[@role='main']")))
    for name, xpath in FIXTURES.items():
        body = open(os.path.join(ROOT, "test", "maintext", name), encoding="utf-8").read()
        pages.append(("boilerplate", "https://example.org/" + name, body, gold(body, xpath)))
    return pages


def run(cmd, path):
    with open(path, "rb") as f:
        start = time.perf_counter()
        out = subprocess.run(cmd, stdin=f, capture_output=True, check=True).stdout
        return time.perf_counter() - start, [json.loads(l) for l in out.splitlines()]


def main():
    if ONLY and "maintext" not in ONLY:
        return 0
    pages = corpus()
    progs = {
        "sc-parse --main": [os.path.join(SC_BIN, "sc-parse"), "-j", "1", "--main", "-f", "x=title"],
        "Mozilla Readability 0.6.0": ["node", os.path.join(ROOT, "test", "bench", "readability-ref.js")],
        "readability-lxml 0.8.1": ["/usr/bin/python3", "-c", LXML],
    }
    times = {p: [] for p in progs}
    outs = {}
    with tempfile.TemporaryDirectory() as tmp:
        recs = os.path.join(tmp, "pages.jsonl")
        with open(recs, "w", encoding="utf-8") as f:
            for _, url, body, _ in pages:
                f.write(json.dumps({"url": url, "ok": True, "status": 200,
                                    "content_type": "text/html", "body": body}) + "\n")
        for _ in range(REPS):  # interleaved
            for name, cmd in progs.items():
                t, outs[name] = run(cmd, recs)
                times[name].append(t)
    print(f"## maintext (issue 31): {len(pages)} pages, one core, median of {REPS}")
    print("| program | F1 docs | F1 boilerplate | pages/s |\n|---|---|---|---|")
    rates, scores = {}, {}
    for name in progs:
        per = collections.defaultdict(list)
        for (kind, _, _, want), rec in zip(pages, outs[name]):
            per[kind].append(f1(rec.get("text"), want))
        rates[name] = len(pages) / statistics.median(times[name])
        scores[name] = {k: statistics.mean(v) for k, v in per.items()}
        print(f"| {name} | {scores[name]['docs']:.3f} | {scores[name]['boilerplate']:.3f} | {rates[name]:.1f} |")
    sc, moz, lx = list(progs)
    for kind in ("docs", "boilerplate"):
        best = max(scores[moz][kind], scores[lx][kind])
        print(f"F1 {kind}: {scores[sc][kind]:.3f} against the better anchor's {best:.3f}: "
              f"{'met' if scores[sc][kind] >= best else 'NOT met'}")
    print(f"pages/s: {rates[sc] / rates[moz]:.1f}x Mozilla's (target 10x), "
          f"{rates[sc] / rates[lx]:.1f}x readability-lxml's (target 3x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
