//! Sync speed: `plan` and `apply` for every cluster of a synthetic capacity
//! repository (by default the one of 50 clusters, 500 teams and 10,000
//! requests that `benches/gen_repo.py` writes), each cluster a fake API
//! server on loopback (tests/fake_kube), clusters planned four at a time as
//! `capops plan` does. Reports wall time and the API calls each cluster
//! took: on a cluster already in the desired state a plan is one list per
//! kind, whatever the number of objects.
//!
//!     python3 benches/gen_repo.py /tmp/synth
//!     cargo bench --bench sync_plan -- /tmp/synth [RUNS] [PARALLEL]

#[path = "../tests/fake_kube/mod.rs"]
mod fake_kube;

use capops::render::{self, templates::Templates};
use capops::sync::apply::{ApplyOptions, apply_cluster};
use capops::sync::client::Conn;
use capops::sync::desired::{self, Desired};
use capops::sync::plan::{Calls, ClusterPlan};
use capops::sync::run::{self, Quiet, Settings};
use fake_kube::FakeKube;
use std::time::Instant;

struct Cluster {
    name: String,
    fake: FakeKube,
    desired: Desired,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn calls_line(plans: &[Calls]) -> String {
    let stat = |f: &dyn Fn(&Calls) -> usize| {
        let mut v: Vec<usize> = plans.iter().map(f).collect();
        v.sort();
        format!("{}/{}/{}", v[0], v[v.len() / 2], v[v.len() - 1])
    };
    format!(
        "lists {}, gets {}, dry-runs {}, writes {} (min/median/max per cluster)",
        stat(&|c| c.lists),
        stat(&|c| c.gets),
        stat(&|c| c.dry_runs),
        stat(&|c| c.writes)
    )
}

async fn connect(clusters: &[Cluster]) -> Vec<Conn> {
    let mut out = Vec::new();
    for c in clusters {
        let client =
            kube::Client::try_from(kube::Config::new(c.fake.url().parse().unwrap())).unwrap();
        out.push(Conn::from_client(client, &c.fake.url()));
    }
    out
}

async fn plan_all(
    clusters: &[Cluster],
    conns: &[Conn],
    s: &Settings,
    parallel: usize,
) -> Vec<ClusterPlan> {
    let work: Vec<(&Cluster, &Conn)> = clusters.iter().zip(conns).collect();
    run::for_each_cluster(work, parallel, |(c, conn)| {
        let s = s.clone();
        async move { run::plan_cluster(conn, &c.name, None, &c.desired, &s, &Quiet).await }
    })
    .await
}

fn main() {
    let args: Vec<String> = std::env::args().filter(|a| a != "--bench").collect();
    let path = args.get(1).cloned().unwrap_or_else(|| "/tmp/synth".into());
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5);
    let parallel: usize = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(4);
    let head = capops::pipeline::validate_dir(std::path::Path::new(&path))
        .unwrap_or_else(|e| panic!("{path}: {e}; generate it with benches/gen_repo.py"));
    let mut diags = Vec::new();
    let templates = Templates::new(&[], &mut diags);
    let rendered = render::render(
        &head.repo,
        &templates,
        &render::Options {
            at: "2027-03-15".parse().unwrap(),
            revision: "bench".into(),
            clusters: None,
        },
    );
    let repository = "bench";
    let clusters: Vec<Cluster> = head
        .repo
        .clusters
        .keys()
        .map(|name| {
            let desired = desired::from_rendered(&rendered, name, repository);
            let fake = FakeKube::start();
            let mut ns: Vec<String> = desired
                .objects
                .iter()
                .filter_map(|o| o.target.namespace.clone())
                .collect();
            ns.sort();
            ns.dedup();
            fake.namespaces(&ns.iter().map(String::as_str).collect::<Vec<_>>());
            Cluster {
                name: name.to_string(),
                fake,
                desired,
            }
        })
        .collect();
    let objects: usize = clusters.iter().map(|c| c.desired.objects.len()).sum();
    println!(
        "{path}: {} clusters, {} teams, {} requests; {objects} objects to sync ({:.0} per cluster); {parallel} clusters at a time",
        clusters.len(),
        head.repo.teams.len(),
        head.repo.requests.len(),
        objects as f64 / clusters.len() as f64
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let s = Settings {
        repository: repository.into(),
        concurrency: 8,
        clusters: Vec::new(),
    };
    // 1. Empty clusters: every object is a create, each dry-run once.
    let mut times = Vec::new();
    let mut calls = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let plans = rt.block_on(async {
            let conns = connect(&clusters).await;
            plan_all(&clusters, &conns, &s, parallel).await
        });
        times.push(t.elapsed().as_secs_f64());
        assert!(
            plans.iter().all(|p| p.error.is_none()),
            "{:?}",
            plans.iter().find_map(|p| p.error.as_ref())
        );
        calls = plans.iter().map(|p| p.calls).collect();
    }
    println!(
        "plan, empty clusters:      median {:.3} s, best {:.3} s; {}",
        median(times.clone()),
        times.iter().copied().fold(f64::MAX, f64::min),
        calls_line(&calls)
    );
    // 2. Apply everything once.
    let t = Instant::now();
    let applied: Vec<usize> = rt.block_on(async {
        let conns = connect(&clusters).await;
        let plans = plan_all(&clusters, &conns, &s, parallel).await;
        let work: Vec<(&ClusterPlan, &Conn)> = plans.iter().zip(conns.iter()).collect();
        run::for_each_cluster(work, parallel, |(p, conn)| {
            let s = s.clone();
            async move {
                apply_cluster(conn, p, &ApplyOptions::default(), &s, &Quiet)
                    .await
                    .writes
            }
        })
        .await
    });
    println!(
        "apply (plan and write):    {:.3} s, {} writes",
        t.elapsed().as_secs_f64(),
        applied.iter().sum::<usize>()
    );
    // 3. In the desired state: one list per kind.
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let plans = rt.block_on(async {
            let conns = connect(&clusters).await;
            plan_all(&clusters, &conns, &s, parallel).await
        });
        times.push(t.elapsed().as_secs_f64());
        assert!(
            plans
                .iter()
                .all(|p| p.changes.is_empty() && p.nodes.is_empty()),
            "not in the desired state"
        );
        calls = plans.iter().map(|p| p.calls).collect();
    }
    println!(
        "plan, nothing to change:   median {:.3} s, best {:.3} s; {}",
        median(times.clone()),
        times.iter().copied().fold(f64::MAX, f64::min),
        calls_line(&calls)
    );
    // 4. One quota changed by hand in each cluster: one dry-run each.
    for c in &clusters {
        if let Some(rq) = c
            .desired
            .objects
            .iter()
            .find(|o| o.target.kind == "ResourceQuota")
        {
            let mut edit = rq.value.clone();
            edit["metadata"] =
                serde_json::json!({"name": rq.target.name, "namespace": rq.target.namespace});
            edit["spec"]["hard"] = serde_json::json!({"requests.nvidia.com/gpu": "999"});
            c.fake.apply_as("kubectl", &edit, true).unwrap();
        }
    }
    let t = Instant::now();
    let plans = rt.block_on(async {
        let conns = connect(&clusters).await;
        plan_all(&clusters, &conns, &s, parallel).await
    });
    let calls: Vec<Calls> = plans.iter().map(|p| p.calls).collect();
    println!(
        "plan, one edit per cluster: {:.3} s; {} conflicts; {}",
        t.elapsed().as_secs_f64(),
        plans.iter().map(|p| p.summary.conflict).sum::<usize>(),
        calls_line(&calls)
    );
}
