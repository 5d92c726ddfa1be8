#!/usr/bin/env python3
"""Times `capops check --base` on a pull request that edits N open-ended
one-GPU requests in one pool of the bundled example while the base holds R
back-to-back 3-day capacity blocks on another pool of the same cluster:
each request's window is priced piece by piece where those terms start and
end (2 R cuts), so the cost of pricing grows with N x R; each pool's price
at each cut is worked out once per cluster, not once per request and piece.

    cargo build --release
    python3 benches/priced_pieces.py              # --sizes 2000,10000 --reservations 0,200 --bin PATH
"""
import argparse, datetime, os, resource, shutil, subprocess, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git(path, *args):
    subprocess.run(["git", "-C", path, *args], check=True, stdout=subprocess.DEVNULL)


def blocks(n):
    d0 = datetime.date(2026, 12, 1)
    out = []
    for i in range(n):
        s = d0 + datetime.timedelta(days=3 * i)
        e = s + datetime.timedelta(days=3)
        out.append(
            f"---\napiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata:\n  name: block-{i}\n"
            f"spec:\n  provider: aws\n  type: aws-capacity-block\n  region: us-east-2\n  zone: us-east-2a\n"
            f"  instanceType: p4d.24xlarge\n  count: 1\n  term: {{start: \"{s}T00:00:00Z\", end: \"{e}T00:00:00Z\"}}\n"
            f"  hourlyPrice: 14.75\n  covers: {{cluster: train-a100, pool: a100-train}}\n"
        )
    return "".join(out)


def requests(n, tag):
    return "".join(
        f"---\napiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: sweep-{i}\n"
        f"spec:\n  team: research\n  cluster: train-a100\n  pool: a100-research\n  resources:\n"
        f"    nvidia.com/gpu: 1\n  workloadClass: research\n  priorityClass: research\n  preemptible: true\n"
        f"  justification: {tag}\n  successMetrics: [ok]\n"
        for i in range(n)
    )


def one(binary, n, r, work):
    repo = os.path.join(work, f"repo-{n}-{r}")
    shutil.copytree(os.path.join(ROOT, "examples", "acme"), repo)
    team = os.path.join(repo, "teams", "research.yaml")
    text = open(team).read()
    open(team, "w").write(text.replace("nvidia.com/gpu: 120", "nvidia.com/gpu: 1000000"))
    open(os.path.join(repo, "reservations", "blocks.yaml"), "w").write(blocks(r))
    open(os.path.join(repo, "requests", "sweep.yaml"), "w").write(requests(n, "the base"))
    git(repo, "init", "-q")
    git(repo, "-c", "user.email=b@b", "-c", "user.name=b", "add", "-A")
    git(repo, "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qm", "base")
    open(os.path.join(repo, "requests", "sweep.yaml"), "w").write(requests(n, "the pull request"))
    git(repo, "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-qam", "pr")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    p = subprocess.run(
        [binary, "check", "--base", "HEAD~1", "--at", "2026-11-22", "--format", "json", repo],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1, 2):
        raise SystemExit(f"exit {p.returncode}: {p.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2000,10000")
    ap.add_argument("--reservations", default="0,200")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "capops"))
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="capops-pieces-")
    try:
        print("| requests edited | reservations on the cluster | wall | CPU | peak RSS |")
        print("| --- | --- | --- | --- | --- |")
        for n in [int(x) for x in a.sizes.split(",")]:
            for r in [int(x) for x in a.reservations.split(",")]:
                wall, cpu, rss = one(a.bin, n, r, work)
                print(f"| {n:,} | {r} | {wall:.2f} s | {cpu:.2f} s | {rss:,.0f} MiB |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
