#!/usr/bin/env python3
"""Turns public GPU cluster traces into the hourly CSVs forecast_compare.py reads.

    python3 benches/forecast_traces.py helios EARTH_VCS_DIR OUT.csv [--skip vc8Sj,vcMod,...]
    python3 benches/forecast_traces.py philly philly_node_sequence.csv OUT.csv
    python3 benches/forecast_traces.py alibaba-spot MODELS.csv TOTAL.csv OUT.csv
    python3 benches/forecast_traces.py alibaba-dlrm disaggregated_DLRM_trace.csv OUT.csv
    python3 benches/forecast_traces.py helios-venus cluster_throughput.csv OUT.csv
    python3 benches/forecast_traces.py alibaba-genai lora_request_trace.csv OUT.csv
    python3 benches/forecast_traces.py alibaba-openb openb_pod_list_default.csv OUT.csv
    python3 benches/forecast_traces.py msr-itp RAW_TRACES_DIR OUT.csv
    python3 benches/forecast_traces.py philly-vcs philly.csv OUT.csv

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

alibaba-dlrm: `cluster-trace-gpu-v2025/disaggregated_DLRM_trace.csv` of
alibaba/clusterdata (GPU-disaggregated recommendation serving, 31 days).
Each GPU instance (role HN) holds `gpu_request` GPUs from `scheduled_time`
(else `creation_time`; neither: from the trace's start) to `deletion_time`
(none: to the trace's end); the value is the exact time-weighted mean of
each hour (the last, partial hour over the part the trace covers). Series:
the whole fleet, and the five services averaging at least 20 GPUs whose
hourly values vary most. Times count from the trace's start, put on a grid
from 2024-01-01. Columns: timestamp, series, value.

helios-venus: `simulation/data/Venus/cluster_throughput.csv` of
S-Lab-System-Group/Lucid (10-minute bins that the Helios authors derived
from the Venus cluster's job log, local time UTC+8). GPU demand as it
arrives: the GPUs asked for by jobs submitted in each hour, and the GPUs
given to jobs started in each hour (sums of the hour's bins; an hour without
bins is a gap). Columns: timestamp, series, value.

alibaba-genai: `cluster-trace-v2026-GenAI/lora_request_trace.csv` of
alibaba/clusterdata (Stable Diffusion serving requests). GPUs busy if each
request holds one GPU from `gmt_create` for `exec_time_seconds`:
time-weighted hourly mean. A small serving sample (under 4 at its peak);
timestamps carry the trace's unknown anonymisation offset. Columns:
timestamp, series, value.

alibaba-openb: `cluster-trace-gpu-v2023/csv/openb_pod_list_default.csv` of
alibaba/clusterdata (ATC'23 "Beware of Fragmentation": 8,152 pods of a GPU
cluster). A scheduled pod holds `num_gpu` x `gpu_milli` / 1000 GPUs (shared
GPUs count their fraction) from `scheduled_time` to `deletion_time`. The
table lists only pods deleted after a cut-off (the earliest deletion, about
hour 2,768), so the level is complete only from that hour on: the series
starts at the first whole hour after it and ends with the last whole hour.
Times count from the trace's start, put on a grid from 2024-01-01. Columns:
timestamp, series, value.

msr-itp: `data/raw-traces.tar.gz` of microsoft/elasticflow-traces, unpacked
(`cluster01.csv` .. `cluster10.csv`: job_id, submission_time in seconds
from the collection's start, duration in seconds, num_gpu): deep-learning
training jobs of ten of Microsoft's internal ITP clusters, 2021-03-04 to
2021-05-03 (ElasticFlow, ASPLOS'23). No start times are given, so a job holds
`num_gpu` from its submission for its duration: GPUs demanded, time-weighted
hourly mean. The first two days after a cluster's first submission (jobs
submitted before the collection are missing) and the last three before its
last (only jobs finished in the window are listed) are cut, and the 57th day
ends every series. Kept: clusters with at least 21 days left, a mean of at
least 5 GPUs and at least 85% of hours above zero. Time zero is put at
2021-03-04T00:00Z (the README gives the date only). Columns: timestamp,
series, value.

philly-vcs: the Philly job table (ATC'19) that Pollux (OSDI'21) bundles,
`simulator/traces/philly.csv` of petuum/adaptdl, branch osdi21-artifact
(timestamp of submission, duration in seconds, num_gpus, cluster = the
virtual cluster): GPUs demanded per virtual cluster, each job holding its
GPUs from submission for its duration (no queueing delay in the table),
time-weighted hourly mean, 2017-10-01 to 2017-12-11 (the table thins out
after). Kept: virtual clusters with a mean of at least 5 GPUs and at least
90% of hours above zero. The cluster-wide total is left out (Philly's active
nodes are already in the comparison). Columns: timestamp, series, value.
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


def hourly_means(intervals, hours):
    """Exact time-weighted mean per hour of the sum of `(start, end, weight)`
    intervals (seconds from hour 0), over `hours` hours."""
    full = [0.0] * (hours + 1)  # difference array of whole hours covered
    part = [0.0] * hours  # seconds x weight in partly covered hours
    for start, end, weight in intervals:
        start, end = max(start, 0.0), min(end, hours * 3600.0)
        if end <= start:
            continue
        a, b = int(start // 3600), int(end // 3600)
        if a == b:
            part[a] += weight * (end - start)
            continue
        part[a] += weight * ((a + 1) * 3600 - start)
        full[a + 1] += weight
        full[b] -= weight
        if b < hours:
            part[b] += weight * (end - b * 3600)
    out, level = [], 0.0
    for k in range(hours):
        level += full[k]
        out.append(level + part[k] / 3600.0)
    return out


def fmt(v):
    return f"{v:.4f}".rstrip("0").rstrip(".")


def write_series(out, series, start):
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["timestamp", "series", "value"])
        for name, values in series:
            for k, v in enumerate(values):
                ts = (start + datetime.timedelta(hours=k)).strftime("%Y-%m-%dT%H:00:00Z")
                w.writerow([ts, name, "" if v is None else fmt(v)])


def alibaba_dlrm(src, out):
    def num(cell):
        return None if cell.strip() == "" else float(cell)
    with open(src, newline="") as fh:
        rows = list(csv.DictReader(fh))
    end_of_trace = max(t for r in rows for t in (num(r["creation_time"]), num(r["scheduled_time"]),
                                                  num(r["deletion_time"])) if t is not None)
    hours = int(-(-end_of_trace // 3600))
    by_app = collections.defaultdict(list)
    for r in rows:
        if r["role"] != "HN":
            continue
        start = num(r["scheduled_time"])
        start = num(r["creation_time"]) if start is None else start
        end = num(r["deletion_time"])
        by_app[r["app_name"]].append((-1.0 if start is None else start,
                                      end_of_trace if end is None else end, float(r["gpu_request"])))
    covered = (end_of_trace - (hours - 1) * 3600) / 3600

    def series(intervals):
        v = hourly_means(intervals, hours)
        if 0 < covered < 1:
            v[-1] /= covered
        return v

    fleet = series([i for app in by_app.values() for i in app])
    apps = {}
    for app, intervals in by_app.items():
        v = series(intervals)
        if sum(v) / len(v) >= 20:
            apps[app] = v

    def spread(v):
        m = sum(v) / len(v)
        return (sum((x - m) ** 2 for x in v) / len(v)) ** 0.5
    chosen = sorted(apps, key=lambda a: -spread(apps[a]))[:5]
    write_series(out, [("alibaba-dlrm2025/gpus-allocated", fleet)]
                 + [(f"alibaba-dlrm2025/{a.replace('_', '')}-gpus-allocated", apps[a]) for a in chosen],
                 datetime.datetime(2024, 1, 1))


def helios_venus(src, out):
    sums = collections.defaultdict(lambda: [0.0, 0.0])
    with open(src, newline="") as fh:
        for row in csv.DictReader(fh):
            local = datetime.datetime.fromisoformat(row["time"])
            hour = (local - datetime.timedelta(hours=8)).replace(minute=0, second=0)
            sums[hour][0] += float(row["submit_gpu_num"])
            sums[hour][1] += float(row["start_gpu_num"])
    first, last = min(sums), max(sums)
    n = int((last - first).total_seconds() // 3600) + 1
    grid = [sums.get(first + datetime.timedelta(hours=k)) for k in range(n)]
    write_series(out, [("helios-venus/gpus-requested-by-submitted-jobs", [g and g[0] for g in grid]),
                       ("helios-venus/gpus-allocated-to-started-jobs", [g and g[1] for g in grid])], first)


def alibaba_genai(src, out):
    with open(src, newline="") as fh:
        rows = [(datetime.datetime.fromisoformat(r["gmt_create"]), max(float(r["exec_time_seconds"] or 0), 0.0))
                for r in csv.DictReader(fh)]
    origin = min(t for t, _ in rows).replace(minute=0, second=0, microsecond=0)
    intervals = [((t - origin).total_seconds(), (t - origin).total_seconds() + e, 1.0) for t, e in rows]
    hours = int(-(-max(b for _, b, _ in intervals) // 3600))
    write_series(out, [("alibaba-genai2026/busy-gpu-equivalents", hourly_means(intervals, hours))], origin)


def alibaba_openb(src, out):
    with open(src, newline="") as fh:
        rows = list(csv.DictReader(fh))
    deleted = [float(r["deletion_time"]) for r in rows if r["deletion_time"].strip()]
    first = int(-(-min(deleted) // 3600))
    hours = int(max(deleted) // 3600)
    intervals = []
    for r in rows:
        gpus = float(r["num_gpu"] or 0) * float(r["gpu_milli"] or 0) / 1000
        if gpus <= 0 or not r["scheduled_time"].strip() or not r["deletion_time"].strip():
            continue
        intervals.append((float(r["scheduled_time"]), float(r["deletion_time"]), gpus))
    level = hourly_means(intervals, hours)[first:]
    write_series(out, [("alibaba-openb2023/gpus-allocated", level)],
                 datetime.datetime(2024, 1, 1) + datetime.timedelta(hours=first))


def jobs_demand(intervals, hours, name):
    """A job table's GPUs demanded per hour, and whether the series is kept:
    a mean of at least 5 GPUs and enough hours above zero."""
    v = hourly_means(intervals, hours)
    return v, sum(v) / len(v), sum(x > 0 for x in v) / len(v)


def msr_itp(src, out):
    series = []
    start = datetime.datetime(2021, 3, 4)
    for f in sorted(x for x in os.listdir(src) if x.startswith("cluster") and x.endswith(".csv")):
        with open(os.path.join(src, f), newline="") as fh:
            jobs = [(float(r["submission_time"]), float(r["duration"]), float(r["num_gpu"]))
                    for r in csv.DictReader(fh)]
        first_day = -(-min(s for s, _, _ in jobs) // 86400) + 2
        last_day = min(max(s for s, _, _ in jobs) // 86400 - 3, 57)
        hours = int((last_day - first_day) * 24)
        if hours < 21 * 24:
            continue
        origin = first_day * 86400
        v, mean, busy = jobs_demand([(s - origin, s + d - origin, g) for s, d, g in jobs], hours, f)
        if mean >= 5 and busy >= 0.85:
            series.append((f"msr-itp/{f[:-4]}-gpus-demanded", v, start + datetime.timedelta(days=first_day)))
    write_many(out, series)


def philly_vcs(src, out):
    origin, end = datetime.datetime(2017, 10, 1), datetime.datetime(2017, 12, 11)
    hours = int((end - origin).total_seconds() // 3600)
    by_vc = collections.defaultdict(list)
    with open(src, newline="") as fh:
        for r in csv.DictReader(fh):
            s = (datetime.datetime.fromisoformat(r["timestamp"]) - origin).total_seconds()
            by_vc[r["cluster"]].append((s, s + float(r["duration"]), float(r["num_gpus"])))
    series = []
    for vc in sorted(by_vc):
        v, mean, busy = jobs_demand(by_vc[vc], hours, vc)
        if mean >= 5 and busy >= 0.9:
            series.append((f"philly/{vc}-gpus-demanded", v, origin))
    write_many(out, series)


def write_many(out, series):
    with open(out, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["timestamp", "series", "value"])
        for name, values, start in series:
            for k, v in enumerate(values):
                ts = (start + datetime.timedelta(hours=k)).strftime("%Y-%m-%dT%H:00:00Z")
                w.writerow([ts, name, fmt(v)])


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
    for name in ["alibaba-dlrm", "helios-venus", "alibaba-genai", "alibaba-openb", "msr-itp", "philly-vcs"]:
        x = sub.add_parser(name)
        x.add_argument("src")
        x.add_argument("out")
    args = p.parse_args()
    if args.trace == "helios":
        helios(args.dir, args.out, set(filter(None, args.skip.split(","))))
    elif args.trace == "philly":
        philly(args.src, args.out)
    elif args.trace == "alibaba-spot":
        alibaba_spot(args.models, args.total, args.out)
    elif args.trace == "alibaba-dlrm":
        alibaba_dlrm(args.src, args.out)
    elif args.trace == "helios-venus":
        helios_venus(args.src, args.out)
    elif args.trace == "alibaba-genai":
        alibaba_genai(args.src, args.out)
    elif args.trace == "msr-itp":
        msr_itp(args.src, args.out)
    elif args.trace == "philly-vcs":
        philly_vcs(args.src, args.out)
    else:
        alibaba_openb(args.src, args.out)


if __name__ == "__main__":
    main()
