//! The built facts have exactly the documented paths, and the right numbers.

use super::*;
use crate::policy::change::Change;
use std::collections::BTreeSet;

fn leaf_paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    use minijinja::value::ValueKind;
    if v.kind() == ValueKind::Map {
        // Map facts are leaves in the model.
        let is_fact_map = model().iter().any(|f| f.path == prefix && f.ty == "map");
        if !is_fact_map {
            for key in v.try_iter().unwrap() {
                let k = key.as_str().unwrap().to_string();
                let child = v.get_attr(&k).unwrap();
                let p = if prefix.is_empty() {
                    k
                } else {
                    format!("{prefix}.{k}")
                };
                leaf_paths(&child, &p, out);
            }
            return;
        }
    }
    out.push(prefix.to_string());
}

fn example() -> Repo {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/acme");
    crate::pipeline::validate_dir(&root).unwrap().repo
}

fn documented(kind: SubjectKind) -> BTreeSet<String> {
    model()
        .iter()
        .filter(|f| f.applies_to(kind))
        .map(|f| f.path.clone())
        .collect()
}

fn built(v: &Value) -> BTreeSet<String> {
    let mut out = Vec::new();
    leaf_paths(v, "", &mut out);
    out.into_iter().collect()
}

/// Runs `f` with the example repository and its facts environment at 2026-11-22.
fn with_example_env(f: impl FnOnce(&Repo, &Env<'_>)) {
    let repo = example();
    let ledger = Ledger::build(&repo);
    let config = repo.config_spec();
    let at = "2026-11-22".parse().unwrap();
    let analysis = crate::cost::Analysis::new(&repo, at);
    let env = Env {
        world: &repo,
        base: None,
        config: &config,
        ledger: &ledger,
        at,
        analysis: &analysis,
        aggregates: &Aggregates::default(),
        effects: &EffectFacts::default(),
        shared: &super::Shared::new(&repo, &config),
        author: None,
        co_authors: &[],
    };
    f(&repo, &env);
}

/// The builders produce exactly the documented facts, for every subject.
#[test]
fn builders_match_the_documented_fact_model() {
    with_example_env(|repo, env| {
        let change = Change::unchanged();
        let req = &repo.requests["inference-llm-serving"];
        assert_eq!(
            built(&values::value_of(&request(env, req, &change))),
            documented(SubjectKind::Request)
        );
        let res = &repo.reservations["a100-research-6mo"];
        assert_eq!(
            built(&values::value_of(&reservation(env, res, &change))),
            documented(SubjectKind::Reservation)
        );
        let t = &repo.teams["inference"];
        assert_eq!(
            built(&values::value_of(&team(env, t, &change))),
            documented(SubjectKind::Team)
        );
        assert_eq!(
            built(&values::value_of(&document(
                env,
                Kind::Config,
                "acme",
                &change
            ))),
            documented(SubjectKind::Document)
        );
    });
}

#[test]
fn request_facts_have_the_right_numbers() {
    with_example_env(|repo, env| {
        let change = Change::unchanged();
        let get = |v: &Value, p: &str| lookup(v, p).unwrap();
        // 14 x 1g.10gb + 4 x 2g.20gb on an H100: (14 + 8) / 7 GPUs.
        let mig = values::value_of(&request(
            env,
            &repo.requests["inference-small-models-mig"],
            &change,
        ));
        assert_eq!(f64::try_from(get(&mig, "request.gpus")).unwrap(), 3.1429);
        assert_eq!(i64::try_from(get(&mig, "request.units")).unwrap(), 18);
        // 6 time-sliced T4 replicas, 4 per GPU.
        let ts = values::value_of(&request(
            env,
            &repo.requests["inference-batch-embeddings"],
            &change,
        ));
        assert_eq!(f64::try_from(get(&ts, "request.gpus")).unwrap(), 1.5);
        assert!(get(&ts, "pool.spot").is_true());
        assert_eq!(i64::try_from(get(&ts, "pool.replicas")).unwrap(), 4);
        // The holiday peak brings inference to its 48-GPU quota in prod-h100, not over it;
        // in GPU-equivalents the team also holds its MIG slices there (3.14).
        let peak = values::value_of(&request(
            env,
            &repo.requests["inference-holiday-peak"],
            &change,
        ));
        assert_eq!(
            f64::try_from(get(&peak, "team.peak_gpus")).unwrap(),
            51.1429
        );
        assert_eq!(
            f64::try_from(get(&peak, "team.held_gpus")).unwrap(),
            35.1429
        );
        assert!(get(&peak, "team.within_quota").is_true());
        assert!(!get(&peak, "pool.overcommitted").is_true());
        // 32 GPUs for a year (2026-01-01 to 2027-01-01): 8760 hours.
        let base = values::value_of(&request(
            env,
            &repo.requests["inference-llm-serving"],
            &change,
        ));
        assert_eq!(
            i64::try_from(get(&base, "request.window.hours")).unwrap(),
            8760
        );
        assert_eq!(
            f64::try_from(get(&base, "request.gpu_hours")).unwrap(),
            32.0 * 8760.0
        );
        assert!(get(&base, "request.window.active").is_true());
        // The capacity block: 25 x p4d.24xlarge (8 GPUs) for 182 days at 14.75/h.
        let res = values::value_of(&reservation(
            env,
            &repo.reservations["a100-research-6mo"],
            &change,
        ));
        assert_eq!(f64::try_from(get(&res, "reservation.gpus")).unwrap(), 200.0);
        assert_eq!(
            i64::try_from(get(&res, "reservation.hours")).unwrap(),
            182 * 24
        );
        assert_eq!(
            f64::try_from(get(&res, "reservation.total_cost")).unwrap(),
            25.0 * 14.75 * 182.0 * 24.0
        );
    });
}

/// Every path of every subject's value tree (maps and their entries too).
fn all_paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    use minijinja::value::ValueKind;
    if !prefix.is_empty() {
        out.push(prefix.to_string());
    }
    if v.kind() == ValueKind::Map {
        for key in v.try_iter().unwrap() {
            let k = key.as_str().unwrap().to_string();
            let child = v.get_attr(&k).unwrap();
            let p = if prefix.is_empty() {
                k
            } else {
                format!("{prefix}.{k}")
            };
            all_paths(&child, &p, out);
        }
    }
}

