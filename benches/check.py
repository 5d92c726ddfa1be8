#!/usr/bin/env python3
"""Benchmarks of `capops check` and of policy evaluation against regorus.

1. `capops check` of a whole synthetic repository (10,000 requests, 500 teams,
   50 clusters), in both layouts: one file per document, and one file of
   requests per team.
2. `capops check --base HEAD` for a one-request change in the same repository
   with 100 commits of history.
3. Policy evaluation throughput: capops' compiled conditions against the same
   tiers and rules in Rego evaluated by regorus (benches/policy_eval.rs).

    python3 benches/check.py [--runs 7] [--requests N] [--skip-peer]
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
from validate import machine, timed  # noqa: E402


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def bench(label, cmd, runs):
    times, rss = [], 0.0
    for _ in range(runs):
        t, r, code, err = timed(cmd)
        if code not in (0, 1):
            print(err, file=sys.stderr)
            sys.exit(f"{label}: exit {code}")
        times.append(t)
        rss = max(rss, r)
    print(f"{label}: median {median(times):.3f} s (best {min(times):.3f}, worst {max(times):.3f}) over {runs} runs, peak RSS {rss:.0f} MiB")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--requests", type=int, default=10000)
    p.add_argument("--skip-peer", action="store_true")
    a = p.parse_args()
    print(f"machine: {machine()}")
    print(f"date: {time.strftime('%Y-%m-%d')}")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    capops = os.path.join(ROOT, "target", "release", "capops")
    work = tempfile.mkdtemp(prefix="capops-check-bench-")
    try:
        for layout in ["file-per-document", "file-per-team"]:
            repo = os.path.join(work, layout)
            subprocess.run([sys.executable, os.path.join(ROOT, "benches", "gen_repo.py"), repo,
                            "--requests", str(a.requests), "--commits", "100", "--layout", layout], check=True)
            files = sum(len(fs) for d, _, fs in os.walk(repo) if ".git" not in d)
            print(f"\n{layout}: {files} files, 100 commits")
            bench("  check (whole repository)", [capops, "check", "--at", "2026-11-22", "--fail-on", "never", repo], a.runs)
            # A one-request change in the working tree.
            target = os.path.join(repo, "requests", "req-05003.yaml" if layout == "file-per-document" else "team-0003.yaml")
            with open(target, encoding="utf-8") as f:
                text = f.read()
            with open(target, "w", encoding="utf-8") as f:
                f.write(text.replace("nvidia.com/gpu: 8\n", "nvidia.com/gpu: 12\n", 1))
            out = subprocess.run([capops, "check", "--base", "HEAD", "--at", "2026-11-22", "--format", "json", repo],
                                 capture_output=True, text=True)
            import json
            judged = [d["name"] for d in json.loads(out.stdout)["decisions"]]
            assert len(judged) == 1, judged
            bench(f"  check --base HEAD (one request changed: {judged[0]})",
                  [capops, "check", "--base", "HEAD", "--at", "2026-11-22", "--fail-on", "never", repo], a.runs)
        if not a.skip_peer:
            print("\npolicy evaluation, capops against regorus:")
            repo = os.path.join(work, "file-per-team")
            subprocess.run(["cargo", "bench", "--quiet", "--bench", "policy_eval", "--", repo], cwd=ROOT, check=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
