//! The effect of a change, for `check --base`: the base revision and the head
//! rendered in memory (each with its own templates) on the clusters and
//! clouds the change touches, at `--at` and at the instants where the
//! change's requests hold the most beyond what the base's held (per team and
//! cluster, over every start and end of their windows, old and new), and
//! compared object by object; each file keeps its largest quota rise. Rendering the head's
//! documents with the base's templates too tells what the templates alone
//! change.

use crate::diag::{Code, Diagnostic};
use crate::load::templates::TemplateFile;
use crate::model::{Kind, Repo, RequestSpec, Timestamp};
use crate::policy::change::{ChangeKind, Changed};
use crate::policy::facts::EffectFacts;
use crate::render::effects::{self, FileEffect};
use crate::render::{self, templates};
use std::collections::{BTreeMap, BTreeSet};

/// What a change does on clusters and clouds.
#[derive(Debug, Clone, Default)]
pub struct Effects {
    /// The instants rendered, RFC 3339.
    pub instants: Vec<String>,
    pub files: Vec<FileEffect>,
    pub summary: EffectFacts,
    /// Files whose content the template change alone changes.
    pub template_caused: Vec<String>,
    /// Problems of the head's templates found while rendering the head.
    pub template_problems: Vec<Diagnostic>,
}

/// Codes of the problems a template override causes when it renders.
const TEMPLATE_CODES: [Code; 5] = [
    Code::TemplateError,
    Code::TemplateOutputInvalid,
    Code::TemplateChangesGoverned,
    Code::ReservedLabel,
    Code::QuotaKeyNotEnforced,
];

/// The template problems among a render's diagnostics.
pub fn template_problems(rendered: &render::Rendered) -> Vec<Diagnostic> {
    rendered
        .diagnostics
        .iter()
        .filter(|d| TEMPLATE_CODES.contains(&d.code))
        .cloned()
        .collect()
}

/// A Kueue cluster over Kueue's rules: render, plan and apply refuse it
/// whatever the Config lowered the lint to (rendered without its queues,
/// apply would prune the live ones), so a pull request that leads there is
/// refused by `check` too, not approved into a repository nothing deploys.
pub fn kueue_refusals(head: &Repo) -> Vec<Diagnostic> {
    head.clusters
        .values()
        .flat_map(render::lint::kueue_cluster)
        .filter(Diagnostic::is_error)
        .collect()
}

/// Drops the copy of a problem the Config lowered where the same problem is
/// also an error (it stops the render anyway): shown once, as the error.
pub fn drop_lowered_copies(diagnostics: &mut Vec<Diagnostic>) {
    type Key = (Code, Option<crate::diag::Span>, String);
    let errors: Vec<Key> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| (d.code, d.span(), d.message.clone()))
        .collect();
    diagnostics
        .retain(|d| d.is_error() || !errors.contains(&(d.code, d.span(), d.message.clone())));
}

fn compile(files: &[TemplateFile]) -> templates::Templates {
    let mut sources = crate::diag::SourceMap::new();
    let mut diags = Vec::new();
    let overrides: Vec<templates::Override> = files
        .iter()
        .filter_map(|f| {
            let text = f.text.as_ref().ok()?;
            let file = sources.add(format!("templates/{}", f.name), text.clone());
            Some(templates::Override {
                name: f.name.clone(),
                text: text.clone(),
                file,
            })
        })
        .collect();
    templates::Templates::new(&overrides, &mut diags)
}

/// The clusters a change touches (`None`: all of them, and the clouds).
fn touched(
    head: &Repo,
    base: &Repo,
    changes: &[Changed],
    templates_changed: bool,
) -> Option<BTreeSet<String>> {
    if templates_changed {
        return None;
    }
    let mut out = BTreeSet::new();
    for c in changes {
        match c.kind {
            Kind::CapacityRequest => {
                for repo in [head, base] {
                    if let Some(r) = repo.requests.get(&c.name) {
                        out.insert(r.spec.cluster.value.clone());
                    }
                }
                if let Some(p) = c.change.previous::<RequestSpec>() {
                    out.insert(p.spec.cluster.value.clone());
                }
            }
            Kind::Team => {
                for repo in [head, base] {
                    if let Some(t) = repo.teams.get(&c.name) {
                        out.extend(t.spec.clusters.keys().map(|k| k.value.clone()));
                    }
                }
            }
            Kind::Cluster => {
                // A reservation's Terraform reads the pool it covers (a GCP
                // commitment's accelerator type and amount): the clouds too.
                let covered = [head, base].iter().any(|repo| {
                    repo.reservations
                        .values()
                        .any(|r| r.spec.covers.cluster.value == c.name)
                });
                if covered {
                    return None;
                }
                out.insert(c.name.clone());
            }
            // Priority classes, prices, reservations, the Config and policies
            // reach every cluster or the clouds.
            Kind::PriorityClass | Kind::Reservation | Kind::Config => return None,
            Kind::ApprovalPolicy | Kind::PriceCatalog => {}
        }
    }
    Some(out)
}

