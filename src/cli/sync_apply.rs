//! `capops apply`: plan (or read a saved plan and check it is still fresh),
//! show it, confirm, then apply every cluster in parallel and report each.

use super::common::{Exit, Outcome, Stop};
use super::sync::{bars, plan_all, plan_code, plan_of, settings};
use super::sync_support as support;
use super::sync_support::Common;
use super::{Cli, Io};
use crate::diag::Code;
use crate::output::Format;
use crate::sync::apply::{ApplyOptions, ClusterApply};
use crate::sync::client::Conn;
use crate::sync::plan::{ClusterError, ClusterPlan, PLAN_VERSION, Plan};
use crate::sync::run::{self, Progress};
use crate::sync::{desired::Desired, nodes, report};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The desired state a plan file's cluster needs for reading: the kinds of its objects.
fn desired_of(p: &ClusterPlan) -> Desired {
    let mut d = Desired {
        cluster: p.cluster.clone(),
        ..Desired::default()
    };
    for c in &p.changes {
        if let Some(o) = &c.object {
            d.objects.push(crate::sync::desired::DesiredObject {
                target: c.target.clone(),
                value: o.clone(),
            });
        }
    }
    d
}

#[derive(Debug, clap::Args)]
pub struct ApplyArgs {
    #[command(flatten)]
    pub common: Common,
    /// Apply this plan file (from `capops plan --out`) instead of planning again;
    /// refused when the clusters changed since.
    #[arg(long)]
    pub plan: Option<PathBuf>,
    /// Apply without asking.
    #[arg(long)]
    pub yes: bool,
    /// Apply even when objects were applied from a revision this checkout
    /// does not contain (rolling them back, prunes included).
    #[arg(long)]
    pub allow_older_revision: bool,
    /// Take over fields and objects other field managers own (never objects
    /// Argo CD, Flux or another capacity repository own).
    #[arg(long)]
    pub force_conflicts: bool,
    /// After relabelling MIG nodes, wait for nvidia.com/mig.config.state.
    #[arg(long)]
    pub wait: bool,
    /// How long --wait waits, in seconds (0 to 86400: a day).
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub wait_timeout: u64,
    /// How often --wait reads the nodes, in seconds (0.1 to 600).
    #[arg(long, default_value_t = 5.0, value_parser = interval_arg)]
    pub wait_interval: f64,
}

/// `--wait-interval`: a number of seconds from 0.1 to 600 (not NaN, not
/// zero: a node read 25 times a second loads the API server for nothing).
fn interval_arg(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if v.is_finite() && (0.1..=600.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("`{s}` is not between 0.1 and 600 seconds"))
    }
}

