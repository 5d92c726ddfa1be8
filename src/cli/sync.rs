//! `capops plan`, `drift` and `verify` (`apply` is [`super::sync_apply`]): thin glue from the command line to
//! [`crate::sync`]. Each renders the repository in memory, connects to each
//! cluster through its Cluster's kubeContext, and reports every cluster
//! separately; exit 3 names the clusters that failed.

use super::common::{Exit, Outcome, write_json};
use super::sync_support::{self as support, Bars, Common, Loaded, Target};
use super::{Cli, Io};
use crate::diag::Code;
use crate::output::Format;
use crate::sync::client::Conn;
use crate::sync::credential_plugin::Plugins;
use crate::sync::plan::{ClusterPlan, PLAN_VERSION, Plan};
use crate::sync::run::{self, Progress, Settings};
use crate::sync::{nodes, report};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub common: Common,
    /// Also write the plan as JSON to this file, for `capops apply --plan`.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub(super) fn settings(repository: &str, clusters: Vec<String>) -> Settings {
    Settings {
        repository: repository.to_string(),
        concurrency: 8,
        clusters,
    }
}

pub(super) fn bars(cli: &Cli, io: &Io<'_>) -> Bars {
    Bars::new(io.stderr_is_terminal && cli.format == Format::Human)
}

/// Connects to and plans every target, clusters in parallel.
/// Connections live on the runtime that made them: `rt` serves the apply too.
pub(super) fn plan_all(
    rt: &tokio::runtime::Runtime,
    loaded: &Loaded,
    kc: Option<&kube::config::Kubeconfig>,
    plugins: &Arc<Plugins>,
    parallel: u16,
    progress: &dyn Progress,
) -> Vec<(ClusterPlan, Option<Conn>)> {
    let s = settings(
        &loaded.repository,
        loaded.contexts.iter().map(|c| c.0.clone()).collect(),
    );
    rt.block_on(run::for_each_cluster(
        loaded.targets.iter().collect(),
        usize::from(parallel),
        |t: &Target| {
            let s = s.clone();
            async move {
                progress.start(&t.cluster, "connecting");
                let conn = match t.connect(kc, plugins).await {
                    Ok(c) => c,
                    Err(e) => {
                        progress.finish(&t.cluster, "failed");
                        let mut p = ClusterPlan {
                            cluster: t.cluster.clone(),
                            context: t.context.clone(),
                            error: Some(e),
                            ..ClusterPlan::default()
                        };
                        p.recount();
                        return (p, None);
                    }
                };
                let p = run::plan_cluster(
                    &conn,
                    &t.cluster,
                    t.context.as_deref(),
                    &t.desired,
                    &s,
                    progress,
                )
                .await;
                progress.finish(
                    &t.cluster,
                    if p.error.is_some() {
                        "failed"
                    } else {
                        "planned"
                    },
                );
                (p, Some(conn))
            }
        },
    ))
}

pub(super) fn plan_of(loaded: &Loaded, clusters: Vec<ClusterPlan>) -> Plan {
    let mut p = Plan {
        version: PLAN_VERSION,
        repository: loaded.repository.clone(),
        revision: loaded.revision.clone(),
        at: loaded.at.clone(),
        clusters,
        summary: Default::default(),
    };
    p.recount();
    p
}

/// Exit code of a plan: 3 when a cluster or an object failed, 1 on conflicts.
pub(super) fn plan_code(p: &Plan) -> Exit {
    if p.clusters.iter().any(|c| c.error.is_some()) || p.summary.error > 0 {
        Exit::External
    } else if p.summary.conflict > 0 {
        Exit::Gate
    } else {
        Exit::Ok
    }
}

fn failed_line(io: &mut Io<'_>, p: &Plan) -> std::io::Result<()> {
    let failed: Vec<String> = p
        .clusters
        .iter()
        .filter_map(|c| {
            c.error
                .as_ref()
                .map(|e| format!("{} ({})", c.cluster, e.code))
        })
        .collect();
    if !failed.is_empty() {
        writeln!(io.stderr, "error: could not sync: {}", failed.join(", "))?;
    }
    Ok(())
}

pub fn plan(cli: &Cli, a: &PlanArgs, io: &mut Io<'_>) -> Outcome {
    if matches!(cli.format, Format::Sarif | Format::Html | Format::Markdown) {
        writeln!(
            io.stderr,
            "error: `capops plan` writes human or json\n  help: `capops drift --format markdown` writes an issue body"
        )?;
        return Ok(Exit::Invalid);
    }
    // The plan file replaces only a plan, and never lands where capops
    // reads: checked before any cluster is asked.
    if let Some(out) = &a.out {
        let why = super::common::refuse_output(&a.common.path, out).or_else(|| {
            super::sync_planfile::replaceable(out)
                .err()
                .map(|why| format!("--out {}: {why}", out.display()))
        });
        if let Some(why) = why {
            writeln!(
                io.stderr,
                "error: {why}\n  help: write the plan to a new file, or to an older plan; nothing was written"
            )?;
            return Ok(Exit::Invalid);
        }
    }
    let loaded = support::load(cli, &a.common, io)?;
    let kc = support::kubeconfig(&a.common, io)?;
    let plugins = support::plugins(io)?;
    support::refuse_shared_servers(&loaded, kc.as_ref(), io)?;
    let progress = bars(cli, io);
    let rt = support::runtime()?;
    let planned = plan_all(
        &rt,
        &loaded,
        kc.as_ref(),
        &plugins,
        a.common.parallel,
        &progress,
    );
    let plan = plan_of(&loaded, planned.into_iter().map(|(p, _)| p).collect());
    let text = serde_json::to_string_pretty(&plan).unwrap_or_default();
    let unplanned = plan.clusters.iter().filter(|c| c.error.is_some()).count();
    match &a.out {
        // A plan missing clusters is not one to apply: the file keeps what
        // it held.
        Some(out) if unplanned > 0 => writeln!(
            io.stderr,
            "{} not written: {unplanned} cluster{} could not be planned",
            out.display(),
            if unplanned == 1 { "" } else { "s" }
        )?,
        Some(out) if !support::write_file(io, out, &format!("{text}\n"))? => {
            return Ok(Exit::External);
        }
        _ => {}
    }
    if cli.format == Format::Json {
        writeln!(io.stdout, "{text}")?;
    } else {
        write!(io.stdout, "{}", report::plan(&plan))?;
    }
    failed_line(io, &plan)?;
    Ok(plan_code(&plan))
}