/// The instants to render: `--at`; for each team, cluster and resource the
/// instant from `--at` on at which the change's requests (head) hold the
/// most units of it beyond what the same requests held in the base; and for
/// each team and cluster (a namespace's quota) the instant at which they
/// hold the most GPUs' worth of all resources together (`worth`), so that
/// resources whose own peaks are spread over time cannot hide the week
/// they are all held at once. Resources are named as the pool provides
/// them: `mig-1g.010gb` is `mig-1g.10gb`, as its quota renders. What the
/// change adds to a namespace only changes where one of their windows, old
/// or new, starts or ends, so those instants are all that is searched.
fn instants(
    head: &Repo,
    changes: &[Changed],
    at: Timestamp,
    worth: &dyn Fn(&str, &str) -> f64,
) -> Vec<Timestamp> {
    type Key = (String, String, String);
    type Row = (Key, Option<(Timestamp, Timestamp)>, i64);
    // (team, cluster, resource, window, units: negative for the base's side)
    // of the changed requests.
    let side = |s: &RequestSpec, sign: i64, rows: &mut Vec<Row>| {
        let w = s.window.as_ref().map(|w| (w.start.value, w.end.value));
        for (resource, count) in &s.resources {
            rows.push((
                (
                    s.team.value.clone(),
                    s.cluster.value.clone(),
                    canonical(head, s, &resource.value),
                ),
                w,
                i64::from(count.value.0) * sign,
            ));
        }
    };
    let mut rows = Vec::new();
    for c in changes.iter().filter(|c| c.kind == Kind::CapacityRequest) {
        if c.change.kind == ChangeKind::Unchanged {
            continue;
        }
        if c.change.kind != ChangeKind::Removed
            && let Some(r) = head.requests.get(&c.name)
        {
            side(&r.spec, 1, &mut rows);
        }
        if let Some(p) = c.change.previous::<RequestSpec>() {
            side(&p.spec, -1, &mut rows);
        }
    }
    // What each (team, cluster, resource) gains at `--at`, then a sweep over
    // the later starts and ends (sorted once: linear in the change's requests).
    let mut level: BTreeMap<&Key, i64> = BTreeMap::new();
    let mut events: Vec<(Timestamp, &Key, i64)> = Vec::new();
    for (key, w, units) in &rows {
        match w {
            None => *level.entry(key).or_default() += units,
            Some((start, end)) => {
                if *start <= at && at < *end {
                    *level.entry(key).or_default() += units;
                } else if *start > at {
                    events.push((*start, key, *units));
                }
                if *end > at && *end > *start {
                    events.push((*end, key, -units));
                }
            }
        }
    }
    // A namespace's gain: each resource's rise (a fall pays for no other
    // resource's rise, as the quota rules count it), at what a unit is
    // worth; kept up to date as the sweep moves (linear, not a walk of
    // every resource at every event).
    let unit: BTreeMap<&Key, f64> = rows
        .iter()
        .map(|(k, _, _)| (k, worth(&k.1, &k.2)))
        .collect();
    let rise = |k: &Key, g: i64| g.max(0) as f64 * unit.get(k).copied().unwrap_or(1.0);
    let mut joint: BTreeMap<(&str, &str), f64> = BTreeMap::new();
    for (k, g) in &level {
        *joint.entry((k.0.as_str(), k.1.as_str())).or_default() += rise(k, *g);
    }
    let mut best: BTreeMap<&Key, (i64, Timestamp)> =
        level.iter().map(|(k, g)| (*k, ((*g).max(0), at))).collect();
    let mut best_joint: BTreeMap<(&str, &str), (f64, Timestamp)> =
        joint.iter().map(|(tc, g)| (*tc, (*g, at))).collect();
    events.sort_by_key(|e| e.0);
    for group in events.chunk_by(|a, b| a.0 == b.0) {
        for (_, key, delta) in group {
            let g = level.entry(*key).or_default();
            let before = rise(key, *g);
            *g += delta;
            let after = rise(key, *g);
            *joint.entry((key.0.as_str(), key.1.as_str())).or_default() += after - before;
        }
        for (t, key, _) in group {
            let g = level[key];
            let e = best.entry(*key).or_insert((0, at));
            if g > e.0 {
                *e = (g, *t);
            }
            let tc = (key.0.as_str(), key.1.as_str());
            let g = joint[&tc];
            let e = best_joint.entry(tc).or_insert((0.0, at));
            if g > e.0 + 1e-9 {
                *e = (g, *t);
            }
        }
    }
    let mut out: BTreeSet<Timestamp> = BTreeSet::from([at]);
    out.extend(best.values().map(|(_, t)| *t));
    out.extend(best_joint.values().map(|(_, t)| *t));
    out.into_iter().collect()
}

