#!/usr/bin/env python3
"""Sums up a phase-profile timeline (`GPUMST_PROFILE_TIMELINE=1` with a build made with
`--features gpumst/phase-profile`) for the last call of a `--repeat` run: per thread and
span, how many, their total milliseconds, the first start and the last end, in ms from
the last call's start, and the median and longest span.

    GPUMST_PROFILE_TIMELINE=1 gpumst msf G.gmst --backend cuda --repeat 3 --devices 0,1 \\
        2> timeline.txt
    python3 tools/timeline_summary.py timeline.txt --marker "split: a range" --per-call 2

The last call starts at the `per-call`-th last span named `marker` (one per call on one
GPU, e.g. "gpu e2e: uploads issued"; one per device in a split, "split: a range").
"""

import argparse
import collections
import re
import sys

LINE = re.compile(r"timeline ThreadId\((\d+)\) ([\d.]+) ([\d.]+) (.*)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("timeline", help="the run's stderr")
    parser.add_argument("--marker", default="split: a range")
    parser.add_argument("--per-call", type=int, default=2)
    parser.add_argument(
        "--min-ms",
        type=float,
        default=0.05,
        help="leave out single spans shorter than this",
    )
    args = parser.parse_args()
    spans = []
    with open(args.timeline) as f:
        for line in f:
            m = LINE.match(line.strip())
            if m:
                spans.append((int(m[1]), float(m[2]), float(m[3]), m[4]))
    starts = sorted(s for _, s, _, name in spans if name == args.marker)
    if len(starts) < args.per_call:
        print(
            f"fewer than {args.per_call} spans named {args.marker!r}", file=sys.stderr
        )
        return 1
    begin = starts[-args.per_call]
    table = collections.OrderedDict()
    for thread, start, end, name in sorted(spans, key=lambda s: s[1]):
        if start < begin - 1e-3:
            continue
        row = table.setdefault((thread, name), [0, 0.0, start, end, []])
        row[0] += 1
        row[1] += end - start
        row[3] = max(row[3], end)
        row[4].append(end - start)
    for (thread, name), (count, total, first, last, each) in sorted(
        table.items(), key=lambda kv: (kv[0][0], kv[1][2])
    ):
        if count == 1 and total < args.min_ms:
            continue
        each.sort()
        print(
            f"T{thread:<4} {name:<45} x{count:<4} {total:8.2f} ms "
            f"{first - begin:8.2f} .. {last - begin:8.2f}  "
            f"median {each[len(each) // 2]:.3f} max {each[-1]:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