pub fn drift(cli: &Cli, c: &Common, io: &mut Io<'_>) -> Outcome {
    if matches!(cli.format, Format::Sarif | Format::Html) {
        writeln!(
            io.stderr,
            "error: `capops drift` writes human, json or markdown"
        )?;
        return Ok(Exit::Invalid);
    }
    let loaded = support::load(cli, c, io)?;
    let kc = support::kubeconfig(c, io)?;
    let plugins = support::plugins(io)?;
    support::refuse_shared_servers(&loaded, kc.as_ref(), io)?;
    let progress = bars(cli, io);
    let rt = support::runtime()?;
    let planned = plan_all(&rt, &loaded, kc.as_ref(), &plugins, c.parallel, &progress);
    let plan = plan_of(&loaded, planned.into_iter().map(|(p, _)| p).collect());
    let drifted = plan.summary.drifted() || plan.summary.error > 0;
    match cli.format {
        Format::Json => write_json(io, "drift", &json!({"drifted": drifted, "plan": plan}))?,
        Format::Markdown => write!(io.stdout, "{}", report::drift_markdown(&plan))?,
        _ => {
            if drifted {
                writeln!(
                    io.stdout,
                    "Drift: the clusters differ from the capacity repository.\n"
                )?;
            }
            write!(io.stdout, "{}", report::plan(&plan))?;
        }
    }
    failed_line(io, &plan)?;
    Ok(if plan.clusters.iter().any(|c| c.error.is_some()) {
        Exit::External
    } else if drifted {
        Exit::Gate
    } else {
        Exit::Ok
    })
}

pub fn verify(cli: &Cli, c: &Common, io: &mut Io<'_>) -> Outcome {
    if !matches!(cli.format, Format::Human | Format::Json) {
        writeln!(io.stderr, "error: `capops verify` writes human or json")?;
        return Ok(Exit::Invalid);
    }
    let loaded = support::load(cli, c, io)?;
    let kc = support::kubeconfig(c, io)?;
    let plugins = support::plugins(io)?;
    let rt = support::runtime()?;
    let results = rt.block_on(run::for_each_cluster(
        loaded.targets.iter().collect(),
        usize::from(c.parallel),
        |t: &Target| {
            let kc = kc.as_ref();
            let plugins = &plugins;
            async move {
                let conn = match t.connect(kc, plugins).await {
                    Ok(c) => c,
                    Err(e) => return (t, Err(e)),
                };
                let pools: Vec<(String, BTreeMap<String, String>)> = t
                    .spec
                    .node_pools
                    .iter()
                    .map(|p| (p.name.value.as_str().to_string(), p.plain_labels()))
                    .collect();
                (t, run::pool_nodes(&conn, &pools).await)
            }
        },
    ));
    let mut out = Vec::new();
    let mut text = String::new();
    let (mut mismatched, mut failed) = (false, Vec::new());
    for (t, r) in results {
        match r {
            Ok(found) => {
                let mig: BTreeMap<String, String> = t
                    .desired
                    .pools
                    .iter()
                    .filter_map(|p| {
                        p.labels
                            .get(crate::render::kube::MIG_LABEL)
                            .map(|l| (p.pool.clone(), l.clone()))
                    })
                    .collect();
                let m = nodes::verify(&t.spec, &found, &mig);
                mismatched |= !m.is_empty();
                text.push_str(&report::mismatches(&t.cluster, &m));
                let code = (!m.is_empty()).then_some(Code::NodeMismatch.as_str());
                out.push(json!({"cluster": t.cluster, "code": code, "mismatches": m}));
            }
            Err(e) => {
                text.push_str(&format!(
                    "cluster {}:\n  error[{}]: {}\n",
                    t.cluster, e.code, e.message
                ));
                failed.push(format!("{} ({})", t.cluster, e.code));
                out.push(json!({"cluster": t.cluster, "error": e}));
            }
        }
    }
    if cli.format == Format::Json {
        write_json(io, "verify", &json!({"clusters": out}))?;
    } else {
        write!(io.stdout, "{text}")?;
    }
    if !failed.is_empty() {
        writeln!(io.stderr, "error: could not verify: {}", failed.join(", "))?;
        return Ok(Exit::External);
    }
    Ok(if mismatched { Exit::Gate } else { Exit::Ok })
}
