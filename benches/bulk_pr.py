#!/usr/bin/env python3
"""Times `capops check --base` on a pull request that adds N one-GPU
requests of one team to one pool of the bundled example: the cost per
request of the facts that look at the team's other requests there (its
priority before the change). Linear in N is the target; before 6cb40e2's
successor each request looked at all the others.

    cargo build --release
    python3 benches/bulk_pr.py                 # --sizes 5000,10000,20000 --runs 1 --bin PATH
    python3 benches/bulk_pr.py --covered       # the base holds a window covering every piece

With --covered the base already holds a year-long request of the team in the
pool, covering every piece whole: each piece's run is joined again without
that window (one join for all of them, since stop 42; one each before).
"""
import argparse, datetime, json, os, resource, shutil, subprocess, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "capops")


def git(path, *args):
    subprocess.run(["git", "-C", path, *args], check=True, stdout=subprocess.DEVNULL)


HELD = (
    "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: held-year\n"
    "spec:\n  team: devex\n  cluster: infer-l4\n  pool: t4-batch\n  resources:\n"
    "    nvidia.com/gpu: 1\n  window: {start: 2026-12-01, end: 2028-03-01}\n"
    "  workloadClass: development\n  priorityClass: development\n  preemptible: true\n"
    "  justification: held\n"
)


def repo(dest, n, covered=False):
    shutil.copytree(os.path.join(ROOT, "examples", "acme"), dest)
    if covered:
        with open(os.path.join(dest, "requests", "held.yaml"), "w") as f:
            f.write(HELD)
    git(dest, "init", "-q")
    git(dest, "-c", "user.name=b", "-c", "user.email=b@example.com", "add", "-A")
    git(dest, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "base")
    docs = []
    for i in range(n):
        start = datetime.date(2027, 1, 1) + datetime.timedelta(days=i % 300)
        end = start + datetime.timedelta(days=7 + i % 20)
        docs.append(
            f"apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: bulk-{i}\n"
            f"spec:\n  team: devex\n  cluster: infer-l4\n  pool: t4-batch\n  resources:\n"
            f"    nvidia.com/gpu: 1\n  window: {{start: {start}, end: {end}}}\n"
            f"  workloadClass: development\n  priorityClass: development\n  preemptible: true\n"
            f"  justification: bulk\n"
        )
    # Files of at most 5,000 documents, as a generator would write them.
    for k in range(0, n, 5000):
        with open(os.path.join(dest, "requests", f"bulk{k // 5000}.yaml"), "w") as f:
            f.write("---\n".join(docs[k:k + 5000]))
    git(dest, "-c", "user.name=b", "-c", "user.email=b@example.com", "add", "-A")
    git(dest, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "head")


def run(binary, path, n):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(
        [binary, "check", "--base", "HEAD~1", "--at", "2026-11-28T06:00:00Z", "--format", "json", path],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    # Every request judged (exit 2 is the team over its quota, reported
    # beside the decisions); anything else timed a refusal, not the work.
    judged = len(json.loads(done.stdout or b"{}").get("decisions", []))
    assert judged >= n, f"capops check exited {done.returncode} with {judged} decisions"
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="5000,10000,20000")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--bin", default=BIN)
    ap.add_argument("--covered", action="store_true")
    a = ap.parse_args()
    print("requests added | wall (best) | CPU | peak RSS (MiB, largest child so far)")
    for n in [int(s) for s in a.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "repo")
            repo(path, n, a.covered)
            best = min((run(a.bin, path, n) for _ in range(a.runs)), key=lambda r: r[0])
            print(f"{n} | {best[0]:.2f} s | {best[1]:.2f} s | {best[2]:.0f}")


if __name__ == "__main__":
    main()
