#!/usr/bin/env python3
"""Turns public GPU cluster traces into the hourly CSVs forecast_compare.py reads.

    python3 benches/forecast_traces.py helios EARTH_VCS_DIR OUT.csv [--skip vc8Sj,vcMod,...]
    python3 benches/forecast_traces.py philly philly_node_sequence.csv OUT.csv
    python3 benches/forecast_traces.py alibaba-spot MODELS.csv TOTAL.csv OUT.csv

Nothing is downloaded and no data goes into the repository: point it at
copies of the traces (docs/benchmarks.md says where each comes from).

helios: `EARTH_VCS_DIR/<vc>/cluster_sequence_vc.csv` of the Helios artifact
(minute samples per virtual cluster). Demand is running + pending GPUs, the
mean of each hour's minutes. An hour in which no virtual cluster of the
cluster reports a single job is a collector outage and is left empty (a gap,
not a zero). Columns: timestamp, series, running_gpus, pending_gpus,
capacity_gpus (as ../shared/data/helios-earth-4vc-hourly.csv).

philly: `philly_node_sequence.csv` (minute samples of active and total nodes
of Microsoft's Philly cluster). Hourly means; an hour with fewer than 30
samples is a gap. Columns: timestamp, series, active, total.

alibaba-spot: the hourly GPU concurrency per GPU model and in total of
Alibaba's spot GPU trace (columns `hour` and one per model; `hour` and
`gpus_active_requested`). Hours count from the trace's start, put on a grid
from 2024-01-01 (the weekday is unknown; daily and weekly cycles keep their
phase). Columns: timestamp, series, gpus.
"""

import argparse
import collections
import csv
import datetime
import os


def helios(src, out, skip):
    vcs = sorted(d for d in os.listdir(src) if os.path.isfile(os.path.join(src, d, "cluster_sequence_vc.csv")))
    hours = {}
    busy = collections.defaultdict(bool)
    for vc in vcs:
        by_hour = collections.defaultdict(list)
        with open(os.path.join(src, vc, "cluster_sequence_vc.csv"), newline="") as fh:
            for row in csv.DictReader(fh):
                key = row["time"][:13]
                by_hour[key].append(row)
                if row["total_job_num"] != "0":
                    busy[key] = True
        hours[vc] = by_hour
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["timestamp", "series", "running_gpus", "pending_gpus", "capacity_gpus"])
        for vc in vcs:
            if vc in skip:
                continue
            for key in sorted(hours[vc]):
                ts = key.replace(" ", "T") + ":00:00Z"
                rows = hours[vc][key]
                if not busy[key]:
                    w.writerow([ts, f"helios-earth/{vc}", "", "", ""])
                    continue

                def mean(col):
                    return round(sum(float(r[col]) for r in rows) / len(rows), 2)
                w.writerow([ts, f"helios-earth/{vc}", mean("running_gpu_num"), mean("pending_gpu_num"),
                            mean("total_gpu_num")])


def philly(src, out):
    by_hour = collections.defaultdict(list)
    with open(src, newline="") as fh:
        for row in csv.DictReader(fh):
            by_hour[row["time"][:13]].append(row)
    keys = sorted(by_hour)
    t = datetime.datetime.fromisoformat(keys[0] + ":00")
    end = datetime.datetime.fromisoformat(keys[-1] + ":00")
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["timestamp", "series", "active", "total"])
        while t <= end:
            rows = by_hour.get(t.strftime("%Y-%m-%d %H"), [])
            ts = t.strftime("%Y-%m-%dT%H:00:00Z")
            if len(rows) < 30:
                w.writerow([ts, "philly/active-nodes", "", ""])
            else:
                w.writerow([ts, "philly/active-nodes",
                            round(sum(float(r["active"]) for r in rows) / len(rows), 2),
                            round(sum(float(r["total"]) for r in rows) / len(rows), 2)])
            t += datetime.timedelta(hours=1)


def alibaba_spot(models, total, out):
    start = datetime.datetime(2024, 1, 1)
    with open(models, newline="") as fh:
        rows = list(csv.DictReader(fh))
    with open(total, newline="") as fh:
        totals = list(csv.DictReader(fh))
    names = [c for c in rows[0] if c != "hour"]
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["timestamp", "series", "gpus"])
        for name, src, col in [(n, rows, n) for n in names] + [("total", totals, "gpus_active_requested")]:
            for r in src:
                ts = (start + datetime.timedelta(hours=int(r["hour"]))).strftime("%Y-%m-%dT%H:00:00Z")
                w.writerow([ts, f"alibaba-spot/{name}", round(float(r[col]), 2)])


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="trace", required=True)
    h = sub.add_parser("helios")
    h.add_argument("dir")
    h.add_argument("out")
    h.add_argument("--skip", default="", help="virtual clusters to leave out, comma-separated")
    ph = sub.add_parser("philly")
    ph.add_argument("src")
    ph.add_argument("out")
    a = sub.add_parser("alibaba-spot")
    a.add_argument("models")
    a.add_argument("total")
    a.add_argument("out")
    args = p.parse_args()
    if args.trace == "helios":
        helios(args.dir, args.out, set(filter(None, args.skip.split(","))))
    elif args.trace == "philly":
        philly(args.src, args.out)
    else:
        alibaba_spot(args.models, args.total, args.out)


if __name__ == "__main__":
    main()
