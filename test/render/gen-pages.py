#!/usr/bin/python3
"""Writes N pages that JavaScript builds, for the render benchmark.

    gen-pages.py N DIR     DIR/js/0.html ... DIR/js/(N-1).html, DIR/js/data/I.json

Each page is a shell (<div id="app"></div> and a script) whose script
fetches its JSON (a title, 20 paragraphs, links to the next 5 pages) and
builds the DOM from it, ending with <p id="done">JS-PAGE-I</p>: a wait
"selector:#done" is the moment the page is whole, and the shell alone
holds none of its text.  The same N gives the same bytes.
"""
import json
import os
import random
import sys

WORDS = ("render browser page script fetch crawl archive polite robots tab "
         "memory process pipe record shell chromium headless selector wait "
         "network idle scroll frame dialog").split()

SHELL = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>js page {i}</title></head>
<body><div id="app"></div>
<script>
fetch('data/{i}.json').then(r => r.json()).then(d => {{
  const app = document.getElementById('app');
  const h = document.createElement('h1');
  h.textContent = d.title;
  app.appendChild(h);
  for (const t of d.paragraphs) {{
    const p = document.createElement('p');
    p.className = 'para';
    p.textContent = t;
    app.appendChild(p);
  }}
  const ul = document.createElement('ul');
  for (const l of d.links) {{
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = l;
    a.textContent = l;
    li.appendChild(a);
    ul.appendChild(li);
  }}
  app.appendChild(ul);
  const done = document.createElement('p');
  done.id = 'done';
  done.textContent = d.marker;
  app.appendChild(done);
}});
</script></body></html>
"""


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen-pages.py N DIR")
    n, out = int(sys.argv[1]), os.path.join(sys.argv[2], "js")
    os.makedirs(os.path.join(out, "data"), exist_ok=True)
    for i in range(n):
        rnd = random.Random(i)
        data = {
            "title": "JS page %d" % i,
            "marker": "JS-PAGE-%d" % i,
            "paragraphs": [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(20, 60)))
                           for _ in range(20)],
            "links": ["%d.html" % ((i + k) % n) for k in range(1, 6)],
        }
        with open(os.path.join(out, "%d.html" % i), "w") as f:
            f.write(SHELL.format(i=i))
        with open(os.path.join(out, "data", "%d.json" % i), "w") as f:
            json.dump(data, f)
            f.write("\n")


if __name__ == "__main__":
    main()
