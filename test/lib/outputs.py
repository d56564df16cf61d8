#!/usr/bin/env python3
"""Compares what a pipeline's sinks hold with the copy taken between stages.

    outputs.py whole COPY A.jsonl B.csv C.sqlite
        Every record of COPY (JSONL, as sc-fetch or sc-retry wrote it) is in
        A, B and C, whole, once; A, B and C hold nothing else; C passes
        PRAGMA integrity_check.
    outputs.py either COPY A.jsonl B.csv C.sqlite OLD_DIR
        After a second signal: A and B are each byte for byte the file of
        the same name in OLD_DIR (the previous version), or a whole new file
        of records from COPY; C passes integrity_check and its rows are the
        old ones plus whole records from COPY.

Records are told apart by url (the tests make every url unique).  Prints
what is wrong and exits 1; exits 0 and prints nothing when all is well.
"""
import csv
import json
import os
import sqlite3
import sys

problems = []


def jsonl_urls(path):
    urls = []
    with open(path, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        problems.append(f"{path}: ends in a partial line")
    for n, line in enumerate(data.splitlines(), 1):
        try:
            rec = json.loads(line)
        except ValueError as e:
            problems.append(f"{path}:{n}: not a whole record ({e}): {line[:80]!r}")
            continue
        if not isinstance(rec, dict) or "url" not in rec:
            problems.append(f"{path}:{n}: not a record with a url")
            continue
        urls.append(rec["url"])
    return urls


def csv_urls(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, strict=True))
    if not rows or "url" not in rows[0]:
        problems.append(f"{path}: no header with a url column")
        return []
    col = rows[0].index("url")
    urls = []
    for n, row in enumerate(rows[1:], 2):
        if len(row) != len(rows[0]):
            problems.append(f"{path}: row {n} has {len(row)} cells, not {len(rows[0])}")
            continue
        urls.append(row[col])
    return urls


def sqlite_urls(path):
    db = sqlite3.connect(path)
    check = db.execute("PRAGMA integrity_check").fetchall()
    if check != [("ok",)]:
        problems.append(f"{path}: integrity_check: {check}")
    urls = [r[0] for r in db.execute("SELECT url FROM records")]
    for (rec,) in db.execute("SELECT record FROM records"):
        try:
            json.loads(rec)
        except ValueError:
            problems.append(f"{path}: a row whose record is not whole: {rec[:80]!r}")
    db.close()
    return urls


def same(name, got, want):
    if sorted(got) != sorted(want):
        missing = sorted(set(want) - set(got))[:3]
        extra = sorted(set(got) - set(want))[:3]
        problems.append(f"{name}: {len(got)} records, want {len(want)}; "
                        f"missing {missing}, extra {extra}")


def main():
    mode, copy, a, b, c = sys.argv[1:6]
    want = jsonl_urls(copy)
    if len(set(want)) != len(want):
        problems.append(f"{copy}: a url twice")
    if mode == "whole":
        same(a, jsonl_urls(a), want)
        same(b, csv_urls(b), want)
        same(c, sqlite_urls(c), want)
    else:
        old = sys.argv[6]
        for path, read in ((a, jsonl_urls), (b, csv_urls)):
            with open(path, "rb") as f, open(os.path.join(old, os.path.basename(path)), "rb") as g:
                if f.read() == g.read():
                    continue
            got = read(path)
            stray = set(got) - set(want)
            if stray or len(set(got)) != len(got):
                problems.append(f"{path}: neither the old file nor new records: {sorted(stray)[:3]}")
        old_urls = sqlite_urls(os.path.join(old, os.path.basename(c)))
        got = sqlite_urls(c)
        stray = set(got) - set(want) - set(old_urls)
        if stray or not set(old_urls) <= set(got):
            problems.append(f"{c}: rows neither old nor from the copy: {sorted(stray)[:3]}")
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
