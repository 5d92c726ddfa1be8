#!/usr/bin/env python3
"""Deterministic generator of the example's usage history (usage/*.csv).

90 days of hourly samples, 2026-08-24T00:00Z to 2026-11-21T23:00Z, per
(cluster, pool, team): allocated and used GPUs, with daily and weekly cycles,
level shifts when big jobs start and stop, and two collector outages (empty
cells). The same code always writes the same bytes; `--check` verifies that
the committed files are what it writes.

Usage: python3 usage/generate.py [--check]   (from the example's root or anywhere)
"""

import math
import os
import sys
from datetime import datetime, timedelta, timezone

START = datetime(2026, 8, 24, tzinfo=timezone.utc)
HOURS = 90 * 24
HERE = os.path.dirname(os.path.abspath(__file__))


class Rng:
    """xorshift64*: tiny, fast and identical on every platform."""

    def __init__(self, seed):
        self.state = seed or 0x9E3779B97F4A7C15

    def next(self):
        x = self.state
        x ^= (x >> 12)
        x ^= (x << 25) & 0xFFFFFFFFFFFFFFFF
        x ^= (x >> 27)
        self.state = x
        return ((x * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF) / 2.0**64

    def normal(self):
        u1 = max(self.next(), 1e-12)
        u2 = self.next()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2 * math.pi * u2)


def outage(t):
    """A full day and six hours with no data from the collector."""
    if t.date() == datetime(2026, 10, 10).date():
        return True
    return t.date() == datetime(2026, 11, 3).date() and 6 <= t.hour < 12


def daily(t, peak_hour):
    return math.cos(2 * math.pi * (t.hour - peak_hour) / 24.0)


def weekend(t):
    return t.weekday() >= 5


def series():
    """(file, cluster, pool, team, seed, allocated(t, rng), used_share(t, rng))."""

    def serve_alloc(t, r):
        base = 36 + 5 * daily(t, 18) - (4 if weekend(t) else 0)
        if t >= datetime(2026, 11, 20, tzinfo=timezone.utc):
            base += 8  # the holiday peak starts
        return min(48, max(0, round(base + r.normal())))  # the pool has 48 GPUs

    def mig_alloc(t, r):
        return round(3.14 + 0.3 * daily(t, 17) + 0.1 * r.normal(), 2)

    def l4_alloc(t, r):
        base = 18 + 5 * daily(t, 19) - (3 if weekend(t) else 0)
        if t >= datetime(2026, 9, 15, tzinfo=timezone.utc):
            base += 4  # a new model moved to L4
        return max(0, round(base + 1.2 * r.normal()))

    def preview_alloc(t, r):
        if t < datetime(2026, 11, 1, tzinfo=timezone.utc):
            return 0
        return 2 if 8 <= t.hour < 20 and not weekend(t) else 1

    def ci_alloc(t, r):
        # Time-sliced T4s: 4 replicas per GPU; this is in whole GPUs.
        busy = 8 <= t.hour < 20 and not weekend(t)
        return round((1.75 if busy else 0.5) + 0.25 * abs(r.normal()), 2)

    def notebooks_alloc(t, r):
        return 1 if 9 <= t.hour < 21 and not weekend(t) else 0

    def train_alloc(t, r):
        # A fine-tuning baseline, plus a big run from mid-October that ends early November.
        base = 150
        if datetime(2026, 10, 15, tzinfo=timezone.utc) <= t < datetime(2026, 11, 6, tzinfo=timezone.utc):
            base = 214
        if t >= datetime(2026, 11, 16, tzinfo=timezone.utc):
            base = 158  # the eval sweep
        return max(0, round(base + 3 * r.normal()))

    def research_alloc(t, r):
        # Experiments start and stop: the level moves between plateaus.
        day = (t - START).days
        plateau = [64, 88, 72, 96, 80, 56, 84, 92, 76, 68, 88, 80, 72][(day // 7) % 13]
        return max(0, round(plateau + 2 * r.normal()))

    return [
        ("prod-h100.csv", "prod-h100", "h100-serve", "inference", 11, serve_alloc,
         lambda t, r: 0.74 + 0.08 * daily(t, 18) + 0.03 * r.normal()),
        ("prod-h100.csv", "prod-h100", "h100-mig", "inference", 12, mig_alloc,
         lambda t, r: 0.66 + 0.05 * daily(t, 17)),
        ("infer-l4.csv", "infer-l4", "l4-serve", "inference", 21, l4_alloc,
         lambda t, r: 0.64 + 0.1 * daily(t, 19) + 0.03 * r.normal()),
        ("infer-l4.csv", "infer-l4", "l4-serve", "devex", 22, preview_alloc,
         lambda t, r: 0.25),
        ("infer-l4.csv", "infer-l4", "t4-batch", "devex", 23, ci_alloc,
         lambda t, r: 0.3 + 0.05 * r.normal()),
        ("infer-l4.csv", "infer-l4", "t4-batch", "research", 24, notebooks_alloc,
         lambda t, r: 0.2),
        ("train-a100.csv", "train-a100", "a100-train", "training", 31, train_alloc,
         lambda t, r: 0.88 + 0.02 * r.normal()),
        ("train-a100.csv", "train-a100", "a100-research", "research", 32, research_alloc,
         lambda t, r: 0.34 + 0.04 * r.normal()),
    ]


def render():
    files = {}
    for name, cluster, pool, team, seed, alloc, share in series():
        rng = Rng(seed * 0x100000001B3)
        rows = files.setdefault(name, [])
        for h in range(HOURS):
            t = START + timedelta(hours=h)
            a = alloc(t, rng)
            s = min(1.0, max(0.0, share(t, rng)))
            stamp = t.strftime("%Y-%m-%dT%H:%M:%SZ")
            if outage(t):
                rows.append((stamp, cluster, pool, team, "", ""))
                continue
            used = round(a * s, 2)
            rows.append((stamp, cluster, pool, team, fmt(a), fmt(used)))
    out = {}
    for name, rows in files.items():
        rows.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
        lines = ["timestamp,cluster,pool,team,allocated_gpus,used_gpus"]
        lines += [",".join(r) for r in rows]
        out[name] = "\n".join(lines) + "\n"
    return out


def fmt(x):
    if isinstance(x, int) or float(x).is_integer():
        return str(int(x))
    return f"{x:.2f}".rstrip("0").rstrip(".")


def main():
    check = "--check" in sys.argv[1:]
    stale = []
    for name, text in sorted(render().items()):
        path = os.path.join(HERE, name)
        if check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(name)
            except FileNotFoundError:
                stale.append(name)
        else:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
    if stale:
        print("usage files differ from the generator: " + ", ".join(stale), file=sys.stderr)
        print("run: python3 examples/acme/usage/generate.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