/// The later starts of the terms of the reservations a change reaches (those
/// it changes, and those covering a cluster it changes), in the base and the
/// head: render writes a commitment from its term's start, so a cluster
/// change that rewrites one not yet started shows only then.
fn term_starts(head: &Repo, base: &Repo, changes: &[Changed], at: Timestamp) -> Vec<Timestamp> {
    let named = |kind: Kind| -> BTreeSet<&str> {
        changes
            .iter()
            .filter(|c| c.kind == kind && c.change.kind != ChangeKind::Unchanged)
            .map(|c| c.name.as_str())
            .collect()
    };
    let (clusters, reservations) = (named(Kind::Cluster), named(Kind::Reservation));
    let mut out = BTreeSet::new();
    for repo in [head, base] {
        for (name, r) in &repo.reservations {
            let reached = reservations.contains(name.as_str())
                || clusters.contains(r.spec.covers.cluster.value.as_str());
            let start = r.spec.term.start.value;
            if reached && start > at && start < r.spec.term.end.value {
                out.insert(start);
            }
        }
    }
    out.into_iter().collect()
}

/// A request's resource as its pool provides it (`nvidia.com/mig-1g.010gb`
/// is `nvidia.com/mig-1g.10gb`), as its quota key renders; else as written,
/// with a MIG profile in its canonical spelling.
fn canonical(head: &Repo, s: &RequestSpec, resource: &str) -> String {
    use crate::gpu::resources;
    let written = resource.trim();
    let pool = head.clusters.get(&s.cluster.value).and_then(|c| {
        c.spec
            .node_pools
            .iter()
            .find(|p| p.name.value.as_str() == s.pool.value)
            .map(|p| (c, p))
    });
    if let Some((c, p)) = pool {
        let provided = resources::provided(p, c.spec.mig_strategy.value);
        if let Some(x) = resources::find(&provided, written, p) {
            return x.resource.clone();
        }
    }
    match resources::parse(written) {
        Ok(resources::ResourceName::Mig(m)) => {
            format!("{}{}", resources::MIG_PREFIX, crate::gpu::mig::spelling(&m))
        }
        _ => written.to_ascii_lowercase(),
    }
}

/// What one unit of `resource` is worth on `cluster`: where it is worth most
/// in the head or the base (a change that also makes units cheaper does not
/// lower what it grants), 1 a unit where no pool provides it.
fn worth(head: &Repo, base: &Repo, cluster: &str, resource: &str) -> f64 {
    if resource == "nvidia.com/gpu" {
        return 1.0;
    }
    [head, base]
        .iter()
        .filter_map(|r| r.clusters.get(cluster))
        .filter_map(|c| crate::policy::facts::team::unit_worth(&c.spec, resource))
        .fold(None, |m: Option<f64>, w| Some(m.map_or(w, |m| m.max(w))))
        .unwrap_or(1.0)
}

fn render_all(
    repo: &Repo,
    t: &templates::Templates,
    at: Timestamp,
    clusters: &Option<BTreeSet<String>>,
) -> render::Rendered {
    render::objects(
        repo,
        t,
        &render::Options {
            at,
            revision: String::new(),
            clusters: clusters.clone(),
        },
    )
}

/// Renders the base and the head and compares them. `th` is the head's
/// templates, compiled with the head's sources so that their problems point
/// into the files.
pub fn compute(
    head: &Repo,
    base: &Repo,
    base_templates: &[TemplateFile],
    head_templates: &[TemplateFile],
    th: &templates::Templates,
    changes: &[Changed],
    at: Timestamp,
) -> Effects {
    let templates_changed = base_templates != head_templates;
    let clusters = touched(head, base, changes, templates_changed);
    if clusters.as_ref().is_some_and(BTreeSet::is_empty) {
        return Effects::default();
    }
    let tb = compile(base_templates);
    let mut files: BTreeMap<String, FileEffect> = BTreeMap::new();
    let mut template_caused = BTreeSet::new();
    let mut template_problems = Vec::new();
    let worth = |cluster: &str, resource: &str| worth(head, base, cluster, resource);
    let mut when = instants(head, changes, at, &worth);
    when.extend(term_starts(head, base, changes, at));
    when.sort();
    when.dedup();
    for t in &when {
        let before = render_all(base, &tb, *t, &clusters);
        let after = render_all(head, th, *t, &clusters);
        if templates_changed {
            template_problems.extend(self::template_problems(&after));
        }
        // Each file keeps the instant where it grants the most GPU quota.
        for e in effects::diff(&before, &after) {
            match files.get(&e.path) {
                Some(kept) if effects::gpu_rise(kept, &worth) >= effects::gpu_rise(&e, &worth) => {}
                _ => {
                    files.insert(e.path.clone(), e);
                }
            }
        }
        if templates_changed {
            let same_docs = render_all(head, &tb, *t, &clusters);
            template_caused.extend(
                effects::diff(&same_docs, &after)
                    .into_iter()
                    .map(|e| e.path),
            );
        }
    }
    let files: Vec<FileEffect> = files.into_values().collect();
    Effects {
        instants: when.iter().map(|t| t.to_string()).collect(),
        summary: effects::summary(&files, &worth),
        files,
        template_caused: template_caused.into_iter().collect(),
        template_problems,
    }
}