/// A decision keeps typed facts and reads them by path: every path gives
/// what the value tree conditions see gives, and paths that lead nowhere
/// give nothing in both.
#[test]
fn typed_lookup_reads_what_the_value_tree_holds() {
    with_example_env(|repo, env| {
        let change = Change::unchanged();
        let mut subjects: Vec<Facts> = Vec::new();
        for r in repo.requests.values() {
            subjects.push(Facts::Request(Box::new(request(env, r, &change))));
        }
        for r in repo.reservations.values() {
            subjects.push(Facts::Reservation(Box::new(reservation(env, r, &change))));
        }
        for t in repo.teams.values() {
            subjects.push(Facts::Team(Box::new(team(env, t, &change))));
        }
        subjects.push(Facts::Document(Box::new(document(
            env,
            Kind::Config,
            "acme",
            &change,
        ))));
        let mut compared = 0;
        for facts in subjects {
            let tree = facts.to_value();
            let kept = Kept::Typed(std::sync::Arc::new(facts));
            let mut paths = Vec::new();
            all_paths(&tree, "", &mut paths);
            paths.extend(
                [
                    "nope",
                    "request.nope",
                    "request.name.more",
                    "team.leads.0",
                    "",
                ]
                .map(String::from),
            );
            for p in &paths {
                let want = values::lookup(&tree, p).map(|v| values::to_json(&v));
                let got = kept.lookup(p).map(|v| values::to_json(&v));
                assert_eq!(got, want, "path {p}");
                compared += 1;
            }
            assert_eq!(
                values::to_json(&kept.to_value()),
                values::to_json(&tree),
                "the kept facts rebuild the same tree"
            );
        }
        assert!(compared > 1000, "compared {compared} paths");
    });
}

