//! The document changes a rightsizing recommendation applies, in the units
//! the requests ask for: time-sliced replicas and MIG instances are worth a
//! share of a GPU, so releasing GPUs cuts more of them.

use super::tests::{CONFIG, at, repo_of, team, usage};
use super::tests_finops::catalog;
use super::*;

fn cluster(strategy: &str, pool: &str) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata: {{name: c}}\nspec:\n  environment: research\n  provider: aws\n  region: us-east-2\n  migStrategy: {strategy}\n  nodePools:\n    - {pool}\n"
    )
}

fn request(name: &str, resource: &str, count: u32) -> String {
    format!(
        "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata: {{name: {name}}}\nspec:\n  team: a\n  cluster: c\n  pool: p\n  resources: {{{resource}: {count}}}\n  workloadClass: training\n---\n"
    )
}

fn rightsize_changes(
    pool: &str,
    strategy: &str,
    requests: String,
    alloc: f64,
    used: f64,
) -> Vec<String> {
    let now = at("2026-11-22T00:00:00Z");
    let repo = repo_of(&[
        ("capops.yaml", CONFIG.into()),
        (
            "prices.yaml",
            catalog(
                "    - {provider: aws, region: us-east-2, instanceType: i1, gpusPerInstance: 1, onDemand: 2, source: test}\n    - {provider: aws, region: us-east-2, instanceType: p5.48xlarge, gpusPerInstance: 8, onDemand: 55.04, source: test}\n",
            ),
        ),
        ("cluster.yaml", cluster(strategy, pool)),
        ("team.yaml", team("a", None)),
        ("requests.yaml", requests),
        ("usage/c.csv", usage(now, 45, "p", "a", |_| alloc, |_| used)),
    ]);
    let a = Analysis::new(&repo, now);
    plan::recommendations(&a)
        .into_iter()
        .find(|r| r.kind == plan::RecommendationKind::RightsizeTeam)
        .map(|r| r.changes)
        .unwrap_or_default()
}

#[test]
fn a_time_sliced_pool_is_rightsized_in_replicas() {
    // 16 L4s, 4 replicas each: `ra` asks for 40 replicas, 10 GPUs. The team
    // uses 1 of its 10: at 70% it needs 2 (1 / 0.7 = 1.43, up to whole
    // GPUs), so it releases 8 GPUs, 32 replicas: 40 -> 8.
    let changes = rightsize_changes(
        "{name: p, gpuModel: l4, instanceType: i1, gpusPerNode: 1, nodes: 16, timeSlicing: {replicas: 4}}",
        "single",
        request("ra", "nvidia.com/gpu", 40),
        10.0,
        1.0,
    );
    assert_eq!(
        changes,
        vec!["CapacityRequest `ra`: nvidia.com/gpu 40 → 8".to_string()]
    );
}

#[test]
fn a_mig_pool_is_rightsized_in_instances_and_a_request_that_keeps_nothing_ends() {
    // 6 H100 nodes split 1g.10gb x 7: `ra` asks for 224 instances, 32 GPUs;
    // the team uses 3.2: at 70% it needs 5 (4.57 up), so it releases 27
    // GPUs, 189 instances: 224 -> 35.
    let pool = "{name: p, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 6, mig: {layout: {1g.10gb: 7}}}";
    let changes = rightsize_changes(
        pool,
        "mixed",
        request("ra", "nvidia.com/mig-1g.10gb", 224),
        32.0,
        3.2,
    );
    assert_eq!(
        changes,
        vec!["CapacityRequest `ra`: nvidia.com/mig-1g.10gb 224 → 35".to_string()]
    );
    // Two requests, 28 GPUs (196 instances) and 4 (28): the 27 GPUs come
    // from the larger first (189 of its 196), the smaller is left alone.
    let two = request("big", "nvidia.com/mig-1g.10gb", 196)
        + &request("small", "nvidia.com/mig-1g.10gb", 28);
    let changes = rightsize_changes(pool, "mixed", two, 32.0, 3.2);
    assert_eq!(
        changes,
        vec!["CapacityRequest `big`: nvidia.com/mig-1g.10gb 196 → 7".to_string()]
    );
    // A request smaller than what is released ends (a count of 0 is not a
    // request), and the rest comes from the next.
    let two = request("big", "nvidia.com/mig-1g.10gb", 112)
        + &request("mid", "nvidia.com/mig-1g.10gb", 112);
    let changes = rightsize_changes(pool, "mixed", two, 32.0, 3.2);
    assert_eq!(
        changes,
        vec![
            "CapacityRequest `big`: end it (releases 16 GPUs)".to_string(),
            "CapacityRequest `mid`: nvidia.com/mig-1g.10gb 112 → 35".to_string(),
        ]
    );
}
