#!/usr/bin/env python3
"""Proposes a draw of the held-out rows of scenarios/data/published-training.json.

One random.Random(15); for each source in sorted order, random.sample over that source's
predicted row ids (sorted), k = round(n / 3). Exit 1 when a row's "held_out" differs from the
draw. The file keeps the rows held out when they were added (redrawing after results were seen
would let a change choose its test rows), so the check differs once a source has grown; use
--write only for a new data file.

    python3 scripts/held-out-draw.py [--write]
"""
import json
import pathlib
import random
import sys

PATH = pathlib.Path(__file__).resolve().parent.parent / "scenarios/data/published-training.json"


def draw(rows):
    rng = random.Random(15)
    held = set()
    for source in sorted({r["source"] for r in rows}):
        ids = sorted(r["id"] for r in rows if r["source"] == source and "scenario" in r)
        held |= set(rng.sample(ids, k=round(len(ids) / 3)))
    return held


def main():
    rows = json.loads(PATH.read_text())
    held = draw(rows)
    if "--write" in sys.argv:
        for r in rows:
            r["held_out"] = r["id"] in held
        PATH.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    wrong = [r["id"] for r in rows if r.get("held_out", False) != (r["id"] in held)]
    print("held out:", ", ".join(sorted(held)))
    if wrong:
        print("held_out differs from the draw:", ", ".join(wrong))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