/// A borrowing limit lowered counts the GPUs it takes; one set where there
/// was none counts from the cluster's capacity.
#[test]
fn borrowing_cuts_are_counted_in_gpus() {
    with_example_env(|repo, env| {
        let research = &repo.teams["research"];
        let with_limit = |units: Option<u32>| {
            let mut t = research.clone();
            for (c, p) in t.spec.clusters.iter_mut() {
                if c.value == "train-a100" {
                    p.borrowing_limit.clear();
                    if let Some(u) = units {
                        p.borrowing_limit.insert(
                            Spanned::new("nvidia.com/gpu".to_string(), Default::default()),
                            Spanned::new(Quantity(u), Default::default()),
                        );
                    }
                }
            }
            t
        };
        let cut = |from: Option<u32>, to: Option<u32>| {
            let change = crate::policy::change::Change {
                kind: crate::policy::change::ChangeKind::Modified,
                fields: vec!["clusters".into()],
                previous: Some(Box::new(TypedDoc::Team(with_limit(from)))),
            };
            let facts = team(env, &with_limit(to), &change);
            (
                facts.change.borrowing_cut_gpus,
                facts.change.borrowing_unlocked_gpus,
            )
        };
        // The example's 32 cut to 0; then to 8.
        assert_eq!(cut(Some(32), Some(0)), (32.0, 0.0));
        assert_eq!(cut(Some(32), Some(8)), (24.0, 0.0));
        // A raise cuts nothing.
        assert_eq!(cut(Some(8), Some(32)), (0.0, 24.0));
        // No limit (the cluster's 560 A100s) to 32.
        assert_eq!(cut(None, Some(32)), (528.0, 0.0));
    });
}

/// Standing quotas regrow when a pool's units are worth more: 64 units of
/// `nvidia.com/gpu` on infer-l4 (inference 40, devex 16, research 8).
#[test]
fn quotas_regrow_by_what_a_unit_is_worth_where_it_is_worth_most() {
    let repo = example();
    let base = &repo.clusters["infer-l4"].spec;
    let sliced = |replicas: u32, pool: &str| {
        let mut c = base.clone();
        for p in &mut c.node_pools {
            if p.name.value.as_str() == pool {
                p.time_slicing = Some(crate::model::cluster::TimeSlicing {
                    replicas: Spanned::new(replicas, Default::default()),
                });
            }
        }
        c
    };
    let teams = || repo.teams.values();
    // Whole L4s beside the sliced T4s: a unit is a whole GPU either way.
    assert_eq!(
        team::quotas_regrown(teams(), "infer-l4", base, &sliced(8, "t4-batch")),
        0.0
    );
    // Every pool sliced four ways, then l4-serve whole again: 64 x 3/4 = 48,
    // at most l4-serve's 40 GPUs.
    let all = sliced(4, "l4-serve");
    assert_eq!(team::quotas_regrown(teams(), "infer-l4", base, &all), 40.0);
    // Everything sliced but one whole L4 added: a unit is a whole GPU there,
    // but the quotas can hold at most that one GPU more.
    let one_whole = {
        let mut c = all.clone();
        let mut dev = base
            .node_pools
            .iter()
            .find(|p| p.name.value.as_str() == "l4-serve")
            .unwrap()
            .clone();
        dev.name.value = crate::model::types::Name("l4-dev".into());
        dev.nodes.value.0 = 1;
        c.node_pools.push(dev);
        c
    };
    assert_eq!(
        team::quotas_regrown(teams(), "infer-l4", &one_whole, &all),
        1.0
    );
    // Halved (4 -> 2): 64 x 1/4; the other way round nothing is gained.
    let half = {
        let mut c = sliced(2, "l4-serve");
        c.node_pools.retain(|p| p.name.value.as_str() == "l4-serve");
        c
    };
    let quarter = {
        let mut c = all.clone();
        c.node_pools.retain(|p| p.name.value.as_str() == "l4-serve");
        c
    };
    assert_eq!(
        team::quotas_regrown(teams(), "infer-l4", &half, &quarter),
        16.0
    );
    assert_eq!(
        team::quotas_regrown(teams(), "infer-l4", &quarter, &half),
        0.0
    );
    // A pool removed leaves nothing to hold; another cluster's name matches no team.
    let none = {
        let mut c = base.clone();
        c.node_pools.clear();
        c
    };
    assert_eq!(team::quotas_regrown(teams(), "infer-l4", &none, &all), 0.0);
    assert_eq!(team::quotas_regrown(teams(), "elsewhere", base, &all), 0.0);
}
