#!/usr/bin/env python3
"""Generate a synthetic capacity repository for benchmarks.

Deterministic: the same arguments always write the same files. One document
per file, grouped by kind in folders, so that single-schema validators such as
check-jsonschema can validate the very same files.

    python3 benches/gen_repo.py OUT [--requests 10000] [--teams 500] [--clusters 50]
                                    [--commits 0] [--layout file-per-document|file-per-team]
                                    [--usage-days 0] [--usage-teams 500]

The repository is valid and renders: pools are sized for the requests in
force, the production-inference pool has no spot capacity, every pool is
priced. With --usage-days D it also holds D days of hourly usage history
(usage/cluster-NNN.csv) for the first --usage-teams teams in one pool each,
ending at 2026-11-01.

With --commits N (N >= 1) the folder becomes a git repository whose history
has N commits: the first adds everything, each later one edits one request.
--layout file-per-team puts each team's requests in one file
(requests/team-NNNN.yaml), the way capacity repositories are usually kept.
"""

import argparse
import os
import shutil
import subprocess

H = "apiVersion: capops.dev/v1alpha1\n"
MODELS = [("h100-80gb-sxm", "p5.48xlarge", 8), ("a100-80gb", "p4de.24xlarge", 8), ("l4", "g6.xlarge", 1)]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def cluster_doc(c):
    name = f"cluster-{c:03d}"
    return name, H + f"""kind: Cluster
metadata:
  name: {name}
spec:
  environment: {["production", "staging", "research", "development"][c % 4]}
  provider: aws
  region: us-east-{1 + c % 2}
  kueue: {{enabled: true}}
  nodePools:
    - name: h100
      gpuModel: h100-80gb-sxm
      instanceType: p5.48xlarge
      gpusPerNode: 8
      nodes: 768
      purchase: {{reserved: 480, onDemand: 288}}
      nodeLabels: {{acme.ai/pool: h100}}
    - name: a100
      gpuModel: a100-80gb
      instanceType: p4de.24xlarge
      gpusPerNode: 8
      nodes: 768
      purchase: {{reserved: 480, onDemand: 192, spot: 96}}
      nodeLabels: {{acme.ai/pool: a100}}
    - name: h100-mig
      gpuModel: h100-80gb-sxm
      instanceType: p5.48xlarge
      gpusPerNode: 8
      nodes: 32
      nodeLabels: {{acme.ai/pool: h100-mig}}
      mig:
        layout: {{3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}}
    - name: l4
      gpuModel: l4
      instanceType: g6.xlarge
      gpusPerNode: 1
      nodes: 256
      nodeLabels: {{acme.ai/pool: l4}}
      timeSlicing: {{replicas: 4}}
"""


def team_clusters(t, clusters):
    return [(t * 7 + k * 13) % clusters for k in range(3)]


def team_doc(t, clusters):
    name = f"team-{t:04d}"
    lines = [H + f"""kind: Team
metadata:
  name: {name}
spec:
  displayName: Team {t}
  costCenter: CC-{1000 + t}
  leads: [lead-{t:04d}, acme/team-{t:04d}-leads]
  monthlyBudget: {50000 + (t % 20) * 10000}
  clusters:
"""]
    for c in sorted(set(team_clusters(t, clusters))):
        lines.append(f"""    cluster-{c:03d}:
      namespace: {name}
      quota:
        nvidia.com/gpu: 1000
        nvidia.com/mig-1g.10gb: 128
        nvidia.com/mig-2g.20gb: 64
""")
    return name, "".join(lines)


def request_doc(i, teams, clusters):
    t = i % teams
    team = f"team-{t:04d}"
    c = team_clusters(t, clusters)[i % 3]
    kind = i % 10
    sizes = [1, 2, 4, 8, 8, 16, 24, 32, 48, 64]
    start_month = 1 + (i * 7) % 12
    end_month = 1 + (start_month + 2 + i % 6) % 12
    end_year = 2027 if end_month > start_month else 2028
    if kind == 6:
        pool, resources = "h100-mig", "    nvidia.com/mig-1g.10gb: 4\n    nvidia.com/mig-2g.20gb: 2\n"
    elif kind == 7:
        pool, resources = "l4", f"    nvidia.com/gpu: {4 + i % 12}\n"
    else:
        pool, resources = ["h100", "a100"][i % 2], f"    nvidia.com/gpu: {sizes[kind]}\n"
    workload = ["inference", "training", "research", "development"][i % 4]
    return f"req-{i:05d}", H + f"""kind: CapacityRequest
metadata:
  name: req-{i:05d}
  labels: {{team: {team}}}
spec:
  team: {team}
  cluster: cluster-{c:03d}
  pool: {pool}
  resources:
{resources}  window: {{start: 2027-{start_month:02d}-01, end: {end_year}-{end_month:02d}-01}}
  workloadClass: {workload}
  priorityClass: {["production-inference", "scheduled-training", "research", "development"][i % 4]}
  preemptible: {"true" if workload == "research" else "false"}
  justification: Synthetic request {i} for team {t}, sized for the benchmark.
  successMetrics:
    - utilization above 60% over the window
  requestedBy: user-{i % 997}
"""


