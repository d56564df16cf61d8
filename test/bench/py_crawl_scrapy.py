"""The Scrapy competitor of bench scenario 9, written the usual way: a
CrawlSpider with one Rule following every link under the start URL's
directory, robots.txt obeyed, 8 concurrent requests, DEPTH_LIMIT, and a
JSONL feed with an item per page (url, status, title, links).

usage: py_crawl_scrapy.py [--depth N] [--concurrency N] OUT.jsonl START_URL"""
import argparse
import re
from urllib.parse import urlsplit

from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("out")
    ap.add_argument("start")
    args = ap.parse_args()
    prefix = args.start.rsplit("/", 1)[0] + "/"
    links = LinkExtractor(allow=[re.escape(prefix)])

    class DocsSpider(CrawlSpider):
        name = "docs"
        allowed_domains = [urlsplit(args.start).hostname]
        start_urls = [args.start]
        rules = (Rule(links, callback="parse_item", follow=True),)

        def parse_start_url(self, response):
            return self.parse_item(response)

        def parse_item(self, response):
            yield {"url": response.url, "status": response.status,
                   "title": response.css("title::text").get(),
                   "links": len(links.extract_links(response))}

    process = CrawlerProcess(settings={
        "ROBOTSTXT_OBEY": True,
        "CONCURRENT_REQUESTS": args.concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": args.concurrency,
        "DEPTH_LIMIT": args.depth,
        "FEEDS": {args.out: {"format": "jsonlines", "encoding": "utf8"}},
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    })
    process.crawl(DocsSpider)
    process.start()


if __name__ == "__main__":
    main()
