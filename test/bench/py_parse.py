"""Parses fetch records (NDJSON on stdin) with lxml.html or BeautifulSoup
(html.parser) and writes one record per input record, with the fields
sc-parse extracts by default (title, description,
canonical, lang, the first h1, the distinct absolute links without
fragments), as a Python user would write it.
-j N spreads the records over N processes (multiprocessing.Pool, in order).

usage: py_parse.py --parser lxml|bs4 [-j N] < fetch.jsonl > parsed.jsonl"""
import argparse
import json
import sys
from multiprocessing import Pool
from urllib.parse import urldefrag, urljoin

PARSER = "lxml"


def fields_lxml(html, base):
    import lxml.html
    doc = lxml.html.document_fromstring(html)
    title = doc.findtext(".//title")
    desc = doc.xpath('string(//meta[@name="description"]/@content)') or None
    canonical = doc.xpath('string(//link[@rel="canonical"]/@href)')
    h1 = next(doc.iter("h1"), None)
    links = dict.fromkeys(urldefrag(urljoin(base, a.get("href")))[0]
                          for a in doc.iter("a") if a.get("href"))
    return {"title": title.strip() if title else None, "description": desc,
            "canonical": urljoin(base, canonical) if canonical else None,
            "lang": doc.get("lang"),
            "h1": " ".join(h1.text_content().split()) if h1 is not None else None,
            "links": list(links)}


def fields_bs4(html, base):
    from bs4 import BeautifulSoup
    soup = BeautifulSoup(html, "html.parser")
    meta = soup.find("meta", attrs={"name": "description"})
    canonical = soup.find("link", rel="canonical", href=True)
    html = soup.find("html")
    return {"title": soup.title.get_text(strip=True) if soup.title else None,
            "description": meta.get("content") if meta else None,
            "canonical": urljoin(base, canonical["href"]) if canonical else None,
            "lang": html.get("lang") if html else None,
            "h1": " ".join(soup.h1.get_text().split()) if soup.h1 else None,
            "links": list(dict.fromkeys(urldefrag(urljoin(base, a["href"]))[0]
                                        for a in soup.find_all("a", href=True)))}


def parse_line(line):
    rec = json.loads(line)
    body = rec.pop("body", None)
    if body is not None:
        base = rec.get("final_url") or rec.get("url")
        rec.update(fields_lxml(body, base) if PARSER == "lxml" else fields_bs4(body, base))
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"


def init(parser):
    global PARSER
    PARSER = parser


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parser", choices=("lxml", "bs4"), default="lxml")
    ap.add_argument("-j", type=int, default=1)
    args = ap.parse_args()
    init(args.parser)
    lines = (line for line in sys.stdin if line.strip())
    out = sys.stdout
    if args.j == 1:
        for line in lines:
            out.write(parse_line(line))
    else:
        with Pool(args.j, initializer=init, initargs=(args.parser,)) as pool:
            for rec in pool.imap(parse_line, lines, chunksize=16):
                out.write(rec)


if __name__ == "__main__":
    main()
