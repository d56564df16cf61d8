#!/usr/bin/python3
"""sc-parse --structured against extruct 0.14 (Debian's python3-extruct) on
the pages of a directory: the same objects, page by page and kind by kind.

usage: agree.py SC_PARSE PAGES_DIR [--expect FILE]

Each page is fetched as the record of http://pages.example/NAME, parsed by
one sc-parse --structured=json-ld,microdata,opengraph,rdfa and by
extruct.extract(html, base_url, syntaxes) per kind.  Compared as parsed
JSON: json-ld, microdata and opengraph exactly (object member order
aside); rdfa as rdflib makes it, a set: blank node names made one,
nodes and each property's values in sorted order.  A kind that extruct
cannot read (it raises) is a disagreement too.

Prints one line per disagreement ("NAME KIND: ...") and a summary line
"agree N/M pages (P%)"; with --expect, the names of pages expected to
disagree (one a line, "# why" comments), exits 1 when any other page
disagrees or an expected one agrees."""
import json
import os
import re
import subprocess
import sys

import extruct

KINDS = ["json-ld", "microdata", "opengraph", "rdfa"]
BASE = "http://pages.example/"


def canon_rdfa(nodes):
    text = json.dumps(nodes, sort_keys=True)
    text = re.sub(r'"_:[^"]*"', '"_:"', text)
    out = []
    for node in json.loads(text):
        node = {k: (sorted(v, key=lambda x: json.dumps(x, sort_keys=True))
                    if isinstance(v, list) else v) for k, v in node.items()}
        out.append(json.dumps(node, sort_keys=True))
    return sorted(out)


def same(kind, a, b):
    if isinstance(b, str) and a == []:
        return True  # extruct raised: no objects either way
    if kind == "rdfa" and isinstance(a, list) and isinstance(b, list):
        return canon_rdfa(a) == canon_rdfa(b)
    return a == b


def main():
    sc_parse, pages = sys.argv[1], sys.argv[2]
    expect = set()
    if len(sys.argv) > 4 and sys.argv[3] == "--expect":
        with open(sys.argv[4], encoding="utf-8") as f:
            expect = {line.split("#")[0].strip() for line in f} - {""}
    names = sorted(n for n in os.listdir(pages) if n.endswith(".html"))
    bodies = {}
    for n in names:
        with open(os.path.join(pages, n), "rb") as f:
            bodies[n] = f.read()
    lines = "".join(json.dumps({"url": BASE + n, "status": 200, "ok": True,
                                "content_type": "text/html; charset=utf-8",
                                "body": bodies[n].decode("utf-8", "replace")}) + "\n"
                    for n in names)
    run = subprocess.run([sc_parse, "--structured=" + ",".join(KINDS), "-j", "1"],
                         input=lines.encode(), capture_output=True, check=True)
    ours = [json.loads(line)["structured"] for line in run.stdout.decode().splitlines()]
    bad = set()
    for n, mine in zip(names, ours):
        for kind in KINDS:
            try:
                theirs = extruct.extract(bodies[n], base_url=BASE + n, syntaxes=[kind])[kind]
                theirs = json.loads(json.dumps(theirs))  # tuples as JSON arrays
            except Exception as e:  # extruct gives up on the whole kind
                theirs = f"extruct raised {type(e).__name__}: {str(e)[:80]}"
            if not same(kind, mine[kind], theirs):
                bad.add(n)
                print(f"{n} {kind}: sc-parse {json.dumps(mine[kind])[:300]}")
                print(f"{' ' * len(n)} {kind}: extruct  {json.dumps(theirs)[:300]}")
    agree = len(names) - len(bad)
    print(f"agree {agree}/{len(names)} pages ({100.0 * agree / len(names):.1f}%)")
    if expect and (bad != expect):
        print(f"unexpected: disagree {sorted(bad - expect)}, agree {sorted(expect - bad)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
