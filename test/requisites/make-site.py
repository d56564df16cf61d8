#!/usr/bin/env python3
"""make-site.py SRC DEST CDN: the requisites fixture site (test/requisites/site)
copied to DEST with @CDN@ made CDN (the asset host's origin), its images
drawn (PNGs of solid bands and stripes: a missing one shows in a screenshot)
and its web font copied from Debian's fonts-dejavu-core."""
import os
import shutil
import struct
import sys
import zlib

FONTS = ["/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf",
         "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"]


def png(path, w, h, pixel):
    """Writes a w x h RGB PNG whose pixel (x, y) is pixel(x, y)."""
    rows = b"".join(b"\0" + bytes(c for x in range(w) for c in pixel(x, y)) for y in range(h))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def main():
    src, dest, cdn = sys.argv[1:4]
    shutil.copytree(src, dest, dirs_exist_ok=True)
    for root, _, files in os.walk(dest):
        for name in files:
            if name.endswith((".html", ".css")):
                p = os.path.join(root, name)
                with open(p, encoding="utf-8") as f:
                    text = f.read()
                with open(p, "w", encoding="utf-8") as f:
                    f.write(text.replace("@CDN@", cdn))
    img = os.path.join(dest, "cdn", "img")
    png(f"{img}/icon.png", 16, 16, lambda x, y: (200, 0, 0))
    png(f"{img}/hero-1x.png", 320, 60, lambda x, y: (0, 90, 200) if (x // 20) % 2 else (250, 200, 0))
    png(f"{img}/hero-2x.png", 640, 120, lambda x, y: (0, 90, 200) if (x // 40) % 2 else (250, 200, 0))
    png(f"{img}/wide.png", 640, 60, lambda x, y: (0, 160, 60))
    png(f"{img}/narrow.png", 320, 30, lambda x, y: (0, 160, 60) if y < 15 else (120, 0, 120))
    png(f"{img}/header.png", 48, 48, lambda x, y: (255, 120, 0) if (x + y) % 12 < 6 else (34, 34, 68))
    png(f"{img}/tile.png", 24, 24, lambda x, y: (230, 230, 230) if (x < 12) == (y < 12) else (200, 215, 235))
    png(os.path.join(dest, "cdn", "private", "hidden.png"), 10, 10, lambda x, y: (0, 0, 0))
    png(os.path.join(dest, "img", "band.png"), 8, 24, lambda x, y: (255, 0, 128) if y < 12 else (0, 200, 200))
    png(os.path.join(dest, "img", "dot.png"), 16, 16, lambda x, y: (0, 0, 0) if (x - 8) ** 2 + (y - 8) ** 2 < 30 else (255, 255, 255))
    font = next((f for f in FONTS if os.path.exists(f)), None)
    if not font:
        sys.exit("make-site.py: no DejaVu font (Debian's fonts-dejavu-core) to serve as the web font")
    os.makedirs(os.path.join(dest, "cdn", "fonts"), exist_ok=True)
    shutil.copy(font, os.path.join(dest, "cdn", "fonts", "fixture.ttf"))


main()
