#!/usr/bin/env python3
"""Times `capops check` on the bundled example plus N one-GPU requests whose
windows span the whole calendar (2000-2099), against the same N with 30-day
windows: the cost of a request's window length in the demand facts.

    cargo build --release
    python3 benches/long_windows.py            # --sizes 3000,6000 --runs 3 --bin PATH
"""
import argparse, os, shutil, subprocess, tempfile, time, resource

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "capops")


def repo(dest, n, long):
    shutil.copytree(os.path.join(ROOT, "examples", "acme"), dest)
    docs = []
    for i in range(n):
        if long:
            # Each window a little different, as real ones are.
            start, end = f"2000-01-{1 + i % 28:02d}T00:00:00Z", f"2099-12-{1 + i % 28:02d}T00:00:00Z"
        else:
            start, end = "2026-12-01T00:00:00Z", "2026-12-31T00:00:00Z"
        docs.append(
            f"apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: r{i}\n"
            f"spec:\n  team: devex\n  cluster: infer-l4\n  pool: l4-serve\n  resources:\n"
            f"    nvidia.com/gpu: 1\n  window: {{start: \"{start}\", end: \"{end}\"}}\n"
            f"  workloadClass: development\n  priorityClass: development\n  justification: x\n"
        )
    with open(os.path.join(dest, "requests", "many.yaml"), "w") as f:
        f.write("---\n".join(docs))


def run(binary, path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([binary, "check", "--at", "2026-11-22", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_maxrss / 1024


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="3000,6000")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--bin", default=BIN, help="the capops binary (another build to compare)")
    a = p.parse_args()
    print("| requests | windows | check, s (median) |")
    print("| --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in a.sizes.split(",")]:
            for long in (False, True):
                d = os.path.join(tmp, f"r{n}{'l' if long else 's'}")
                repo(d, n, long)
                times = sorted(run(a.bin, d)[0] for _ in range(a.runs))
                print(f"| {n} | {'2000-2099' if long else '30 days'} | {times[len(times) // 2]:.2f} |")


if __name__ == "__main__":
    main()
