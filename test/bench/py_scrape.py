"""The aiohttp scraper a competent Python user writes: a semaphore of C, one
task per URL, asyncio.gather, one JSON line per URL written to OUT.

usage: py_scrape.py [-c C] OUT < urls.txt   (exit 3 if any fetch failed)"""
import argparse
import asyncio
import json
import sys
import time
from datetime import datetime, timezone

import aiohttp


async def fetch(session, sem, url, out):
    async with sem:
        start = time.monotonic()
        rec = {"url": url}
        try:
            async with session.get(url) as resp:
                body = await resp.text(errors="replace")
                rec.update(final_url=str(resp.url), status=resp.status,
                           ok=200 <= resp.status < 300,
                           content_type=resp.headers.get("Content-Type"),
                           bytes=len(body.encode()), body=body)
        except (aiohttp.ClientError, asyncio.TimeoutError) as e:
            rec.update(status=None, ok=False,
                       error={"kind": type(e).__name__, "message": str(e)})
        rec["elapsed_ms"] = round((time.monotonic() - start) * 1000, 3)
        rec["fetched_at"] = datetime.now(timezone.utc).isoformat()
        out.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
        return rec["ok"]


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-c", type=int, default=20)
    ap.add_argument("out")
    args = ap.parse_args()
    urls = [line.strip() for line in sys.stdin if line.strip()]
    sem = asyncio.Semaphore(args.c)
    with open(args.out, "w", encoding="utf-8") as out:
        async with aiohttp.ClientSession() as session:
            results = await asyncio.gather(*(fetch(session, sem, u, out) for u in urls))
    return 0 if all(results) else 3


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
