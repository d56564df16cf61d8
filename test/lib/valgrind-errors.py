#!/usr/bin/env python3
"""valgrind-errors.py OBJECT FILE.xml: the errors of a valgrind XML report
(--xml=yes --xml-file=FILE.xml) with a frame, in any of their stacks, in
an object whose file name starts with OBJECT (libsc.so: libsc's own code;
a program's name: its own), one line each: the error's kind, what it says
and its first frames.  Prints nothing when there is none; exits 1 when
there is one, 2 when the report is not a finished valgrind report."""

import os
import sys
import xml.etree.ElementTree as ET


def frames(error):
    for stack in error.iter("stack"):
        for frame in stack.iter("frame"):
            yield frame


def where(frame):
    fn = frame.findtext("fn") or "???"
    f, line = frame.findtext("file"), frame.findtext("line")
    return f"{fn} ({f}:{line})" if f else f"{fn} ({os.path.basename(frame.findtext('obj') or '?')})"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: valgrind-errors.py OBJECT FILE.xml")
    prefix, path = sys.argv[1], sys.argv[2]
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"{path}: {e}")
        sys.exit(2)
    if root.find("status[state='FINISHED']") is None:
        print(f"{path}: the report is not finished (the run did not end)")
        sys.exit(2)
    found = 0
    for error in root.iter("error"):
        objs = {os.path.basename(f.findtext("obj") or "") for f in frames(error)}
        if not any(o.startswith(prefix) for o in objs):
            continue
        found += 1
        what = error.findtext("what") or error.findtext("xwhat/text") or ""
        top = "; ".join(where(f) for f in list(frames(error))[:4])
        print(f"{error.findtext('kind')}: {what}: {top}")
    sys.exit(1 if found else 0)


main()