def write_usage(a):
    """Hourly usage, one series per team (in its first cluster's a100 pool),
    one CSV per cluster, ending at 2026-11-01T00:00:00Z."""
    import datetime
    end = datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc)
    hours = a.usage_days * 24
    start = end - datetime.timedelta(hours=hours)
    by_cluster = {}
    for t in range(min(a.usage_teams, a.teams)):
        c = team_clusters(t, a.clusters)[0]
        by_cluster.setdefault(c, []).append(t)
    os.makedirs(os.path.join(a.out, "usage"), exist_ok=True)
    for c, teams in sorted(by_cluster.items()):
        with open(os.path.join(a.out, "usage", f"cluster-{c:03d}.csv"), "w", encoding="utf-8") as f:
            f.write("timestamp,cluster,pool,team,allocated_gpus,used_gpus\n")
            for h in range(hours):
                ts = (start + datetime.timedelta(hours=h)).strftime("%Y-%m-%dT%H:%M:%SZ")
                for t in teams:
                    alloc = 16 + (t % 7) * 4 + (h % 24) // 6
                    used = round(alloc * (0.45 + 0.4 * ((h * 7 + t) % 24) / 24), 2)
                    f.write(f"{ts},cluster-{c:03d},a100,team-{t:04d},{alloc},{used}\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--requests", type=int, default=10000)
    p.add_argument("--teams", type=int, default=500)
    p.add_argument("--clusters", type=int, default=50)
    p.add_argument("--commits", type=int, default=0)
    p.add_argument("--layout", choices=["file-per-document", "file-per-team"], default="file-per-document")
    p.add_argument("--usage-days", type=int, default=0)
    p.add_argument("--usage-teams", type=int, default=500)
    a = p.parse_args()
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    write(os.path.join(a.out, "capops.yaml"), H + """kind: Config
metadata:
  name: synthetic
spec:
  roles:
    director: {teams: [acme/directors]}
    capacity-review: {teams: [acme/capacity-review]}
    vp: {users: [vp-eng]}
    platform-owner: {teams: [acme/gpu-platform]}
    finance: {teams: [acme/finops]}
  defaults:
    priorityClass: development
""")
    for name, value in [("production-inference", 1000000), ("scheduled-training", 100000), ("development", 1000), ("research", 100)]:
        write(os.path.join(a.out, "priorityclasses", f"{name}.yaml"),
              H + f"kind: PriorityClass\nmetadata:\n  name: {name}\nspec:\n  value: {value}\n")
    write(os.path.join(a.out, "prices", "aws.yaml"), H + """kind: PriceCatalog
metadata:
  name: synthetic-prices
spec:
  effective: 2026-01-01
  prices:
""" + "".join(f"""    - provider: aws
      region: us-east-{r}
      instanceType: {it}
      gpusPerInstance: {g}
      onDemand: {od}
      spot: {sp}
      reserved1y: {r1}
      reserved3y: {r3}
      source: synthetic benchmark price
""" for r in (1, 2) for it, g, od, sp, r1, r3 in [("p5.48xlarge", 8, 55.04, 25.75, 38.5, 27.5), ("p4de.24xlarge", 8, 27.45, 11.0, 19.2, 13.7), ("g6.xlarge", 1, 0.80, 0.32, 0.50, 0.34)]))
    for c in range(a.clusters):
        name, text = cluster_doc(c)
        write(os.path.join(a.out, "clusters", f"{name}.yaml"), text)
    for t in range(a.teams):
        name, text = team_doc(t, a.clusters)
        write(os.path.join(a.out, "teams", f"{name}.yaml"), text)
    grouped = {}
    for i in range(a.requests):
        name, text = request_doc(i, a.teams, a.clusters)
        if a.layout == "file-per-team":
            grouped.setdefault(f"team-{i % a.teams:04d}", []).append(text)
        else:
            write(os.path.join(a.out, "requests", f"{name}.yaml"), text)
    for team, texts in grouped.items():
        write(os.path.join(a.out, "requests", f"{team}.yaml"), "---\n".join(texts))
    if a.usage_days > 0:
        write_usage(a)
    if a.commits >= 1:
        git = lambda *args: subprocess.run(["git", "-C", a.out, *args], check=True, capture_output=True)
        git("init", "-q", "-b", "main")
        git("config", "user.email", "bench@capops.invalid")
        git("config", "user.name", "bench")
        git("add", "-A")
        git("commit", "-q", "-m", "initial capacity")
        for k in range(1, a.commits):
            if a.layout == "file-per-team":
                path = os.path.join(a.out, "requests", f"team-{k % a.teams:04d}.yaml")
            else:
                path = os.path.join(a.out, "requests", f"req-{k:05d}.yaml")
            with open(path, encoding="utf-8") as f:
                text = f.read()
            text = text.replace(f"Synthetic request {k} ", f"Synthetic request {k} (revision {k}) ", 1)
            write(path, text)
            git("commit", "-q", "-am", f"revise req-{k:05d}")


if __name__ == "__main__":
    main()
