#!/usr/bin/env python3
"""wacz-check.py WACZ OUTDIR: checks a WACZ against the structure of WACZ
1.1.1 with Python's own zipfile, hashlib and json (none of sc's code), and
extracts its archive/ into OUTDIR for the WARC readers.  Prints the pages
(url, ts, title), one JSON line each; exits 1 with the reasons otherwise.

Checked: datapackage.json (profile, wacz_version 1.1.1, created) lists
every file of the ZIP but the two datapackage files, each with its path,
its size in bytes and "sha256:" of its bytes, recomputed here;
datapackage-digest.json holds the hash of datapackage.json; the WARCs are
stored, not deflated; pages/pages.jsonl begins with the json-pages-1.0
header and every other line is a page (an http(s) url, an ISO 8601 ts, a
string title if any); indexes/index.cdx is sorted CDXJ whose every line
names a WARC of archive/ and a range inside it; mainPageUrl, when there,
is a listed page and mainPageDate its ts."""
import datetime
import hashlib
import json
import os
import sys
import zipfile

bad = []


def check(ok, why):
    if not ok:
        bad.append(why)
    return ok


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def main():
    path, out = sys.argv[1:3]
    z = zipfile.ZipFile(path)
    names = {i.filename: i for i in z.infolist()}
    for need in ("datapackage.json", "datapackage-digest.json", "pages/pages.jsonl"):
        check(need in names, f"no {need}")
    check("indexes/index.cdx" in names or "indexes/index.cdx.gz" in names, "no indexes/index.cdx")
    if bad:
        return
    dp_bytes = z.read("datapackage.json")
    dp = json.loads(dp_bytes)
    check(dp.get("profile") == "data-package", "profile is not data-package")
    check(dp.get("wacz_version") == "1.1.1", f"wacz_version {dp.get('wacz_version')!r}")
    check(datetime.datetime.fromisoformat(dp["created"].replace("Z", "+00:00")) is not None, "created")
    listed = set()
    for r in dp.get("resources", []):
        p = r.get("path")
        if not check(p in names, f"resource {p} is not in the ZIP"):
            continue
        data = z.read(p)
        listed.add(p)
        check(r.get("hash") == sha256(data), f"{p}: hash {r.get('hash')} is not {sha256(data)}")
        check(r.get("bytes") == len(data), f"{p}: bytes {r.get('bytes')} is not {len(data)}")
    others = set(names) - {"datapackage.json", "datapackage-digest.json"}
    check(listed == others, f"not listed in datapackage.json: {sorted(others - listed)}")
    digest = json.loads(z.read("datapackage-digest.json"))
    check(digest.get("path") == "datapackage.json", "datapackage-digest.json: path")
    check(digest.get("hash") == sha256(dp_bytes), "datapackage-digest.json: hash is not datapackage.json's")
    warcs = [n for n in names if n.startswith("archive/")]
    check(len(warcs) > 0, "no WARC in archive/")
    for n in warcs:
        check(names[n].compress_type == zipfile.ZIP_STORED, f"{n} is not stored")
        check(n.endswith((".warc", ".warc.gz")), f"{n} is not a WARC")
    lines = z.read("pages/pages.jsonl").decode("utf-8").splitlines()
    head = json.loads(lines[0])
    check(head.get("format") == "json-pages-1.0" and head.get("id") == "pages", f"pages header {lines[0]}")
    pages = []
    for line in lines[1:]:
        page = json.loads(line)
        check(page.get("url", "").startswith(("http://", "https://")), f"page url: {line}")
        try:
            datetime.datetime.fromisoformat(page.get("ts", "").replace("Z", "+00:00"))
        except ValueError:
            bad.append(f"page ts: {line}")
        check(isinstance(page.get("title", ""), str), f"page title: {line}")
        pages.append(page)
        print(json.dumps(page, sort_keys=True))
    # mainPageUrl and mainPageDate (optional): a listed page and its ts.
    if "mainPageUrl" in dp or "mainPageDate" in dp:
        main_ts = [p["ts"] for p in pages if p["url"] == dp.get("mainPageUrl")]
        check(main_ts != [], f"mainPageUrl {dp.get('mainPageUrl')!r} is not a listed page")
        check(main_ts[:1] == [dp.get("mainPageDate")], f"mainPageDate {dp.get('mainPageDate')!r} is not its ts")
    cdx = z.read("indexes/index.cdx").decode("utf-8").splitlines()
    check(cdx == sorted(cdx, key=lambda s: s.encode()), "index.cdx is not sorted")
    for line in cdx:
        surt, ts, rest = line.split(" ", 2)
        j = json.loads(rest)
        f = "archive/" + j.get("filename", "")
        check(f in names and len(ts) == 14, f"index line names no WARC of archive/: {line}")
        if f in names:
            check(int(j["offset"]) + int(j["length"]) <= names[f].file_size, f"range outside {f}: {line}")
    os.makedirs(out, exist_ok=True)
    for n in warcs:
        with open(os.path.join(out, os.path.basename(n)), "wb") as w:
            w.write(z.read(n))


main()
if bad:
    sys.stderr.write("wacz-check.py: " + "\nwacz-check.py: ".join(bad) + "\n")
    sys.exit(1)
