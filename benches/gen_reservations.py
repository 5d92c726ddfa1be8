#!/usr/bin/env python3
"""A capacity repository with many cheap reservations, for timing the
commitment mix's search for reservations to keep (docs/benchmarks.md).

    python3 benches/gen_reservations.py OUT POOLS RESERVATIONS COUNT
    capops report OUT --at 2026-11-20 --format json

One cluster of POOLS pools of 8-GPU `g8` instances (on demand 80, 1-year
50 an instance-hour), each with RESERVATIONS unlocked reservations of COUNT
instances priced 30-48 an hour with staggered terms, and 90 days of hourly
usage of two teams per pool (a daily cycle around 50% of the pool).
Deterministic: the same arguments write the same files."""
import os, sys, datetime, math
out, P, N, C = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
H = "apiVersion: capops.dev/v1alpha1\n"
os.makedirs(out, exist_ok=True)
os.makedirs(f"{out}/usage", exist_ok=True)
w = lambda p, s: open(f"{out}/{p}", "w").write(s)
w("capops.yaml", H + "kind: Config\nmetadata: {name: t}\nspec: {}\n")
w("prices.yaml", H + "kind: PriceCatalog\nmetadata: {name: p}\nspec:\n  prices:\n    - {provider: aws, region: us-east-2, instanceType: g8, gpusPerInstance: 8, onDemand: 80, reserved1y: 50, source: test}\n")
nodes = N * C
pools = "".join(f"    - {{name: p{i}, gpuModel: h100-80gb-sxm, instanceType: g8, gpusPerNode: 8, nodes: {nodes}, purchase: {{reserved: {nodes}}}}}\n" for i in range(P))
w("cluster.yaml", H + f"kind: Cluster\nmetadata: {{name: c}}\nspec:\n  environment: research\n  provider: aws\n  region: us-east-2\n  nodePools:\n{pools}")
teams = []
for i in range(P):
    for t in range(2):
        teams.append(H + f"kind: Team\nmetadata: {{name: t{i}-{t}}}\nspec:\n  costCenter: CC-1\n  clusters:\n    c: {{namespace: t{i}-{t}}}\n")
w("teams.yaml", "---\n".join(teams))
res = []
base = datetime.datetime(2026, 11, 1)
for i in range(P):
    for j in range(N):
        start = base + datetime.timedelta(days=(j * 23 + i * 7) % 60)
        end = start + datetime.timedelta(days=45 + (j * 37 + i * 11) % 400)
        price = 30 + (j * 7 + i * 3) % 19
        res.append(H + f"kind: Reservation\nmetadata: {{name: r{i}-{j}}}\nspec:\n  provider: aws\n  type: aws-capacity-reservation\n  region: us-east-2\n  zone: us-east-2a\n  instanceType: g8\n  count: {C}\n  term: {{start: \"{start:%Y-%m-%dT%H:%M:%SZ}\", end: \"{end:%Y-%m-%dT%H:%M:%SZ}\"}}\n  hourlyPrice: {price}\n  covers: {{cluster: c, pool: p{i}}}\n")
w("reservations.yaml", "---\n".join(res))
now = datetime.datetime(2026, 11, 20)
lines = ["timestamp,cluster,pool,team,allocated_gpus,used_gpus"]
for h in range(90 * 24):
    t = now - datetime.timedelta(hours=90 * 24 - h)
    for i in range(P):
        cap = nodes * 8
        for k in range(2):
            a = cap * (0.2 + 0.1 * k) * (1 + 0.3 * math.sin(2 * math.pi * h / 24 + i)) 
            lines.append(f"{t:%Y-%m-%dT%H:%M:%SZ},c,p{i},t{i}-{k},{a:.2f},{a*0.7:.2f}")
w("usage/c.csv", "\n".join(lines) + "\n")
