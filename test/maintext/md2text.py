#!/usr/bin/python3
"""The text of sc-parse's Markdown, by the rules of sc-parse(1), MAIN TEXT,
written independently of the C: reads records (NDJSON) on stdin, writes for
each one line "same" when its markdown's text equals its text, else the
record's url and the first line that differs."""
import json
import re
import sys

DELIM = re.compile(r"^(\|---)+\|$")
FENCE = re.compile(r"^(`{3,})")
LIST = re.compile(r"^( *)(- |\d+\. )")


def inline(s):
    out, i, n = [], 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\" and i + 1 < n and not s[i + 1].isalnum():
            out.append(s[i + 1])
            i += 2
        elif c == "`":
            k = i
            while k < n and s[k] == "`":
                k += 1
            ticks = s[i:k]
            end = s.find(ticks, k)
            code = s[k:end]
            if len(code) >= 2 and code[0] == " " and code[-1] == " " and "`" in (code[1], code[-2]):
                code = code[1:-1]
            out.append(code)
            i = end + len(ticks)
        elif c == "!" and s.startswith("![", i):
            i += 2
        elif c == "[" or c == "*":
            i += 1
        elif c == "]" and s.startswith("](", i):
            i = s.index(")", i) + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def text_of(md):
    lines, fence, indent, quotes = [], None, 0, 0
    for line in md.split("\n"):
        depth = 0
        while line.startswith(">") and (fence is None or depth < quotes):
            line = line[2:] if line.startswith("> ") else line[1:]
            depth += 1
        if fence:
            if line.strip(" ") == fence:
                fence = None
            else:
                lines.append(line[indent:])
            continue
        m = LIST.match(line)
        body = line[m.end():] if m else line.lstrip(" ")
        f = FENCE.match(body)
        if f:
            fence, indent, quotes = f.group(1), len(line) - len(body), depth
            continue
        if DELIM.match(body):
            continue
        if body.startswith("| ") and body.endswith(" |"):
            cells = re.split(r"(?<!\\) \| ", body[2:-2])
            lines.append("\t".join(inline(c) for c in cells))
            continue
        h = re.match(r"^#{1,6} ", body)
        lines.append(inline(body[h.end():] if h else body))
    return "\n".join(lines)


for raw in sys.stdin:
    rec = json.loads(raw)
    md, text = rec.get("markdown"), rec.get("text")
    if md is None or text is None:
        print("same" if md is None and text is None else f"{rec.get('url')}: one of them null")
        continue
    got = text_of(md)
    if got == text:
        print("same")
        continue
    a, b = got.split("\n"), text.split("\n")
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            print(f"{rec.get('url')}: line {k + 1}: {x!r} != {y!r}")
            break
    else:
        print(f"{rec.get('url')}: {len(a)} lines != {len(b)} lines")
