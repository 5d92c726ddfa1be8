#!/usr/bin/env python3
"""Benchmark `capops usage pull`: 90 days of hourly usage for 500 teams and 50
pools, pulled from a local Prometheus.

The script builds capops in release mode, writes a synthetic capacity
repository (5 clusters of 10 pools, 4 nodes of 8 GPUs each; 500 teams, each
with a pod in 2 pools of its cluster) and the matching kube-state-metrics and
dcgm-exporter history as OpenMetrics, one cluster at a time, backfills it with
`promtool tsdb create-blocks-from openmetrics`, starts Debian's `prometheus` on
a loopback port and times `capops usage pull`:

  full        90 days into an empty history (default chunkHours, 168)
  one chunk   the same with chunkHours 2160 (one query per measurement)
  daily       the last 24 hours after the rest is committed (the scheduled job)

Wall time is measured around each process; peak memory is its maximum
resident set size (wait4). The number of queries comes from the pull's JSON
summary. Samples are written every `60 / --samples-per-hour` minutes (a real
scrape is every 15-60 s) and Prometheus runs with a matching lookback, so the
numbers are right while the history stays small enough for this machine.

    python3 benches/usage_pull.py [--teams 500] [--clusters 5] [--pools-per-cluster 10]
                                  [--days 90] [--samples-per-hour 2] [--keep DIR]
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
END = 1_767_225_600  # 2026-01-01T00:00:00Z: the pull ends here


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def fleet(args):
    """(clusters, pools per cluster, teams): team t lives in cluster t % C and
    has a pod in two pools of it."""
    clusters = [f"c{c}" for c in range(args.clusters)]
    pools = [f"p{p}" for p in range(args.pools_per_cluster)]
    teams = []
    for t in range(args.teams):
        c = t % args.clusters
        k = t // args.clusters
        mine = sorted({k % len(pools), (k + 3) % len(pools)})
        teams.append((f"team-{t}", clusters[c], [pools[i] for i in mine], 1 + t % 2))
    return clusters, pools, teams


def repo(dir, args, clusters, pools, teams, chunk):
    write(
        f"{dir}/capops.yaml",
        "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {name: bench}\n"
        f"spec:\n  usage:\n    prometheus:\n      chunkHours: {chunk}\n      timeoutSeconds: 300\n",
    )
    for c in clusters:
        lines = [
            "apiVersion: capops.dev/v1alpha1",
            "kind: Cluster",
            f"metadata: {{name: {c}}}",
            "spec:",
            "  environment: production",
            "  provider: onprem",
            "  nodePools:",
        ]
        for p in pools:
            lines.append(
                f"    - {{name: {p}, gpuModel: a100-80gb, gpusPerNode: 8, nodes: 4, nodeLabels: {{bench/pool: {p}}}}}"
            )
        write(f"{dir}/clusters/{c}.yaml", "\n".join(lines) + "\n")
    for name, c, _, _ in teams:
        write(
            f"{dir}/teams/{name}.yaml",
            "apiVersion: capops.dev/v1alpha1\nkind: Team\n"
            f"metadata: {{name: {name}}}\nspec:\n  costCenter: CC\n  clusters:\n    {c}: {{namespace: {name}}}\n",
        )


def pods_of(cluster, pools, teams):
    """(namespace, pod, node, GPUs, index) of a cluster's pods."""
    mine = [t for t in teams if t[1] == cluster]
    out = []
    for i, (name, _, tpools, gpus) in enumerate(mine):
        for p in tpools:
            out.append((name, f"{name}-{p}", f"{cluster}-{p}-n{i % 4}", gpus, i))
    return out


