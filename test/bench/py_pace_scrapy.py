"""The Scrapy competitor of the pace scenarios (issue 22), written the usual
way.

  bucket: fetch every URL of a list (duplicates allowed: dont_filter) with
          AutoThrottle on, its defaults otherwise (start delay 5 s, target
          concurrency 1), C concurrent requests in all and per domain; 429
          is retried as Scrapy does by default (twice).
  crawl:  a CrawlSpider from the seeds to DEPTH, following every link,
          robots.txt obeyed, DOWNLOAD_DELAY (not randomized, so the same
          spacing as sc-fetch --delay), one request at a time per origin, C
          in all.  Scrapy keys its per-domain slot by host name without
          the port; every origin of the bench is a host:port, so each
          request names its origin as download_slot (Scrapy's own way to
          choose the slot).  A JSONL item per page (url, status).

usage: py_pace_scrapy.py bucket -c C OUT.jsonl < urls
       py_pace_scrapy.py crawl -c C --delay SECS --depth N OUT.jsonl SEEDS"""
import argparse
import sys
from urllib.parse import urlsplit

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule

COMMON = {"LOG_LEVEL": "ERROR", "TELNETCONSOLE_ENABLED": False,
          "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7"}


def with_slot(request, _response=None):
    """The request's origin as its download slot (see the docstring)."""
    request.meta["download_slot"] = urlsplit(request.url).netloc
    return request


def bucket(args):
    urls = [line.strip() for line in sys.stdin if line.strip()]

    class BucketSpider(scrapy.Spider):
        name = "bucket"

        def start_requests(self):
            for u in urls:
                yield scrapy.Request(u, dont_filter=True)

        def parse(self, response):
            yield {"url": response.url, "status": response.status}

    return BucketSpider, {"AUTOTHROTTLE_ENABLED": True,
                          "CONCURRENT_REQUESTS": args.concurrency,
                          "CONCURRENT_REQUESTS_PER_DOMAIN": args.concurrency}


def crawl(args):
    with open(args.seeds) as fs:
        seeds = [line.strip() for line in fs if line.strip()]

    class HostsSpider(CrawlSpider):
        name = "hosts"
        rules = (Rule(LinkExtractor(), callback="parse_item", follow=True, process_request=with_slot),)

        def start_requests(self):
            for u in seeds:
                yield with_slot(scrapy.Request(u))

        def parse_start_url(self, response):
            return self.parse_item(response)

        def parse_item(self, response):
            yield {"url": response.url, "status": response.status}

    return HostsSpider, {"ROBOTSTXT_OBEY": True, "DOWNLOAD_DELAY": args.delay,
                         "RANDOMIZE_DOWNLOAD_DELAY": False, "DEPTH_LIMIT": args.depth,
                         "CONCURRENT_REQUESTS": args.concurrency, "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
                         "DOWNLOAD_TIMEOUT": args.timeout}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("bucket", "crawl"))
    ap.add_argument("-c", "--concurrency", type=int, default=8)
    ap.add_argument("--delay", type=float, default=0.25)
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("out")
    ap.add_argument("seeds", nargs="?")
    args = ap.parse_args()
    spider, settings = (bucket if args.mode == "bucket" else crawl)(args)
    settings.update(COMMON, FEEDS={args.out: {"format": "jsonlines", "encoding": "utf8"}})
    process = CrawlerProcess(settings=settings)
    process.crawl(spider)
    process.start()


if __name__ == "__main__":
    main()
