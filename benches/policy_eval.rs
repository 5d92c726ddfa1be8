//! Policy evaluation throughput: capops' compiled minijinja conditions against
//! the same tiers and rules written in Rego and evaluated by regorus (the Rust
//! Rego engine, the nearest peer for policy as code).
//!
//!     cargo bench --bench policy_eval -- REPO [--requests N]
//!
//! REPO is a capacity repository (benches/gen_repo.py makes one). The facts
//! of every request are built once, by capops; both engines then evaluate the
//! default tiers and request rules on the same facts, one thread each, and the
//! two decisions (outcome, tier, approvals, missing fields, rules fired) are
//! compared for every request before any figure is printed.

use capops::model::Timestamp;
use capops::policy::{self, change::Change, compile, eval, facts};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(repo_path) = args.first() else {
        eprintln!("usage: cargo bench --bench policy_eval -- REPO");
        std::process::exit(2);
    };
    let outcome = capops::pipeline::validate_dir(std::path::Path::new(repo_path))
        .expect("a capacity repository");
    let repo = &outcome.repo;
    let at: Timestamp = "2026-11-22".parse().unwrap();
    let mut sources = capops::diag::SourceMap::new();
    let pack = policy::default_pack(&mut sources).expect("the built-in pack");
    let config = repo.config_spec();
    let ledger = capops::capacity::Ledger::build(repo);
    let analysis = capops::cost::Analysis::new(repo, at);
    let env_facts = facts::Env {
        world: repo,
        base: None,
        config: &config,
        ledger: &ledger,
        at,
        analysis: &analysis,
        aggregates: &Default::default(),
        effects: &Default::default(),
        shared: &facts::Shared::new(repo, &config),
        author: None,
        co_authors: &[],
    };
    let t = Instant::now();
    let all: Vec<(String, minijinja::Value)> = repo
        .requests
        .values()
        .map(|r| {
            let change = Change {
                previous: Some(Box::new(capops::model::TypedDoc::CapacityRequest(
                    r.clone(),
                ))),
                ..Change::unchanged()
            };
            (
                r.name().to_string(),
                facts::values::value_of(&facts::request(&env_facts, r, &change)),
            )
        })
        .collect();
    let build = t.elapsed();
    println!(
        "requests: {}; facts built once by capops in {:.1} ms",
        all.len(),
        build.as_secs_f64() * 1e3
    );

    // capops: the compiled default pack.
    let policies = vec![&pack];
    let env = compile::environment_with_messages(&policies, "USD");
    let mut diags = Vec::new();
    let compiled = compile::compile(&env, &policies, &mut diags);
    assert!(diags.is_empty(), "{diags:?}");
    let roles = capops::policy::roles::Members {
        config: &config,
        team_leads: Vec::new(),
        receiving_leads: Vec::new(),
    };
    let t = Instant::now();
    let ours: Vec<policy::Decision> = all
        .iter()
        .map(|(_, f)| {
            eval::evaluate(
                &env,
                &compiled,
                capops::model::Subject::CapacityRequest,
                capops::policy::facts::Kept::Value(f.clone()),
                &roles,
                false,
                &mut diags,
            )
        })
        .collect();
    let ours_time = t.elapsed();

    // regorus: the same tiers and rules in Rego.
    let rego = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/rego/default.rego"),
    )
    .unwrap();
    let mut engine = regorus::Engine::new();
    engine
        .add_policy("default.rego".into(), rego)
        .expect("valid Rego");
    let inputs: Vec<regorus::Value> = all
        .iter()
        .map(|(_, f)| {
            regorus::Value::from_json_str(&capops::policy::facts::to_json(f).to_string()).unwrap()
        })
        .collect();
    let t = Instant::now();
    let theirs: Vec<regorus::Value> = inputs
        .iter()
        .map(|input| {
            engine.set_input(input.clone());
            engine
                .eval_rule("data.capops.decision".into())
                .expect("evaluates")
        })
        .collect();
    let theirs_time = t.elapsed();

    // Same decisions, request by request.
    let mut disagreements = 0;
    for (((name, _), ours), theirs) in all.iter().zip(&ours).zip(&theirs) {
        let theirs: serde_json::Value =
            serde_json::from_str(&theirs.to_json_str().unwrap()).unwrap();
        let mut rules: Vec<String> = ours.findings.iter().map(|f| f.rule.clone()).collect();
        rules.sort();
        let roles: Vec<&str> = ours.approvals.iter().map(|a| a.role.as_str()).collect();
        let same = theirs["outcome"] == ours.outcome.as_str()
            && theirs["tier"] == ours.tier.clone().unwrap_or_default().as_str()
            && theirs["rules"] == serde_json::json!(rules)
            && theirs["approvals"] == serde_json::json!(roles)
            && theirs["missing"] == serde_json::json!(ours.missing_fields);
        if !same {
            disagreements += 1;
            if disagreements <= 3 {
                eprintln!(
                    "{name}: capops {:?} {:?} {rules:?}; regorus {theirs}",
                    ours.outcome, ours.tier
                );
            }
        }
    }
    assert_eq!(disagreements, 0, "the two engines disagree");

    let rate = |n: usize, d: std::time::Duration| n as f64 / d.as_secs_f64();
    let ours_rate = rate(all.len(), ours_time);
    let theirs_rate = rate(all.len(), theirs_time);
    println!("decisions agree for all {} requests", all.len());
    println!(
        "capops (minijinja, compiled once): {:>9.0} decisions/s ({:.1} ms)",
        ours_rate,
        ours_time.as_secs_f64() * 1e3
    );
    println!(
        "regorus 0.14 (Rego interpreter):   {:>9.0} decisions/s ({:.1} ms)",
        theirs_rate,
        theirs_time.as_secs_f64() * 1e3
    );
    println!(
        "ratio: capops evaluates {:.1}x as many decisions per second",
        ours_rate / theirs_rate
    );
}