def history(path, day, args, clusters, pools, teams):
    """OpenMetrics for one day of every cluster; returns the number of samples.
    One file per day: promtool reads its input once per 2-hour block it makes."""
    hours = args.days * 24
    step = 3600 // args.samples_per_hour
    start = END - hours * 3600
    times = [start + day * 86400 + i * step + 15 for i in range(24 * args.samples_per_hour)]
    n = 0

    def series(f, head, values=None):
        nonlocal n
        if values is None:
            f.write("".join(f"{head}{t}\n" for t in times))
        else:
            f.write("".join(f"{head[:-1]} {values(t)} {t}\n" for t in times))
        n += len(times)

    with open(path, "w", buffering=1 << 22) as f:
        f.write("# TYPE kube_node_labels gauge\n")
        for c in clusters:
            for p in pools:
                for k in range(4):
                    series(f, f'kube_node_labels{{cluster="{c}",node="{c}-{p}-n{k}",label_bench_pool="{p}"}} 1 ')
        f.write("# TYPE kube_pod_container_resource_requests gauge\n")
        for c in clusters:
            for ns, pod, node, gpus, _ in pods_of(c, pools, teams):
                series(
                    f,
                    f'kube_pod_container_resource_requests{{cluster="{c}",namespace="{ns}",pod="{pod}",'
                    f'container="main",node="{node}",resource="nvidia_com_gpu",unit="integer"}} {gpus} ',
                )
        f.write("# TYPE kube_pod_status_phase gauge\n")
        for c in clusters:
            for ns, pod, _, _, _ in pods_of(c, pools, teams):
                series(f, f'kube_pod_status_phase{{cluster="{c}",namespace="{ns}",pod="{pod}",phase="Running"}} 1 ')
        f.write("# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n")
        for c in clusters:
            for ns, pod, node, gpus, i in pods_of(c, pools, teams):
                for g in range(gpus):
                    series(
                        f,
                        f'DCGM_FI_PROF_GR_ENGINE_ACTIVE{{cluster="{c}",Hostname="{node}",gpu="{g}",'
                        f'UUID="GPU-{pod}-{g}",namespace="{ns}",pod="{pod}",container="main"}} ',
                        lambda t, i=i: f"{0.2 + 0.06 * ((i * 7 + (t - start) // 3600) % 10):.2f}",
                    )
        f.write("# EOF\n")
    return n


