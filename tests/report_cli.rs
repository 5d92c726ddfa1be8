//! `capops report` and `capops forecast` on the example repository: the
//! numbers they print are recomputed here from the documents and the usage
//! CSVs, every format is exercised, and bad arguments exit 2.

mod common;
use common::{example, root, run};
use serde_json::Value;
use std::collections::BTreeMap;

const AT: &str = "2026-11-22";

fn dec(v: &Value) -> f64 {
    v.as_str()
        .unwrap_or_else(|| panic!("a decimal string, got {v}"))
        .parse()
        .unwrap()
}

/// `capops report REPO --at AT --format json`, which must succeed.
fn report_at(repo: &str, at: &str) -> Value {
    let out = run(&["report", repo, "--at", at, "--format", "json"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

/// A copy of the example, edited.
fn example_with(edit: impl FnOnce(&std::path::Path)) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("acme");
    common::copy_dir(std::path::Path::new(&example()), &repo);
    edit(&repo);
    (dir, repo)
}

fn report_json() -> Value {
    let out = run(&["report", &example(), "--at", AT, "--format", "json"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn reservation_commitments_are_count_times_price_times_term() {
    let r = report_json();
    let res = r["reservations"].as_array().unwrap();
    let by_name: BTreeMap<&str, &Value> = res
        .iter()
        .map(|x| (x["name"].as_str().unwrap(), x))
        .collect();
    // 25 p4d.24xlarge at 14.75/h from 2026-10-01T11:30 to 2027-04-01T11:30.
    let a100 = by_name["a100-research-6mo"];
    assert_eq!(dec(&a100["totalCost"]), 25.0 * 14.75 * 182.0 * 24.0);
    assert_eq!(a100["gpus"], 200);
    // 4 p5.48xlarge at 55.04/h for 2026, 365 days.
    let h100 = by_name["h100-serve-1y"];
    assert!((dec(&h100["totalCost"]) - 4.0 * 55.04 * 8760.0).abs() < 0.005);
    assert!(
        (dec(&r["totals"]["reservedCommitments"])
            - dec(&a100["totalCost"])
            - dec(&h100["totalCost"]))
        .abs()
            < 0.005
    );
    // Stranded spend is the unused share of the cost; P10 demand strands more.
    for x in res {
        let cost = dec(&x["totalCost"]);
        let u50 = x["utilizationP50"].as_f64().unwrap();
        let u10 = x["utilizationP10"].as_f64().unwrap();
        assert!(u10 <= u50 && (0.0..=1.0).contains(&u50), "{x}");
        assert!(
            (dec(&x["strandedP50"]) - cost * (1.0 - u50)).abs() < 1.0,
            "{x}"
        );
        assert!(
            (dec(&x["strandedP10"]) - cost * (1.0 - u10)).abs() < 1.0,
            "{x}"
        );
    }
    // The research reservation is oversized: demand runs near 80 of 200, so
    // fewer instances keep within the 20% stranded-spend threshold.
    assert!(a100["strandedShare"].as_f64().unwrap() > 0.5);
    let suggested = a100["suggestedCount"].as_u64().unwrap();
    assert!((9..=13).contains(&suggested), "{suggested}");
    assert!(h100["strandedShare"].as_f64().unwrap() < 0.2);
    assert_eq!(h100["suggestedCount"], 4);
}

/// Chargeback and idle cost of one team, recomputed from the usage CSVs: the
/// allocated (and unused) GPU-hours of the 30 days before `--at`, at each
/// pool's blended price worked out here from the documents.
#[test]
fn chargeback_and_idle_cost_match_the_usage_csvs() {
    let r = report_json();
    // train-a100/a100-research: 25 p4d.24xlarge reserved through the capacity
    // block at 14.75/h, 5 on demand at 21.96/h, 8 GPUs each.
    // infer-l4/t4-batch: 4 n1-standard-8-t4 on demand at 0.73/h, 8 spot at 0.22/h, 1 GPU each.
    let price: BTreeMap<String, f64> = [
        (
            "train-a100/a100-research".to_string(),
            (25.0 * 14.75 / 8.0 + 5.0 * 21.96 / 8.0) / 30.0,
        ),
        (
            "infer-l4/t4-batch".to_string(),
            (4.0 * 0.73 + 8.0 * 0.22) / 12.0,
        ),
    ]
    .into();
    let (mut charge, mut idle, mut alloc_h, mut used_h) = (0.0, 0.0, 0.0, 0.0);
    let mut hours = std::collections::BTreeSet::new();
    for file in ["infer-l4.csv", "prod-h100.csv", "train-a100.csv"] {
        let text = std::fs::read_to_string(root().join("examples/acme/usage").join(file)).unwrap();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            // The 30 days before 2026-11-22T00:00Z: 2026-10-23 through 2026-11-21.
            let day = &f[0][..10];
            if f[3] != "research" || !("2026-10-23".."2026-11-22").contains(&day) {
                continue;
            }
            let (Ok(a), Ok(u)) = (f[4].parse::<f64>(), f[5].parse::<f64>()) else {
                continue;
            };
            let p = price[&format!("{}/{}", f[1], f[2])];
            charge += a * p;
            idle += (a - u.min(a)) * p;
            alloc_h += a;
            used_h += u.min(a);
            hours.insert(f[0].to_string());
        }
    }
    // The example's CSVs have a few hours of gaps; they count for nothing.
    assert!((700..=720).contains(&hours.len()), "{}", hours.len());
    let team = r["teams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["team"] == "research")
        .unwrap();
    assert!(
        (dec(&team["allocatedCost"]) - charge).abs() < 0.05,
        "{team} vs {charge}"
    );
    assert!(
        (dec(&team["idleCost"]) - idle).abs() < 0.05,
        "{team} vs {idle}"
    );
    // Chargeback adds the team's share of its pools' unallocated cost: research is
    // alone in a100-research (it pays all 240 GPUs x 720 h there) and shares
    // t4-batch's with devex by allocated GPU-hours.
    let mut pool_alloc: BTreeMap<(String, String), f64> = BTreeMap::new();
    let mut research_alloc: BTreeMap<String, f64> = BTreeMap::new();
    for file in ["infer-l4.csv", "train-a100.csv"] {
        let text = std::fs::read_to_string(root().join("examples/acme/usage").join(file)).unwrap();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            let pool = format!("{}/{}", f[1], f[2]);
            if !price.contains_key(&pool) || !("2026-10-23".."2026-11-22").contains(&&f[0][..10]) {
                continue;
            }
            let (Ok(a), Ok(_)) = (f[4].parse::<f64>(), f[5].parse::<f64>()) else {
                continue;
            };
            *pool_alloc
                .entry((pool.clone(), f[3].to_string()))
                .or_default() += a;
            if f[3] == "research" {
                *research_alloc.entry(pool).or_default() += a;
            }
        }
    }
    let gpus: BTreeMap<&str, f64> = [
        ("train-a100/a100-research", 240.0),
        ("infer-l4/t4-batch", 12.0),
    ]
    .into();
    let mut shared = 0.0;
    for (pool, mine) in &research_alloc {
        let all: f64 = pool_alloc
            .iter()
            .filter(|((p, _), _)| p == pool)
            .map(|(_, v)| v)
            .sum();
        let unallocated = (gpus[pool.as_str()] * 720.0 - all) * price[pool];
        shared += unallocated * mine / all;
    }
    assert!(
        (dec(&team["sharedCost"]) - shared).abs() < 0.10,
        "{team} vs {shared}"
    );
    assert!(
        (dec(&team["chargeback"]) - dec(&team["allocatedCost"]) - dec(&team["sharedCost"])).abs()
            < 0.005
    );
    let util = team["utilization"].as_f64().unwrap();
    assert!((util - used_h / alloc_h).abs() < 1e-9);
    // Below the 40% threshold; at the 70% target the work needs ceil(used / 0.7).
    assert_eq!(team["low"], true);
    let mean_used = used_h / hours.len() as f64;
    assert_eq!(
        team["rightsizedGpus"].as_u64().unwrap(),
        (mean_used / 0.7).ceil() as u64
    );
    // Cost centers add up their teams.
    let centers = r["costCenters"].as_array().unwrap();
    let by_teams: f64 = r["teams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| dec(&t["chargeback"]))
        .sum();
    let by_centers: f64 = centers.iter().map(|c| dec(&c["chargeback"])).sum();
    assert!((by_teams - by_centers).abs() < 0.005);
    assert!((dec(&r["totals"]["chargeback"]) - by_teams).abs() < 0.005);
    // The account adds up, per pool and in total, to the cent: capacity = used +
    // idle + stranded + unmeasured; the teams plus what is unassigned pay it all.
    let mut capacity = 0.0;
    for p in r["pools"].as_array().unwrap() {
        let a = &p["account"];
        let parts = dec(&a["used"]) + dec(&a["idle"]) + dec(&a["stranded"]) + dec(&a["unmeasured"]);
        assert!((dec(&a["capacity"]) - parts).abs() < 0.005, "{p}");
        assert!((dec(&a["allocated"]) - dec(&a["used"]) - dec(&a["idle"])).abs() < 0.005);
        capacity += dec(&a["capacity"]);
    }
    // a100-research: 240 GPUs x 720 h at its blended price.
    let research_pool = r["pools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pool"] == "a100-research")
        .unwrap();
    assert!(
        (dec(&research_pool["account"]["capacity"])
            - 240.0 * 720.0 * price["train-a100/a100-research"])
            .abs()
            < 0.01
    );
    let totals = &r["totals"];
    assert!((dec(&totals["lookback"]["capacity"]) - capacity).abs() < 0.005);
    assert!(
        (by_teams + dec(&totals["unassigned"]) - dec(&totals["lookback"]["capacity"])).abs()
            < 0.005
    );
}

#[test]
fn budgets_alert_and_recommendations_come_largest_saving_first() {
    let r = report_json();
    for b in r["budgets"].as_array().unwrap() {
        let budget = dec(&b["monthlyBudget"]);
        let months = b["months"].as_array().unwrap();
        assert_eq!(months.len(), 12, "{b}");
        assert_eq!(months[0]["month"], "2026-11");
        for m in months {
            let share = m["share"].as_f64().unwrap();
            assert!((dec(&m["spend"]) / budget - share).abs() < 1e-6, "{m}");
            let expected = if share >= 1.2 {
                Some(1.2)
            } else if share >= 1.0 {
                Some(1.0)
            } else if share >= 0.8 {
                Some(0.8)
            } else {
                None
            };
            assert_eq!(m["alert"].as_f64(), expected, "{m}");
        }
    }
    let recs = r["recommendations"].as_array().unwrap();
    assert!(!recs.is_empty());
    let savings: Vec<f64> = recs
        .iter()
        .filter(|x| !x["monthlySavings"].is_null())
        .map(|x| dec(&x["monthlySavings"]))
        .collect();
    assert!(savings.windows(2).all(|w| w[0] >= w[1]), "{savings:?}");
    // The running, prepaid capacity block is locked: nothing is recommended for it.
    let block = r["reservations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "a100-research-6mo")
        .unwrap();
    assert_eq!(block["locked"], true);
    assert!(
        !recs.iter().any(|x| x["subject"] == "a100-research-6mo"
            || x.to_string().contains("Reservation `a100-research-6mo`")),
        "{recs:?}"
    );
    // One plan: the savings add up to the total, none counted twice; each says
    // what could go wrong and which documents change.
    let sum: f64 = savings.iter().sum();
    assert!((sum - dec(&r["totals"]["planSavings"])).abs() < 0.005);
    for x in recs.iter().filter(|x| x["kind"] != "budget") {
        assert!(!x["risk"].as_str().unwrap().is_empty(), "{x}");
    }
    let research = recs
        .iter()
        .find(|x| x["kind"] == "rightsize-team" && x["subject"] == "research")
        .unwrap();
    // The request that ends soonest (interpretability, February 1) goes
    // first, so the team still holds its right size after it ends.
    assert_eq!(
        research["changes"][0],
        "CapacityRequest `research-interpretability`: end it (releases 24 GPUs)",
        "{research}"
    );
    assert!(
        research["changes"][1]
            .as_str()
            .unwrap()
            .starts_with("CapacityRequest `research-rl-experiments`: nvidia.com/gpu 80 → 38"),
        "{research}"
    );
    // Every commitment mix saves against buying the same demand on demand.
    for p in r["pools"].as_array().unwrap() {
        if let Some(m) = p.get("mix").filter(|m| !m.is_null()) {
            assert!(
                dec(&m["monthlyMix"]) <= dec(&m["monthlyOnDemand"]) + 0.005,
                "{p}"
            );
        }
    }
}

#[test]
fn report_formats_text_markdown_and_self_contained_html() {
    let text = run(&["report", &example(), "--at", AT], &[]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout
            .starts_with("Acme AI: GPU cost and capacity report, 2026-11-22T00:00:00Z")
    );
    // The headline's account adds up, and says who pays it.
    assert!(
        text.stdout.contains("last 30 days: capacity 1,133,734 USD = allocated 562,273 USD (used 406,975 USD + idle 155,298 USD"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains(
        "charged back: teams 1,133,734 USD + unassigned 0 USD = 1,133,734 USD (unallocated cost shared: proportional)"
    ));
    let row = |name: &str| {
        text.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}: {}", text.stdout))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        row("a100-research-6mo"),
        "a100-research-6mo train-a100/a100-research 200 2026-10-01 → 2027-04-01 1,610,700 USD 33% 1,080,201 USD (67%) 1,346,939 USD 349,170 USD (22%) 0 locked locked (prepaid, started)"
    );
    // The table names what the plan does with a reservation: `h100-serve-1y`
    // bills at the on-demand rate and demand fills its 4 instances until it
    // ends, so keeping 1, 2, 3 or 4 costs the same to within the cents the
    // plan's parts round to, and the plan keeps all 4 (giving up reserved
    // capacity for nothing is churn), at every hour of `--at`.
    assert!(
        row("h100-serve-1y")
            .ends_with("4 of 4 the plan: keep its 4 (no dearer than what the plan would buy)"),
        "{}",
        row("h100-serve-1y")
    );
    assert!(!text.stdout.contains("gives up"), "{}", text.stdout);
    // Its saving rests on the serving requests ending as their windows say.
    assert!(
        text.stdout.contains(
            "the plan buys for the demand left once `inference-llm-serving` (32 GPUs, 2027-01-01), `inference-holiday-peak` (16 GPUs, 2027-01-05) end as their windows say: renewed, the pool needs their GPUs again"
        ),
        "{}",
        text.stdout
    );
    for hour in ["06", "12", "18"] {
        let at = format!("{AT}T{hour}:00:00Z");
        let other = run(&["report", &example(), "--at", &at], &[]);
        assert!(
            other.stdout.contains("the plan: keep its 4"),
            "at {at}: {}",
            other.stdout
        );
    }
    assert_eq!(
        row("research (low)"),
        "research (low) CC-1300 34% 77.3 26.4 38 109,719 USD 235,630 USD 345,349 USD 72,230 USD 111,432 USD 250,000 USD"
    );

    let md = run(
        &["report", &example(), "--at", AT, "--format", "markdown"],
        &[],
    );
    assert_eq!(md.code, 0);
    assert!(
        md.stdout
            .starts_with("# Acme AI: GPU cost and capacity report")
    );
    assert!(md.stdout.contains("## Reservations"));
    assert!(
        md.stdout
            .contains("| a100-research-6mo | train-a100/a100-research | 200 |")
    );
    assert!(md.stdout.contains("```mermaid\n"));

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    let html = run(
        &[
            "report",
            &example(),
            "--at",
            AT,
            "--format",
            "html",
            "--out",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(html.code, 0, "{}", html.stderr);
    assert!(html.stdout.is_empty(), "--out writes the file, not stdout");
    let page = std::fs::read_to_string(&file).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.trim_end().ends_with("</html>"));
    // Self-contained: no scripts, no external resources; charts inline.
    assert!(!page.contains("<script"));
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http"));
    assert_eq!(page.matches("<svg").count(), 6, "one chart per pool");
    assert!(page.contains("a100-research-6mo"));
}

#[test]
fn report_refuses_sarif_and_invalid_repositories() {
    let sarif = run(&["report", &example(), "--format", "sarif"], &[]);
    assert_eq!(sarif.code, 2);
    assert!(sarif.stderr.contains("sarif"), "{}", sarif.stderr);
    let broken = root().join("tests/corpus/dangling-references");
    let out = run(&["report", broken.to_str().unwrap()], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["report", dir.path().to_str().unwrap()], &[]);
    assert_eq!(out.code, 2, "no capops.yaml: {}", out.stderr);
}

#[test]
fn forecast_prints_quantiles_that_never_cross_or_go_negative() {
    let out = run(
        &[
            "forecast",
            &example(),
            "--at",
            AT,
            "--format",
            "json",
            "--horizon",
            "3d",
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["horizonHours"], 72);
    let pools = v["pools"].as_array().unwrap();
    assert_eq!(pools.len(), 6);
    for p in pools {
        let points = p["points"].as_array().unwrap();
        assert_eq!(points.len(), 72, "{}", p["pool"]);
        assert_eq!(points[0]["time"], "2026-11-22T00:00:00Z");
        for q in points {
            let (a, b, c) = (
                q["p10"].as_f64().unwrap(),
                q["p50"].as_f64().unwrap(),
                q["p90"].as_f64().unwrap(),
            );
            assert!(0.0 <= a && a <= b && b <= c, "{q}");
        }
        let over = points
            .iter()
            .filter(|q| q["p90"].as_f64().unwrap() > p["capacityGpus"].as_f64().unwrap())
            .count();
        assert_eq!(p["hoursOverCapacity"].as_u64().unwrap() as usize, over);
        assert!(!p["method"].as_str().unwrap().is_empty());
    }

    let text = run(
        &[
            "forecast",
            &example(),
            "--at",
            AT,
            "--pool",
            "train-a100/a100-research",
        ],
        &[],
    );
    assert_eq!(text.code, 0);
    let rows: Vec<&str> = text
        .stdout
        .lines()
        .filter(|l| l.contains("a100-"))
        .collect();
    assert_eq!(rows.len(), 1, "{}", text.stdout);
    assert!(
        rows[0].starts_with("train-a100/a100-research    240"),
        "{}",
        rows[0]
    );

    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("f.svg");
    let out = run(
        &[
            "forecast",
            &example(),
            "--at",
            AT,
            "--svg",
            svg.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.code, 0);
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg") && chart.trim_end().ends_with("</svg>"));
}

#[test]
fn forecast_rejects_unknown_pools_and_bad_horizons() {
    for (args, needle) in [
        (
            vec!["--pool", "prod-h100/h100-srve"],
            "did you mean `prod-h100/h100-serve`",
        ),
        (vec!["--pool", "h100-serve"], "CLUSTER/POOL"),
        (
            vec!["--horizon", "0"],
            "`0` is not between 1 hour and three years",
        ),
        (vec!["--horizon", "5y"], "unknown unit"),
        (
            vec!["--horizon", "200w"],
            "`200w` is not between 1 hour and three years",
        ),
    ] {
        let mut all = vec!["forecast", example().leak() as &str, "--at", AT];
        all.extend(args.iter().copied());
        let out = run(&all, &[]);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
    }
}

fn pool_of<'a>(report: &'a Value, pool: &str) -> &'a Value {
    report["pools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pool"] == pool)
        .unwrap()
}

#[test]
fn each_hour_is_priced_by_the_reservations_in_force_then() {
    // h100-serve-1y (4 p5.48xlarge at 55.04, 2026-01-01 to 2027-01-01) and
    // 2 on-demand p5.48xlarge at 55.04: 6.88 a GPU-hour. The 30 days
    // before 2027-01-01 all lie inside the term, so they cost
    // 48 × 6.88 × 720 = 237,772.80 whether `--at` is the term's last hour
    // or the first hour after it, when today's price falls back to the
    // catalog.
    for at in ["2026-12-31T23:00:00Z", "2027-01-01"] {
        let r = report_at(&example(), at);
        let p = pool_of(&r, "h100-serve");
        let lookback: f64 = dec(&p["account"]["capacity"]);
        assert!((lookback - 237_772.80).abs() < 0.005, "{at}: {lookback}");
    }
    // A commitment bought for next summer does not price today.
    let (_dir, repo) = example_with(|repo| {
        std::fs::write(
        repo.join("reservations/l4-next-summer.yaml"),
        "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata:\n  name: l4-next-summer\nspec:\n  provider: gcp\n  type: gcp-commitment\n  region: us-central1\n  zone: us-central1-a\n  instanceType: g2-standard-4\n  count: 24\n  term: {start: 2027-06-01, end: 2028-06-01}\n  hourlyPrice: 0.10\n  covers: {cluster: infer-l4, pool: l4-serve}\n",
    )
    .unwrap();
    });
    let r = report_at(repo.to_str().unwrap(), AT);
    let p = pool_of(&r, "l4-serve");
    // 24 reserved at the catalog's 1-year 0.45 and 16 on demand at 0.71:
    // (24 × 0.45 + 16 × 0.71) / 40 = 0.554.
    assert_eq!(dec(&p["gpuHourPrice"]), 0.554);
    assert!((dec(&p["account"]["capacity"]) - 40.0 * 0.554 * 720.0).abs() < 0.01);
    // Not bought yet (a commitment starts when bought): nothing locked.
    let res = r["reservations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "l4-next-summer")
        .unwrap();
    assert_eq!(res["locked"], false);
}

#[test]
fn stale_usage_keeps_the_last_measured_busy_share_not_zero_idle() {
    // The example's usage ends on 2026-11-21. A month later the 30 days
    // before `--at` hold no measurement; the reservations' idle spend is
    // still estimated, from the 30 days up to the last measured hour (the
    // same hours as at 2026-11-22), never taken as nothing.
    let idle = |at: &str| -> Vec<(String, f64)> {
        let r = report_at(&example(), at);
        r["reservations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["name"].as_str().unwrap().to_string(),
                    x["idleShare"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    let now = idle(AT);
    let later = idle("2026-12-25");
    assert_eq!(now.len(), 2);
    for ((name, a), (_, b)) in now.iter().zip(&later) {
        assert!(*a > 0.1 && *b > 0.1, "{name}: {a} then {b}");
    }
}

#[test]
fn gpus_without_a_price_are_named_apart_from_what_the_pools_cost() {
    let (_dir, repo) = example_with(|repo| {
        let c = repo.join("clusters/infer-l4.yaml");
        let text = std::fs::read_to_string(&c).unwrap();
        std::fs::write(&c, text.replacen("g2-standard-4", "g2-standard-8", 1)).unwrap();
    });
    let r = report_at(repo.to_str().unwrap(), AT);
    // l4-serve's 40 L4s have no price now: 636 priced GPUs, 40 not.
    assert_eq!(r["totals"]["gpus"], 676);
    assert_eq!(r["totals"]["unpricedGpus"], 40);
    // The budgets of the teams on l4-serve (devex, inference) leave its
    // GPUs out, and say so month by month; the others do not.
    let unpriced: Vec<(String, bool)> = r["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let months = b["months"].as_array().unwrap();
            let flags: Vec<bool> = months.iter().map(|m| m["unpriced"] == true).collect();
            assert!(flags.iter().all(|f| *f == flags[0]), "{b}");
            (b["team"].as_str().unwrap().to_string(), flags[0])
        })
        .collect();
    assert_eq!(
        unpriced,
        [
            ("devex".to_string(), true),
            ("inference".to_string(), true),
            ("research".to_string(), false),
            ("training".to_string(), false)
        ]
    );
    let human = run(&["report", repo.to_str().unwrap(), "--at", AT], &[]);
    assert!(
        human.stdout.contains("636 GPUs cost")
            && human.stdout.contains("and 40 more have no price"),
        "{}",
        human.stdout
    );
    let budgets = human.stdout.split("\nBudgets\n").nth(1).unwrap();
    let line = |team: &str| {
        budgets
            .lines()
            .find(|l| l.trim_start().starts_with(team))
            .unwrap()
            .to_string()
    };
    assert_eq!(line("inference").matches("+unpriced").count(), 12);
    assert_eq!(line("training").matches("+unpriced").count(), 0);
}

#[test]
fn json_reports_carry_the_warnings_that_qualify_their_numbers() {
    // a100-research declares 20 reserved nodes where its reservation holds
    // 25: the other 5 are paid for and in no pool's cost. The human report
    // says so on stderr; the JSON says so in `diagnostics`.
    let (_dir, repo) = example_with(|r| {
        let path = r.join("clusters/train-a100.yaml");
        let text = std::fs::read_to_string(&path).unwrap();
        let edited = text.replace(
            "purchase: {reserved: 25, onDemand: 5}",
            "purchase: {reserved: 20, onDemand: 10}",
        );
        assert_ne!(text, edited);
        std::fs::write(&path, edited).unwrap();
    });
    let report = report_at(&repo.display().to_string(), AT);
    let codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["reservations-exceed-reserved-nodes"], "{codes:?}");
    assert_eq!(report_json()["diagnostics"], serde_json::json!([]));
}

#[test]
fn a_report_as_of_a_past_moment_reads_nothing_measured_after_it() {
    // The example with its usage as measured, and cut at --at: a report as
    // of then must be the same, budgets and teams included.
    let at = "2026-10-15";
    let (_d, full) = example_with(|_| {});
    let (_c, cut) = example_with(|repo| {
        for e in std::fs::read_dir(repo.join("usage")).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "csv") {
                let text = std::fs::read_to_string(&p).unwrap();
                let kept: Vec<&str> = text
                    .lines()
                    .enumerate()
                    .filter(|(i, l)| {
                        *i == 0
                            || l.as_bytes().first().is_none_or(|b| !b.is_ascii_digit())
                            || *l < at
                    })
                    .map(|(_, l)| l)
                    .collect();
                std::fs::write(&p, kept.join("\n") + "\n").unwrap();
            }
        }
    });
    let a = report_at(full.to_str().unwrap(), at);
    let b = report_at(cut.to_str().unwrap(), at);
    assert_eq!(a["pools"], b["pools"]);
    assert_eq!(a["budgets"], b["budgets"]);
    assert_eq!(a["teams"], b["teams"]);
    let projected = |r: &Value| -> Vec<String> {
        r["teams"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["projectedThisMonth"].to_string())
            .collect()
    };
    assert!(!projected(&a).is_empty());
}

#[test]
fn budgets_as_of_a_past_moment_do_not_fill_a_gap_from_a_sample_after_it() {
    // research has a gap across --at in prod-h100/h100-serve: one sample
    // before it, one after. Two repositories that differ only in the sample
    // after --at must project the same budgets and team spend.
    let at = "2026-10-15";
    let with_after = |after: &'static str| {
        move |repo: &std::path::Path| {
            let csv = repo.join("usage/prod-h100.csv");
            let mut text = std::fs::read_to_string(&csv).unwrap();
            text.push_str("2026-10-14T10:00:00Z,prod-h100,h100-serve,research,40,30\n");
            text.push_str(&format!(
                "2026-10-16T00:00:00Z,prod-h100,h100-serve,research,{after}\n"
            ));
            std::fs::write(&csv, text).unwrap();
        }
    };
    let (_a, high) = example_with(with_after("40,30"));
    let (_b, low) = example_with(with_after("0,0"));
    let a = report_at(high.to_str().unwrap(), at);
    let b = report_at(low.to_str().unwrap(), at);
    assert_eq!(a["budgets"], b["budgets"]);
    assert_eq!(a["teams"], b["teams"]);
}

#[test]
fn idle_allocation_of_a_team_with_no_document_is_its_own_total() {
    // A team with no Team document holds 4 GPUs of l4-serve and uses 1,
    // every hour of the 30 days before AT: 3 GPUs idle for 720 hours.
    let (_dir, repo) = example_with(|repo| {
        use std::io::Write;
        let mut csv = std::fs::OpenOptions::new()
            .append(true)
            .open(repo.join("usage/infer-l4.csv"))
            .unwrap();
        let days = (23..=31).map(|d| (10, d)).chain((1..=21).map(|d| (11, d)));
        for (month, day) in days {
            for hour in 0..24 {
                writeln!(
                    csv,
                    "2026-{month:02}-{day:02}T{hour:02}:00:00Z,infer-l4,l4-serve,ghost,4,1"
                )
                .unwrap();
            }
        }
    });
    let r = report_at(repo.to_str().unwrap(), AT);
    let price = dec(&pool_of(&r, "l4-serve")["gpuHourPrice"]);
    let totals = &r["totals"];
    let stray = dec(&totals["unassignedIdleCost"]);
    assert!(
        (stray - 3.0 * 720.0 * price).abs() < 0.01,
        "{stray} vs {}",
        3.0 * 720.0 * price
    );
    // It is in the total idle cost, and in no team's row.
    let teams: f64 = r["teams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| dec(&t["idleCost"]))
        .sum();
    assert!((dec(&totals["idleCost"]) - teams - stray).abs() < 0.01);
    assert!(
        r["teams"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["team"] != "ghost")
    );
    // Its allocation is the platform's: in `unassigned`, at least its idle part.
    assert!(dec(&totals["unassigned"]) >= stray - 0.01);
}

/// One pool of 5 p5 instances on demand (on demand 80, spot 20, 1-year 48
/// an instance-hour); team `ml` holds a steady 16-GPU request and a
/// preemptible 16-GPU one that ends first, 32 allocated and 8 used every
/// hour for 90 days. `steady` (and `pre`, when `with_pre`) as given.
fn split_repo(dir: &std::path::Path, steady: u32, with_pre: bool) -> String {
    let doc = |kind: &str, name: &str, spec: &str| {
        format!(
            "apiVersion: capops.dev/v1alpha1\nkind: {kind}\nmetadata: {{name: {name}}}\nspec:\n{spec}"
        )
    };
    let files = [
        (
            "capops.yaml",
            doc("Config", "cfg", "  defaults: {priorityClass: batch}\n"),
        ),
        (
            "clusters.yaml",
            doc(
                "Cluster",
                "c1",
                "  environment: production\n  provider: aws\n  region: us-east-1\n  nodePools:\n    - {name: p1, gpuModel: h100-80gb-sxm, instanceType: p5.48xlarge, gpusPerNode: 8, nodes: 5, zone: us-east-1a}\n",
            ),
        ),
        (
            "teams.yaml",
            doc(
                "Team",
                "ml",
                "  costCenter: CC-1\n  clusters:\n    c1: {namespace: ml, quota: {nvidia.com/gpu: 40}}\n",
            ),
        ),
        ("pc.yaml", doc("PriorityClass", "batch", "  value: 100\n")),
        (
            "prices.yaml",
            doc(
                "PriceCatalog",
                "cat",
                "  effective: 2026-01-01\n  prices:\n    - {provider: aws, region: us-east-1, instanceType: p5.48xlarge, gpusPerInstance: 8, onDemand: 80, spot: 20, reserved1y: 48, reserved3y: 32, capacityBlock: 60, source: test}\n",
            ),
        ),
    ];
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    let mut requests = doc(
        "CapacityRequest",
        "steady",
        &format!(
            "  team: ml\n  cluster: c1\n  pool: p1\n  resources: {{nvidia.com/gpu: {steady}}}\n  window: {{start: 2026-08-01, end: 2028-08-01}}\n  workloadClass: training\n"
        ),
    );
    if with_pre {
        requests.push_str("---\n");
        requests.push_str(&doc("CapacityRequest", "pre", "  team: ml\n  cluster: c1\n  pool: p1\n  resources: {nvidia.com/gpu: 16}\n  window: {start: 2026-08-01, end: 2028-06-01}\n  workloadClass: research\n  preemptible: true\n"));
    }
    std::fs::write(dir.join("requests.yaml"), requests).unwrap();
    std::fs::create_dir_all(dir.join("usage")).unwrap();
    let allocated = if with_pre { 32 } else { steady };
    let mut csv = String::from("timestamp,cluster,pool,team,allocated_gpus,used_gpus\n");
    let start = "2026-08-24T00:00:00Z"
        .parse::<capops::model::Timestamp>()
        .unwrap()
        .as_second();
    for h in 0..2160 {
        let t = capops::model::Timestamp::from_second(start + h * 3600).unwrap();
        csv.push_str(&format!("{t},c1,p1,ml,{allocated},8\n"));
    }
    std::fs::write(dir.join("usage/u.csv"), csv).unwrap();
    dir.display().to_string()
}

#[test]
fn rightsizing_saves_what_the_change_it_writes_leaves() {
    // The plan ends `pre` and trims `steady` 16 -> 12: 12 steady GPUs stay,
    // 2 instances a 1-year commitment covers (2 x 48 = 96 an hour, 70,080
    // a month). Before, 16 steady on 1-year and 16 preemptible on spot at
    // 22 (20 with its 10% allowance): 140 an hour, 102,200 a month. So the
    // rightsizing saves 32,120 a month, not the 51,100 of a release split
    // in proportion to what the team holds (6 steady + 6 preemptible).
    let dir = tempfile::tempdir().unwrap();
    let before = report_at(&split_repo(dir.path(), 16, true), AT);
    let recs = before["recommendations"].as_array().unwrap();
    let rightsize = recs.iter().find(|r| r["kind"] == "rightsize-team").unwrap();
    let changes: Vec<&str> = rightsize["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        changes,
        [
            "CapacityRequest `pre`: end it (releases 16 GPUs)",
            "CapacityRequest `steady`: nvidia.com/gpu 16 → 12"
        ]
    );
    assert_eq!(dec(&rightsize["monthlySavings"]), 32_120.0);
    // And the plan's total is what a report on the repository the change
    // leaves finds.
    let after_dir = tempfile::tempdir().unwrap();
    let after = report_at(&split_repo(after_dir.path(), 12, false), AT);
    let mix_after = after["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "commitment-mix")
        .unwrap();
    let mix_before = recs.iter().find(|r| r["kind"] == "commitment-mix").unwrap();
    assert!(
        mix_before["text"]
            .as_str()
            .unwrap()
            .contains("70,080 USD a month")
            && mix_after["text"]
                .as_str()
                .unwrap()
                .contains("70,080 USD a month"),
        "{mix_before}\n{mix_after}"
    );
}

#[test]
fn a_commitment_the_gate_would_deny_says_so() {
    // The l4-serve plan buys 18 GPUs on 1 year at break-even; over the
    // year about 22% of their hours go unused, above the example's 20%
    // strandedSpendShare, and `check` denies such a reservation (at 23%).
    let r = report_json();
    let mix = r["recommendations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == "commitment-mix" && x["subject"] == "infer-l4/l4-serve")
        .unwrap();
    let risk = mix["risk"].as_str().unwrap();
    assert!(
        risk.contains("about 22% of the 1-year reserved tier's GPU-hours are expected unused over its term, above the Config's strandedSpendShare (20%)"),
        "{risk}"
    );
    // A tier within the threshold says nothing of it.
    assert!(
        r["recommendations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["subject"] != "infer-l4/l4-serve")
            .all(|x| !x["risk"]
                .as_str()
                .unwrap_or("")
                .contains("strandedSpendShare")),
    );
}
