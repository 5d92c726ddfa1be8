#!/usr/bin/env python3
"""Times `capops check` (no base: everything judged) on the bundled example
with one usage file of N series, one row each, of teams the repository does
not have: the per-series cost of measuring, forecasting and budgeting usage.
Linear in N is the target (a search of every pool's teams for each team
made it quadratic before stop 42).

    cargo build --release
    python3 benches/usage_series.py            # --sizes 20000,40000,80000 --bin PATH
"""
import argparse, os, resource, shutil, subprocess, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "capops")


def repo(dest, n):
    shutil.copytree(os.path.join(ROOT, "examples", "acme"), dest)
    with open(os.path.join(dest, "usage", "extra.csv"), "w") as f:
        f.write("timestamp,cluster,pool,team,allocated_gpus,used_gpus\n")
        for i in range(n):
            f.write(f"2026-11-21T22:00:00Z,infer-l4,t4-batch,t{i},1,0.5\n")


def run(binary, path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(
        [binary, "check", "--at", "2026-11-22", "--no-cache", path],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - t
    # 0 or 1 is a judgement (the unknown teams are warnings).
    assert done.returncode in (0, 1), f"capops check exited {done.returncode}"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20000,40000,80000")
    ap.add_argument("--bin", default=BIN)
    a = ap.parse_args()
    print("usage series | wall | peak RSS (MiB, largest child so far)")
    for n in [int(s) for s in a.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "repo")
            repo(path, n)
            wall, rss = run(a.bin, path)
            print(f"{n} | {wall:.2f} s | {rss:.0f}")


if __name__ == "__main__":
    main()