def blocks(data):
    return sum(1 for e in os.listdir(data) if len(e) == 26 and os.path.isdir(os.path.join(data, e)))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run_capops(capops, args):
    """Runs capops; returns (exit code, stdout, stderr, wall seconds, peak RSS in MiB, CPU seconds)
    of that process alone."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        p = subprocess.Popen([capops] + args, stdout=subprocess.PIPE, stderr=err)
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
        seconds = time.perf_counter() - started
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        cpu = usage.ru_utime + usage.ru_stime
        return p.returncode, out.decode(), err.read().decode(), seconds, usage.ru_maxrss / 1024, cpu


def stamp(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--teams", type=int, default=500)
    ap.add_argument("--clusters", type=int, default=5)
    ap.add_argument("--pools-per-cluster", type=int, default=10)
    ap.add_argument("--days", type=int, default=90)
    ap.add_argument("--samples-per-hour", type=int, default=2)
    ap.add_argument("--keep", help="work in this folder and keep it")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--capops", help="the binary to time (default: target/release/capops, built first)")
    args = ap.parse_args()

    capops = args.capops or os.path.join(ROOT, "target/release/capops")
    if not args.no_build and not args.capops:
        subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "capops"], cwd=ROOT, check=True)
    for tool in ("prometheus", "promtool"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found: run .ci/prometheus.sh")

    work = args.keep or tempfile.mkdtemp(prefix="capops-pull-bench-")
    os.makedirs(work, exist_ok=True)
    clusters, pools, teams = fleet(args)
    data = f"{work}/data"
    params = json.dumps({k: getattr(args, k) for k in
                         ("teams", "clusters", "pools_per_cluster", "days", "samples_per_hour")}, sort_keys=True)
    reuse = os.path.isdir(data) and os.path.exists(f"{work}/params.json") and \
        json.dumps(json.load(open(f"{work}/params.json")), sort_keys=True) == params
    if reuse:
        print(f"reusing the backfilled history in {data}", file=sys.stderr)
    else:
        shutil.rmtree(data, ignore_errors=True)
    samples = 0
    t0 = time.perf_counter()
    for day in ([] if reuse else range(args.days)):
        om = f"{work}/day.om"
        samples += history(om, day, args, clusters, pools, teams)
        subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", om, data],
                       check=True, stdout=subprocess.DEVNULL)
        os.remove(om)
    if not reuse:
        print(f"history: {samples:,} samples backfilled in {time.perf_counter() - t0:.0f} s "
              f"({blocks(data)} blocks)", file=sys.stderr)
        with open(f"{work}/params.json", "w") as f:
            f.write(params)

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    write(f"{work}/prometheus.yml", "scrape_configs: []\n")
    log = open(f"{work}/prometheus.log", "w")
    lookback = 60 // args.samples_per_hour
    prom = subprocess.Popen(
        ["prometheus", f"--config.file={work}/prometheus.yml", f"--storage.tsdb.path={data}",
         "--storage.tsdb.retention.time=100y", f"--web.listen-address=127.0.0.1:{port}",
         f"--query.lookback-delta={lookback}m"],
        stdout=subprocess.DEVNULL, stderr=log)
    try:
        for _ in range(600):
            if "Server is ready to receive web requests" in open(f"{work}/prometheus.log").read():
                break
            time.sleep(0.1)
        else:
            sys.exit("prometheus did not start; see " + f"{work}/prometheus.log")
        # Let Prometheus compact the backfilled 2-hour blocks first, as a long-running
        # server would have: stop when the block count has not changed for 150 s.
        t0, last, since = time.perf_counter(), -1, time.perf_counter()
        while not reuse and time.perf_counter() - since < 150 and time.perf_counter() - t0 < 1800:
            now = blocks(data)
            if now != last:
                last, since = now, time.perf_counter()
            time.sleep(5)
        if not reuse:
            print(f"compacted to {last} blocks in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        hours = args.days * 24
        results = []
        for label, chunk, steps in [
            ("full, chunkHours 168", 168, [(END - hours * 3600, END)]),
            ("full, chunkHours 2160", 2160, [(END - hours * 3600, END)]),
            ("daily (last 24 h)", 168, [(END - hours * 3600, END - 86400), (None, END)]),
        ]:
            r = f"{work}/repo"
            shutil.rmtree(r, ignore_errors=True)
            repo(r, args, clusters, pools, teams, chunk)
            for i, (frm, to) in enumerate(steps):
                cmd = ["usage", "pull", r, "--prometheus", url, "--to", stamp(to), "--format", "json"]
                if frm is not None:
                    cmd += ["--from", stamp(frm)]
                code, out, err, seconds, rss, cpu = run_capops(capops, cmd)
                if code != 0:
                    sys.exit(f"capops exited {code}: {err}")
                if i == len(steps) - 1:
                    s = json.loads(out)
                    rows = sum(c["added"] for c in s["clusters"])
                    series = sum(c["series"] for c in s["clusters"])
                    results.append((label, s["traffic"]["queries"], rows, series,
                                    s["traffic"]["bytes"] / 1e6, seconds, cpu, rss))
        usage = f"{work}/repo/usage"
        size = sum(os.path.getsize(f"{usage}/{f}") for f in os.listdir(usage))
        files = len(os.listdir(usage))
    finally:
        prom.terminate()
        prom.wait()
    print(f"{args.teams} teams, {args.clusters * args.pools_per_cluster} pools, {args.days} days; "
          f"usage CSV {size / 1e6:.1f} MB in {files} files")
    print("| pull | queries | rows written | series | answers | wall time | capops CPU | peak RSS |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for label, q, rows, series, mb, seconds, cpu, rss in results:
        print(f"| {label} | {q} | {rows:,} | {series:,} | {mb:.1f} MB | {seconds:.2f} s | {cpu:.2f} s | {rss:.0f} MiB |")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
