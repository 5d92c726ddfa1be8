#!/usr/bin/env python3
"""Benchmark: `capops validate` on a synthetic repository, against check-jsonschema and Ajv.

Generates the repository with benches/gen_repo.py (10,000 requests, 500 teams,
50 clusters by default), runs a fresh `capops validate --no-cache` process
several times (wall time and peak RSS of each run; every file parsed), then
validates the very same files against capops' own schemas under schemas/ with
check-jsonschema (PyPI; one process per schema) and with Ajv 8 (npm; draft
2020-12, schemas compiled once, YAML parsed by the `yaml` package, one Node
process: benches/ajv_validate.mjs), and prints them with their ratios. The
peers check shape only.

    python3 benches/validate.py [--requests N] [--teams N] [--clusters N]
                                [--runs 5] [--peers check-jsonschema,ajv] [--keep DIR]

check-jsonschema is installed into a virtual environment under
target/bench-venv on first use (needs PyPI); Ajv and yaml under
target/bench-node (needs npm).
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEER = "check-jsonschema==0.39.0"
AJV = ["ajv@8.17.1", "yaml@2.8.1"]


def timed(cmd, cwd=None):
    """Runs a command; returns (seconds, peak RSS in MiB, exit code)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss / 1024.0, code, err


def machine():
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--requests", type=int, default=10000)
    p.add_argument("--teams", type=int, default=500)
    p.add_argument("--clusters", type=int, default=50)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--peers", default="check-jsonschema,ajv",
                   help="comma-separated: check-jsonschema, ajv; empty for none")
    p.add_argument("--skip-peer", action="store_true", help="same as --peers ''")
    p.add_argument("--keep", help="generate into this folder and keep it")
    a = p.parse_args()

    print(f"machine: {machine()}")
    print(f"date: {time.strftime('%Y-%m-%d')}")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    capops = os.path.join(ROOT, "target", "release", "capops")

    work = a.keep or tempfile.mkdtemp(prefix="capops-bench-")
    repo = os.path.join(work, "repo") if not a.keep else work
    subprocess.run([sys.executable, os.path.join(ROOT, "benches", "gen_repo.py"), repo,
                    "--requests", str(a.requests), "--teams", str(a.teams), "--clusters", str(a.clusters)], check=True)
    files = sum(len(fs) for _, _, fs in os.walk(repo))
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(repo) for f in fs)
    print(f"repository: {a.requests} requests, {a.teams} teams, {a.clusters} clusters; {files} files, {size / 1e6:.1f} MB")

    runs = []
    for i in range(a.runs):
        t, rss, code, err = timed([capops, "validate", repo, "--no-cache"])
        if code != 0:
            print(err, file=sys.stderr)
            sys.exit(f"capops validate exited {code}")
        runs.append((t, rss))
        print(f"  capops validate run {i + 1}: {t:.3f} s, {rss:.0f} MiB peak RSS")
    times = sorted(t for t, _ in runs)
    median = times[len(times) // 2]
    peak = max(r for _, r in runs)
    print(f"capops validate: first {runs[0][0]:.3f} s, median {median:.3f} s, best {times[0]:.3f} s, peak RSS {peak:.0f} MiB")

    peers = [] if a.skip_peer else [x for x in a.peers.split(",") if x]
    groups = [
        ("config.schema.json", [os.path.join(repo, "capops.yaml")]),
        ("priorityclass.schema.json", "priorityclasses"),
        ("cluster.schema.json", "clusters"),
        ("team.schema.json", "teams"),
        ("capacityrequest.schema.json", "requests"),
        ("pricecatalog.schema.json", "prices"),
    ]
    groups = [(schema, target if isinstance(target, list) else sorted(
        os.path.join(repo, target, f) for f in os.listdir(os.path.join(repo, target))))
        for schema, target in groups if isinstance(target, list) or os.path.isdir(os.path.join(repo, target))]

    if "ajv" in peers:
        node_dir = os.path.join(ROOT, "target", "bench-node")
        if not os.path.exists(os.path.join(node_dir, "node_modules", "ajv")):
            os.makedirs(node_dir, exist_ok=True)
            with open(os.path.join(node_dir, "package.json"), "w") as f:
                f.write('{"private": true}\n')
            subprocess.run(["npm", "install", "--silent", *AJV], cwd=node_dir, check=True)
        listing = os.path.join(work, "ajv-groups.json")
        with open(listing, "w") as f:
            json.dump(groups, f)
        env = dict(os.environ, NODE_PATH=os.path.join(node_dir, "node_modules"))
        start = time.perf_counter()
        proc = subprocess.Popen(["node", os.path.join(ROOT, "benches", "ajv_validate.mjs"),
                                 os.path.join(ROOT, "schemas"), listing],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out = proc.stdout.read().decode()
        err = proc.stderr.read().decode(errors="replace")
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"ajv exited {os.waitstatus_to_exitcode(status)}: {out} {err[-2000:]}")
        print(f"Ajv ({', '.join(AJV)}): {wall:.2f} s wall (process), {usage.ru_maxrss / 1024:.0f} MiB peak RSS; {out.strip()}")
        print(f"ratio: capops is {wall / median:.1f}x faster than Ajv (median run)")

    if "check-jsonschema" in peers:
        venv = os.path.join(ROOT, "target", "bench-venv")
        py = os.path.join(venv, "bin", "python")
        if not os.path.exists(os.path.join(venv, "bin", "check-jsonschema")):
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
            subprocess.run([py, "-m", "pip", "install", "--quiet", PEER], check=True)
        peer = os.path.join(venv, "bin", "check-jsonschema")
        total_t, total_rss = 0.0, 0.0
        for schema, paths in groups:
            # Invocations of at most 5,000 files (the argument list's limit).
            t = 0.0
            for i in range(0, len(paths), 5000):
                cmd = [peer, "--schemafile", os.path.join(ROOT, "schemas", schema), *paths[i:i + 5000]]
                ti, rss, code, err = timed(cmd)
                if code != 0:
                    print(err[-2000:], file=sys.stderr)
                    sys.exit(f"check-jsonschema exited {code} on {schema}")
                t += ti
                total_rss = max(total_rss, rss)
            total_t += t
            print(f"  check-jsonschema {schema}: {len(paths)} files, {t:.2f} s, {rss:.0f} MiB")
        print(f"check-jsonschema ({PEER}): {total_t:.2f} s, peak RSS {total_rss:.0f} MiB")
        print(f"ratio: capops is {total_t / median:.1f}x faster (median run), schema checks only for the peer")

    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
