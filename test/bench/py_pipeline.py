"""The whole scrape in Python, as one would write it: aiohttp fetches with a
semaphore of C, lxml.html extracts the same fields sc-parse does, csv writes
them to OUT.

usage: py_pipeline.py [-c C] OUT.csv < urls.txt   (exit 3 if any fetch failed)"""
import argparse
import asyncio
import csv
import json
import sys
from urllib.parse import urldefrag, urljoin

import aiohttp
import lxml.html

COLUMNS = ("url", "final_url", "status", "ok", "title", "description", "canonical", "lang", "h1", "links")


def extract(html, base):
    doc = lxml.html.document_fromstring(html)
    title = doc.findtext(".//title")
    canonical = doc.xpath('string(//link[@rel="canonical"]/@href)')
    h1 = next(doc.iter("h1"), None)
    return {"title": title.strip() if title else None,
            "description": doc.xpath('string(//meta[@name="description"]/@content)') or None,
            "canonical": urljoin(base, canonical) if canonical else None,
            "lang": doc.get("lang"),
            "h1": " ".join(h1.text_content().split()) if h1 is not None else None,
            "links": json.dumps(list(dict.fromkeys(urldefrag(urljoin(base, a.get("href")))[0]
                                                   for a in doc.iter("a") if a.get("href"))),
                                ensure_ascii=False)}


async def scrape(session, sem, url, writer):
    async with sem:
        row = {"url": url, "status": None, "ok": False}
        try:
            async with session.get(url) as resp:
                body = await resp.text(errors="replace")
                row.update(final_url=str(resp.url), status=resp.status,
                           ok=200 <= resp.status < 300)
        except (aiohttp.ClientError, asyncio.TimeoutError):
            body = None
    if body:
        row.update(extract(body, row["final_url"]))
    writer.writerow(row)
    return row["ok"]


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-c", type=int, default=20)
    ap.add_argument("out")
    args = ap.parse_args()
    urls = [line.strip() for line in sys.stdin if line.strip()]
    sem = asyncio.Semaphore(args.c)
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, COLUMNS)
        writer.writeheader()
        async with aiohttp.ClientSession() as session:
            results = await asyncio.gather(*(scrape(session, sem, u, writer) for u in urls))
    return 0 if all(results) else 3


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
