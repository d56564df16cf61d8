"""Generated inputs for the sc benchmarks: HTML pages of about 20 KB, the
fetch records sc-parse reads, the flat records sc-sink writes.

Everything is derived from a seeded PRNG, so every run (and every tool in a
run) sees the same bytes."""
import json
import os
import random

WORDS = ("scrape fetch parse sink record pipe shell curl request response "
         "header status body title link anchor table column value market "
         "price report river mountain garden window letter number system "
         "network server client cache index query result library history "
         "science journal weather travel music theatre kitchen recipe "
         "article summary review update release version module feature").split()
ACCENTED = ("café", "naïve", "façade", "Zürich", "São Paulo", "smörgåsbord",
            "東京", "Ελλάδα")


def _sentence(rng, n):
    words = [rng.choice(WORDS) for _ in range(n)]
    if rng.random() < 0.2:
        words[rng.randrange(n)] = rng.choice(ACCENTED)
    return " ".join(words).capitalize()


def make_page(i, target=20_000):
    """Page i: a plausible article page (head metadata, navigation, article
    with headings, paragraphs, inline links and a table, footer), padded with
    paragraphs until it reaches about `target` bytes of UTF-8."""
    rng = random.Random(i)
    title = f"{_sentence(rng, 6)} #{i}"
    desc = _sentence(rng, 18) + "."
    nav = "\n".join(
        f'      <li><a href="/p/{rng.randrange(1000)}.html">{rng.choice(WORDS).title()}</a></li>'
        for _ in range(25))
    head = f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{title}</title>
  <meta name="description" content="{desc}">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="canonical" href="https://example.com/p/{i}.html">
  <link rel="stylesheet" href="/static/site.css">
  <script>window.dataLayer = window.dataLayer || []; function gtag(){{dataLayer.push(arguments);}}</script>
</head>
<body class="article">
  <header><nav><ul>
{nav}
  </ul></nav></header>
  <main><article>
    <h1>{title}</h1>
    <p class="byline">By <a href="/authors/{rng.randrange(200)}">{rng.choice(WORDS).title()} {rng.choice(WORDS).title()}</a> &middot; <time datetime="2024-0{1 + i % 9}-1{i % 10}">2024</time></p>
"""
    tail = """  </article></main>
  <footer><p>&copy; 2024 Example &amp; Co. <a href="/about">About</a> <a href="/contact">Contact</a> <a href="https://example.org/privacy">Privacy</a></p></footer>
</body>
</html>
"""
    parts = [head]
    size = len(head.encode()) + len(tail.encode())
    section = 0
    while size < target:
        if rng.random() < 0.15:
            section += 1
            chunk = f"    <h2 id=\"s{section}\">{_sentence(rng, 4)}</h2>\n"
        elif rng.random() < 0.08:
            rows = "".join(
                f"<tr><td>{rng.choice(WORDS)}</td><td>{rng.randrange(10**6)}</td><td>{rng.random():.3f}</td></tr>"
                for _ in range(6))
            chunk = f"    <table><thead><tr><th>Name</th><th>Count</th><th>Share</th></tr></thead><tbody>{rows}</tbody></table>\n"
        else:
            sentences = []
            for _ in range(rng.randrange(3, 7)):
                s = _sentence(rng, rng.randrange(8, 20))
                if rng.random() < 0.35:
                    s += f' <a href="/p/{rng.randrange(1000)}.html?ref=in">{rng.choice(WORDS)}</a>'
                sentences.append(s + ".")
            chunk = "    <p>" + " ".join(sentences) + "</p>\n"
        parts.append(chunk)
        size += len(chunk.encode())
    parts.append(tail)
    return "".join(parts)


def write_corpus(www, pages):
    """Writes pages www/p/0.html .. www/p/(pages-1).html; returns total bytes."""
    os.makedirs(os.path.join(www, "p"), exist_ok=True)
    total = 0
    for i in range(pages):
        data = make_page(i).encode()
        total += len(data)
        with open(os.path.join(www, "p", f"{i}.html"), "wb") as f:
            f.write(data)
    return total


def write_urls(path, base, count, pages):
    """count URLs cycling over the corpus pages."""
    with open(path, "w") as f:
        for i in range(count):
            f.write(f"{base}/p/{i % pages}.html\n")


def write_same_url(path, url, count):
    with open(path, "w") as f:
        line = url + "\n"
        for _ in range(count):
            f.write(line)


def write_fetch_records(path, base, count, pages):
    """Fetch records as sc-fetch writes them (sc-record(5)), bodies from the
    corpus.  Returns the total size of the HTML bodies in bytes."""
    bodies = [make_page(i) for i in range(min(pages, count))]
    html_bytes = 0
    with open(path, "w", encoding="utf-8") as f:
        for i in range(count):
            body = bodies[i % len(bodies)]
            url = f"{base}/p/{i % pages}.html"
            n = len(body.encode())
            html_bytes += n
            rec = {"url": url, "final_url": url, "status": 200, "ok": True,
                   "content_type": "text/html", "bytes": n, "attempts": 1,
                   "elapsed_ms": 1.25, "fetched_at": "2024-05-01T12:00:00.000Z",
                   "body": body}
            f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    return html_bytes


SINK_FIELDS = ("url", "final_url", "status", "ok", "content_type", "bytes",
               "elapsed_ms", "fetched_at", "title", "description")


def write_sink_records(path, count):
    """Flat records like sc-parse's output: strings with commas, quotes and
    non-ASCII text, so that CSV quoting is exercised."""
    rng = random.Random(7)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(count):
            url = f"https://example.com/p/{i}.html"
            title = _sentence(rng, 6)
            if i % 5 == 0:
                title += ', "quoted", too'
            rec = {"url": url, "final_url": url, "status": 200, "ok": True,
                   "content_type": "text/html; charset=utf-8",
                   "bytes": 18000 + rng.randrange(4000),
                   "elapsed_ms": round(rng.random() * 200, 3),
                   "fetched_at": f"2024-05-01T12:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
                   "title": title, "description": _sentence(rng, 18) + "."}
            f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