pub fn apply(cli: &Cli, a: &ApplyArgs, io: &mut Io<'_>) -> Outcome {
    if !matches!(cli.format, Format::Human | Format::Json) {
        writeln!(io.stderr, "error: `capops apply` writes human or json")?;
        return Ok(Exit::Invalid);
    }
    let kc = support::kubeconfig(&a.common, io)?;
    let plugins = support::plugins(io)?;
    let progress = bars(cli, io);
    let rt = support::runtime()?;
    // The plan and a connection per cluster, and the resourceVersions a plan file pins.
    let (plan, conns, preconditions) = match &a.plan {
        None => {
            let loaded = support::load(cli, &a.common, io)?;
            support::refuse_shared_servers(&loaded, kc.as_ref(), io)?;
            let planned = plan_all(
                &rt,
                &loaded,
                kc.as_ref(),
                &plugins,
                a.common.parallel,
                &progress,
            );
            let (plans, conns): (Vec<ClusterPlan>, Vec<Option<Conn>>) = planned.into_iter().unzip();
            (plan_of(&loaded, plans), conns, BTreeMap::new())
        }
        Some(file) => {
            let mut plan = read_plan(file, io)?;
            // The checkout the plan was made from, rendered at its moment
            // and revision: the plan must be what it asks for.
            let at = plan.at.parse().ok();
            let common = Common {
                path: a.common.path.clone(),
                cluster: None,
                at,
                kubeconfig: a.common.kubeconfig.clone(),
                revision: Some(plan.revision.clone()),
                parallel: a.common.parallel,
            };
            let checkout = support::load(cli, &common, io)?;
            let differs = super::sync_planfile::differences(&plan, &checkout);
            if !differs.is_empty() {
                writeln!(
                    io.stderr,
                    "error[{}]: the plan {} is not what the checkout at {} renders: nothing was sent to any cluster",
                    Code::PlanStale.as_str(),
                    file.display(),
                    a.common.path.display()
                )?;
                for d in differs.iter().take(20) {
                    writeln!(io.stderr, "  {d}")?;
                }
                writeln!(
                    io.stderr,
                    "  help: run `capops apply` from the checkout the plan was made from, or `capops plan --out {}` again and review it",
                    file.display()
                )?;
                return Ok(Exit::Gate);
            }
            // No Cluster of the checkout may share an API server with the plan's.
            let names: Vec<&str> = plan.clusters.iter().map(|c| c.cluster.as_str()).collect();
            support::refuse_shared(&checkout.contexts, &names, kc.as_ref(), io)?;
            let known: Vec<String> = checkout.contexts.iter().map(|c| c.0.clone()).collect();
            // Each Cluster's pools and their node selectors, as the checkout has them.
            let pools: BTreeMap<String, Vec<crate::sync::desired::PoolLabels>> = checkout
                .targets
                .iter()
                .map(|t| (t.cluster.clone(), t.desired.pools.clone()))
                .collect();
            // Each Cluster's pinned API server, as the checkout has it.
            let pins: BTreeMap<String, String> = checkout
                .targets
                .iter()
                .filter_map(|t| Some((t.cluster.clone(), t.spec.api_server.clone()?.value)))
                .collect();
            if let Some(only) = &a.common.cluster {
                plan.clusters.retain(|c| &c.cluster == only);
            }
            let repository = plan.repository.clone();
            let checked = rt.block_on(run::for_each_cluster(
                plan.clusters.iter().collect(),
                usize::from(a.common.parallel),
                |p: &ClusterPlan| {
                    let s = settings(&repository, known.clone());
                    let kc = kc.as_ref();
                    let plugins = &plugins;
                    let pins = &pins;
                    let pools = &pools;
                    async move {
                        if p.error.is_some() {
                            return (None, Ok((Vec::new(), BTreeMap::new())));
                        }
                        let conn = match support::connect(
                            kc,
                            p.context.as_deref(),
                            pins.get(&p.cluster).map(String::as_str),
                            plugins,
                        )
                        .await
                        {
                            Ok(c) => c,
                            Err(e) => return (None, Err(e)),
                        };
                        let mut desired = desired_of(p);
                        desired.pools = pools.get(&p.cluster).cloned().unwrap_or_default();
                        let r = run::check_fresh(&conn, p, &desired, &s).await;
                        (Some(conn), r)
                    }
                },
            ));
            let mut conns = Vec::new();
            let mut pre = BTreeMap::new();
            let mut stale = Vec::new();
            for (p, (conn, r)) in plan.clusters.iter_mut().zip(checked) {
                match r {
                    Ok((reasons, current)) => {
                        stale.extend(reasons.into_iter().map(|r| format!("{}: {r}", p.cluster)));
                        pre.insert(p.cluster.clone(), current);
                    }
                    Err(e) => p.error = Some(e),
                }
                conns.push(conn);
            }
            if !stale.is_empty() {
                writeln!(
                    io.stderr,
                    "error[{}]: the plan {} is stale: the clusters changed since it was made",
                    Code::PlanStale.as_str(),
                    file.display()
                )?;
                for s in &stale {
                    writeln!(io.stderr, "  {s}")?;
                }
                writeln!(
                    io.stderr,
                    "  help: run `capops plan --out {}` again and review it",
                    file.display()
                )?;
                return Ok(Exit::Gate);
            }
            plan.recount();
            (plan, conns, pre)
        }
    };
    let elsewhere = super::sync_revision::applied_from_elsewhere(&a.common.path, &plan);
    if !elsewhere.is_empty() && !a.allow_older_revision {
        writeln!(
            io.stderr,
            "error[{}]: the clusters hold objects applied from a revision this checkout does not contain: applying would roll them back; nothing was sent to any cluster",
            Code::RevisionBehindCluster.as_str(),
        )?;
        for e in elsewhere.iter().take(20) {
            writeln!(io.stderr, "  {e}")?;
        }
        writeln!(
            io.stderr,
            "  help: pull the branch the clusters were applied from and plan again, or pass --allow-older-revision to roll back on purpose"
        )?;
        return Ok(Exit::Gate);
    }
    let pending = plan.summary.add + plan.summary.change + plan.summary.delete;
    if cli.format == Format::Human {
        write!(io.stdout, "{}", report::plan(&plan))?;
    }
    let mut code = plan_code(&plan);
    let forced = if a.force_conflicts {
        plan.summary.conflict
    } else {
        0
    };
    if pending + forced > 0 && !a.yes {
        use std::io::IsTerminal;
        // Ask only on a terminal (both ends): scripts must say --yes.
        let stdin = std::io::stdin();
        if !(io.stderr_is_terminal && stdin.is_terminal()) {
            writeln!(
                io.stderr,
                "error: apply needs confirmation\n  help: pass --yes to apply without asking (stdin is not a terminal)"
            )?;
            return Ok(Exit::Invalid);
        }
        if !support::confirm(&mut stdin.lock(), io.stderr)? {
            writeln!(io.stderr, "Apply cancelled.")?;
            return Ok(Exit::Gate);
        }
    }
    // Clusters that could not be planned, or whose plan holds writes that
    // will not land (an object the cluster refuses, a missing namespace, a
    // conflict): prunes elsewhere wait for them, since what a cluster gives
    // up may be moving there.
    let failed: Vec<&str> = plan
        .clusters
        .iter()
        .filter(|p| {
            p.error.is_some()
                || p.changes.iter().any(|c| {
                    c.action == crate::sync::plan::Action::Error
                        || (c.action == crate::sync::plan::Action::Conflict
                            && !(a.force_conflicts
                                && c.conflict.as_ref().is_some_and(|k| k.forceable())))
                })
        })
        .map(|p| p.cluster.as_str())
        .collect();
    let options = |cluster: &str| ApplyOptions {
        failed_elsewhere: failed
            .iter()
            .filter(|c| **c != cluster)
            .map(|c| c.to_string())
            .collect(),
        force_conflicts: a.force_conflicts,
        preconditions: preconditions.get(cluster).cloned().unwrap_or_default(),
        wait: a.wait.then(|| crate::sync::apply::Wait {
            timeout: Duration::from_secs(a.wait_timeout),
            interval: Duration::from_secs_f64(a.wait_interval),
        }),
    };
    let s = settings(&plan.repository, Vec::new());
    let work: Vec<(&ClusterPlan, Option<Conn>)> = plan.clusters.iter().zip(conns).collect();
    let results: Vec<ClusterApply> = rt.block_on(run::for_each_cluster(
        work,
        usize::from(a.common.parallel),
        |(p, conn): (&ClusterPlan, Option<Conn>)| {
            let o = options(&p.cluster);
            let s = s.clone();
            let progress = &progress;
            async move {
                match (&p.error, conn) {
                    (Some(e), _) => ClusterApply {
                        cluster: p.cluster.clone(),
                        error: Some(e.clone()),
                        ..ClusterApply::default()
                    },
                    (None, None) => ClusterApply {
                        cluster: p.cluster.clone(),
                        error: Some(ClusterError {
                            code: Code::ClusterUnreachable.as_str().into(),
                            message: "no connection".into(),
                            help: None,
                        }),
                        ..ClusterApply::default()
                    },
                    (None, Some(conn)) => {
                        let r = crate::sync::apply::apply_cluster(&conn, p, &o, &s, progress).await;
                        progress.finish(&p.cluster, "applied");
                        r
                    }
                }
            }
        },
    ));
    let rollout_failed = results
        .iter()
        .flat_map(|r| &r.rollout)
        .any(|n| n.timed_out || n.state == nodes::Rollout::Failed);
    if cli.format == Format::Json {
        super::common::write_json(
            io,
            "apply",
            &json!({"repository": plan.repository,
                    "revision": plan.revision, "clusters": results,
                    "writes": results.iter().map(|r| r.writes).sum::<usize>(),
                    "plan": plan}),
        )?;
    } else {
        writeln!(io.stdout)?;
        write!(io.stdout, "{}", report::applied(&results))?;
        let writes: usize = results.iter().map(|r| r.writes).sum();
        writeln!(
            io.stdout,
            "Apply complete: {writes} write{} in {} cluster{}.",
            if writes == 1 { "" } else { "s" },
            results.len(),
            if results.len() == 1 { "" } else { "s" }
        )?;
    }
    let failed: Vec<String> = results
        .iter()
        .filter(|r| r.error.is_some() || r.failed() > 0)
        .map(|r| r.cluster.clone())
        .collect();
    if !failed.is_empty() {
        writeln!(
            io.stderr,
            "error: applying failed in: {}",
            failed.join(", ")
        )?;
        code = Exit::External;
    } else if rollout_failed {
        let bad: Vec<String> = results
            .iter()
            .flat_map(|r| &r.rollout)
            .filter(|n| n.timed_out || n.state == nodes::Rollout::Failed)
            .map(|n| {
                let why = if n.timed_out {
                    Code::MigRolloutTimeout
                } else {
                    Code::MigRolloutFailed
                };
                format!("{} ({})", n.node, why.as_str())
            })
            .collect();
        writeln!(
            io.stderr,
            "error: MIG reconfiguration did not succeed on: {}",
            bad.join(", ")
        )?;
        code = Exit::External;
    } else if results.iter().any(|r| r.skipped() > 0) {
        code = code.max(Exit::Gate);
    } else if code == Exit::Gate && a.force_conflicts {
        code = Exit::Ok;
    }
    Ok(code)
}

