#!/usr/bin/env python3
"""Scaling benchmark: every command at 10,000 and 100,000 requests, and long usage history.

Generates synthetic repositories with benches/gen_repo.py (requests / 20
teams, requests / 200 clusters: 10k -> 500 teams and 50 clusters, 100k ->
5,000 teams and 500 clusters), then runs a fresh process of `capops
validate`, `check`, `render` and `report` on each, several times, and prints
the median wall time, CPU time (user + system) and peak RSS of each, with the
growth factor from the smallest size to the largest (linear growth is the
size ratio: 10). These runs use no parse cache (`--no-cache`): every file
is read and parsed, as on a cold CI runner. It also times `check --base
HEAD` for a one-request change (the repository is a git repository of two
commits and one request is edited in the working tree) cold (an empty cache
folder each run: every file parsed, and the cache written) and warm (the
cache filled by one earlier run), and, with --history-days, `check` and
`report` on the smallest repository with that many days of hourly usage for
--history-teams teams.

    python3 benches/scale.py [--sizes 10000,100000] [--runs 3]
                             [--history-days 730] [--history-teams 500]
                             [--binary target/release/capops] [--work DIR]

Build first: cargo build --release.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benches"))
from validate import machine  # noqa: E402


def run(cmd):
    """Runs a command; returns (wall s, cpu s, peak RSS MiB, exit code)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            err.seek(0)
            tail = err.read().decode(errors="replace")[-2000:]
            sys.exit(f"{' '.join(cmd)} exited {code}:\n{tail}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, code


def median_run(cmd, runs):
    results = [run(cmd) for _ in range(runs)]
    results.sort(key=lambda r: r[0])
    return results[len(results) // 2]


def generate(out, requests, extra=()):
    teams, clusters = max(1, requests // 20), max(1, requests // 200)
    subprocess.run(
        [sys.executable, os.path.join(ROOT, "benches/gen_repo.py"), out,
         "--requests", str(requests), "--teams", str(teams), "--clusters", str(clusters), *extra],
        check=True,
    )
    return teams, clusters


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="10000,100000")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--history-days", type=int, default=730)
    p.add_argument("--history-teams", type=int, default=500)
    p.add_argument("--binary", default=os.path.join(ROOT, "target/release/capops"))
    p.add_argument("--work", default=None, help="folder for the generated repositories (kept)")
    a = p.parse_args()
    if not os.path.exists(a.binary):
        sys.exit(f"{a.binary} is missing: run cargo build --release first")
    work = a.work or tempfile.mkdtemp(prefix="capops-scale-")
    os.makedirs(work, exist_ok=True)
    sizes = [int(s) for s in a.sizes.split(",")]
    print(f"machine: {machine()}")
    print(f"binary: {a.binary}; median of {a.runs} runs; work folder {work}\n")
    table = {}
    for n in sizes:
        repo = os.path.join(work, f"repo-{n}")
        teams, clusters = generate(repo, n, ["--commits", "2"])
        out = os.path.join(work, f"render-{n}")
        cmds = {
            "validate": [a.binary, "validate", repo, "--no-cache"],
            "check": [a.binary, "check", repo, "--no-cache"],
            "render": [a.binary, "render", repo, "--out", out, "--no-cache"],
            "report": [a.binary, "report", repo, "--no-cache"],
        }
        for name, cmd in cmds.items():
            shutil.rmtree(out, ignore_errors=True)
            table[(name, n)] = median_run(cmd, a.runs)
        # One request changed in the working tree, judged against HEAD.
        path = os.path.join(repo, "requests", "req-00003.yaml")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace("nvidia.com/gpu: 8\n", "nvidia.com/gpu: 12\n", 1))
        base_cmd = [a.binary, "check", repo, "--base", "HEAD", "--cache-dir"]
        cold = []
        for i in range(a.runs):
            fresh = os.path.join(work, f"cache-cold-{n}-{i}")
            shutil.rmtree(fresh, ignore_errors=True)
            cold.append(run(base_cmd + [fresh]))
        cold.sort(key=lambda r: r[0])
        table[("check --base, one change, cold", n)] = cold[len(cold) // 2]
        warm = os.path.join(work, f"cache-warm-{n}")
        shutil.rmtree(warm, ignore_errors=True)
        run(base_cmd + [warm])
        table[("check --base, one change, warm", n)] = median_run(base_cmd + [warm], a.runs)
        print(f"{n} requests, {teams} teams, {clusters} clusters: done", file=sys.stderr)

    names = ["validate", "check", "render", "report", "check --base, one change, cold",
             "check --base, one change, warm"]
    head = "| command | " + " | ".join(f"{n:,} requests" for n in sizes)
    if len(sizes) > 1:
        head += f" | growth {sizes[0]:,} -> {sizes[-1]:,}"
    print(head + " |")
    print("| --- " * (len(sizes) + 1 + (len(sizes) > 1)) + "|")
    for name in names:
        cells = []
        for n in sizes:
            wall, cpu, rss, _ = table[(name, n)]
            cells.append(f"{wall:.2f} s wall, {cpu:.2f} s CPU, {rss:.0f} MiB")
        line = f"| `{name}` | " + " | ".join(cells)
        if len(sizes) > 1:
            w0, c0 = table[(name, sizes[0])][:2]
            w1, c1 = table[(name, sizes[-1])][:2]
            line += f" | {w1 / w0:.1f}x wall, {c1 / c0:.1f}x CPU"
        print(line + " |")

    if a.history_days > 0:
        n = sizes[0]
        repo = os.path.join(work, f"history-{n}")
        generate(repo, n, ["--usage-days", str(a.history_days), "--usage-teams", str(a.history_teams)])
        usage = os.path.join(repo, "usage")
        size = sum(os.path.getsize(os.path.join(usage, f)) for f in os.listdir(usage))
        rows = a.history_days * 24 * min(a.history_teams, max(1, n // 20))
        print(f"\nusage history: {a.history_days} days hourly, {a.history_teams} teams, "
              f"{rows:,} rows, {size / 2**20:.0f} MiB of CSV, with {n:,} requests")
        print("| command | wall | CPU | peak RSS |")
        print("| --- | --- | --- | --- |")
        for name in ["validate", "check", "report"]:
            # The generated history ends 2026-11-01: judged then, so that the
            # forecast horizon does not grow with the day the script runs.
            at = [] if name == "validate" else ["--at", "2026-11-01T00:00:00Z"]
            wall, cpu, rss, _ = median_run([a.binary, name, repo, "--no-cache", *at], a.runs)
            print(f"| `{name}` | {wall:.2f} s | {cpu:.2f} s | {rss:.0f} MiB |")


if __name__ == "__main__":
    main()