fn read_plan(file: &std::path::Path, io: &mut Io<'_>) -> Result<Plan, Stop> {
    let text = match super::sync_planfile::read_text(file) {
        Ok(t) => t,
        Err(e) => {
            writeln!(
                io.stderr,
                "error: cannot read the plan {}: {e}",
                file.display()
            )?;
            return Err(Stop::Exit(Exit::Invalid));
        }
    };
    match serde_json::from_str::<Plan>(&text) {
        Ok(p) if p.version == PLAN_VERSION => {
            // What `plan --out` writes: each cluster once, a time that reads.
            let mut seen = std::collections::BTreeSet::new();
            let twice = p.clusters.iter().find(|c| !seen.insert(c.cluster.as_str()));
            let why = if let Some(c) = twice {
                Some(format!("it lists cluster `{}` twice", c.cluster))
            } else if p.at.parse::<crate::model::Timestamp>().is_err() {
                Some(format!(
                    "its `at` (`{}`) is not a time",
                    p.at.escape_debug()
                ))
            } else {
                None
            };
            if let Some(why) = why {
                writeln!(
                    io.stderr,
                    "error: {} is not a plan capops wrote: {why}\n  help: write one with `capops plan --out FILE`",
                    file.display()
                )?;
                return Err(Stop::Exit(Exit::Invalid));
            }
            Ok(p)
        }
        Ok(p) => {
            writeln!(
                io.stderr,
                "error: the plan {} has format version {}, this capops reads {PLAN_VERSION}\n  help: make the plan again with this capops",
                file.display(),
                p.version
            )?;
            Err(Stop::Exit(Exit::Invalid))
        }
        Err(e) => {
            writeln!(
                io.stderr,
                "error: {} is not a capops plan: {e}\n  help: write one with `capops plan --out FILE`",
                file.display()
            )?;
            Err(Stop::Exit(Exit::Invalid))
        }
    }
}
