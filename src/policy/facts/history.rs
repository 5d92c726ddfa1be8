//! The facts of the two subjects that are not documents: the usage history
//! (`usage/*.csv`, which every forecast, utilization and stranded-spend figure
//! is made from) and the template overrides (`templates/`, which shape every
//! rendered object). Appending new hours to the history is data; changing an
//! hour the base already had is a rewrite of the evidence.

use super::Env;
use super::model::*;
use crate::model::{SeriesKey, Timestamp, Usage};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::HashMap;

/// How the usage history changed between two revisions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct UsageDelta {
    /// Hourly rows after the last hour the base had for their series (new series included).
    pub appended_rows: u64,
    /// Hours the base had (or that fall inside its history, gaps included) whose values differ;
    /// hours the base lacks up to the last hour it measured in that cluster (a backfill, of a
    /// new series or of one that had stopped); hours from the one `now` falls in on (not
    /// measured yet, or not over); new hours at which the team holds, all its pools in the
    /// cluster together, more GPUs (allocated or used) than it can hold there (its quota and
    /// borrowing in the base), or uses more GPUs than are allocated to it (`usage pull` never
    /// writes that).
    pub rewritten_rows: u64,
    /// Hours the base had that are gone.
    pub removed_rows: u64,
    /// The first rewritten or removed hour, RFC 3339 (empty when none).
    pub first_rewritten: String,
    /// Series (cluster, pool, team) the change rewrites or removes hours of.
    pub series_rewritten: Vec<String>,
}

impl UsageDelta {
    pub fn is_empty(&self) -> bool {
        self.appended_rows == 0 && self.rewritten_rows == 0 && self.removed_rows == 0
    }
}

type Row = (Option<f64>, Option<f64>);

fn rows(u: &Usage) -> HashMap<&SeriesKey, Vec<(i64, Row)>> {
    let mut out: HashMap<&SeriesKey, Vec<(i64, Row)>> = HashMap::new();
    for s in u.samples() {
        if let Some(key) = u.series.get(s.series as usize) {
            out.entry(key)
                .or_default()
                .push((s.hour(), (s.allocated(), s.used())));
        }
    }
    for v in out.values_mut() {
        v.sort_by_key(|r| r.0);
    }
    out
}

/// Used above allocated (beyond the 0.01 rounding): `usage pull` lowers used
/// to allocated, so such a row is not one of its measurements.
fn used_above_allocated(row: Row) -> bool {
    matches!(row, (Some(a), Some(u)) if u > a + 0.01 + 1e-9)
}

fn same(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => (x - y).abs() < 1e-9,
        _ => false,
    }
}

/// Compares the base's usage history with the head's, hour by hour. Only
/// hours after what the base measured, and before `now_hour` (the hour `now`
/// falls in, not over yet), are appended: after the last hour the base
/// measured in the series' cluster (or anywhere, for a new cluster), for
/// every series: `usage pull` fetches a cluster from its last committed hour
/// on, so it never writes an earlier hour of a series that had stopped. An
/// appended hour is a measurement only when its used GPUs are no more than
/// its allocated ones and what the team holds in the cluster at that hour,
/// all its pools together in the head, is no more than `ceiling` (what it
/// can hold there); otherwise it is a rewrite.
pub fn usage_delta(
    base: &Usage,
    head: &Usage,
    now_hour: i64,
    ceiling: &dyn Fn(&SeriesKey) -> f64,
) -> UsageDelta {
    let before = rows(base);
    let after = rows(head);
    let mut cluster_last: HashMap<&str, i64> = HashMap::new();
    let mut base_last = i64::MIN;
    for (key, old) in &before {
        if let Some(last) = old.last().map(|r| r.0) {
            let e = cluster_last.entry(key.cluster.as_str()).or_insert(last);
            *e = (*e).max(last);
            base_last = base_last.max(last);
        }
    }
    let mut d = UsageDelta::default();
    let mut first: Option<i64> = None;
    let mut touched = std::collections::BTreeSet::new();
    let mut mark = |d: &mut UsageDelta, key: &SeriesKey, hour: i64| {
        first = Some(first.map_or(hour, |f| f.min(hour)));
        touched.insert(format!("{}/{}/{}", key.cluster, key.pool, key.team));
        let _ = d;
    };
    // Rows after what the base measured, judged once the team's whole
    // holding in the cluster at their hour is known.
    let mut appended: Vec<(&SeriesKey, i64)> = Vec::new();
    for (key, now) in &after {
        let empty = Vec::new();
        let old = before.get(key).unwrap_or(&empty);
        // The cluster's last measured hour is at or after the series' own.
        let last = cluster_last
            .get(key.cluster.as_str())
            .copied()
            .unwrap_or(base_last);
        let old_at: HashMap<i64, Row> = old.iter().copied().collect();
        for (hour, row) in now {
            if *hour >= now_hour || (*hour > last && used_above_allocated(*row)) {
                d.rewritten_rows += 1;
                mark(&mut d, key, *hour);
                continue;
            }
            if *hour > last {
                appended.push((key, *hour));
                continue;
            }
            match old_at.get(hour) {
                Some(o) if same(o.0, row.0) && same(o.1, row.1) => {}
                _ => {
                    d.rewritten_rows += 1;
                    mark(&mut d, key, *hour);
                }
            }
        }
        let now_hours: std::collections::HashSet<i64> = now.iter().map(|r| r.0).collect();
        for (hour, _) in old {
            if !now_hours.contains(hour) {
                d.removed_rows += 1;
                mark(&mut d, key, *hour);
            }
        }
    }
    // What each team holds in a cluster at an appended hour, every pool of
    // the head counted: rows of two pools cannot each stay under the team's
    // ceiling and together exceed it.
    let hours: std::collections::HashSet<(&str, &str, i64)> = appended
        .iter()
        .map(|(k, h)| (k.team.as_str(), k.cluster.as_str(), *h))
        .collect();
    let mut held: HashMap<(&str, &str, i64), (f64, f64)> = HashMap::new();
    for (key, now) in &after {
        for (hour, row) in now {
            let at = (key.team.as_str(), key.cluster.as_str(), *hour);
            if hours.contains(&at) {
                let e = held.entry(at).or_default();
                e.0 += row.0.unwrap_or(0.0).max(0.0);
                e.1 += row.1.unwrap_or(0.0).max(0.0);
            }
        }
    }
    for (key, hour) in appended {
        let limit = ceiling(key) + 1e-9;
        let (allocated, used) = held
            .get(&(key.team.as_str(), key.cluster.as_str(), hour))
            .copied()
            .unwrap_or_default();
        // More than the team could hold there is not a measurement.
        if allocated > limit || used > limit {
            d.rewritten_rows += 1;
            mark(&mut d, key, hour);
        } else {
            d.appended_rows += 1;
        }
    }
    for (key, old) in &before {
        if !after.contains_key(key) {
            d.removed_rows += old.len() as u64;
            if let Some(h) = old.first() {
                mark(&mut d, key, h.0);
            }
        }
    }
    d.first_rewritten = first
        .and_then(|h| Timestamp::from_second(h * 3600))
        .map(|t| t.to_string())
        .unwrap_or_default();
    d.series_rewritten = touched.into_iter().collect();
    d
}

/// What the conditions of a change to the usage history read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct UsageSubject {
    /// The evaluation time (`--at`, default now), RFC 3339.
    pub now: String,
    pub config: ConfigFacts,
    /// What the change does to the rendered objects and files (zero without a base).
    pub effects: EffectFacts,
    pub change: UsageChange,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct UsageChange {
    #[serde(flatten)]
    pub base: ChangeFacts,
    #[serde(flatten)]
    pub delta: UsageDelta,
    /// Whether the change alters or removes hours the base already had.
    pub rewrites_history: bool,
    /// Who opened the pull request: its author on GitHub (`check --github`), or
    /// `check --author`; empty when unknown.
    pub author: String,
    /// Whether the author is one of the base Config's `usage.pullers` (the accounts
    /// whose pull requests append measurements), and so is everyone else who wrote or pushed
    /// the change's commits (`check --github`: a commit linked to no account, or pushers that
    /// cannot be read, count as someone else); false when the author is unknown.
    pub by_usage_puller: bool,
}

/// Builds the facts of a change to the usage history.
pub fn usage(env: &Env<'_>, delta: &UsageDelta) -> UsageSubject {
    UsageSubject {
        now: env.at.to_string(),
        config: super::config_facts(env.config, env.world),
        effects: env.effects.clone(),
        change: UsageChange {
            base: ChangeFacts {
                kind: "modified".into(),
                fields: Vec::new(),
            },
            delta: delta.clone(),
            rewrites_history: delta.rewritten_rows > 0 || delta.removed_rows > 0,
            author: env.author.unwrap_or_default().to_string(),
            by_usage_puller: env.author.is_some_and(|a| is_puller(env.config, a))
                && env.co_authors.iter().all(|a| is_puller(env.config, a)),
        },
    }
}

/// Whether `login` is one of the Config's usage pullers (case-insensitive,
/// a leading `@` ignored on either side).
pub fn is_puller(config: &crate::model::ConfigSpec, login: &str) -> bool {
    let login = login.trim_start_matches('@');
    !login.is_empty()
        && config
            .usage
            .pullers
            .iter()
            .any(|p| p.value.trim_start_matches('@').eq_ignore_ascii_case(login))
}

/// Template overrides the change adds, modifies or removes, by path under `templates/`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, JsonSchema)]
pub struct TemplateDelta {
    /// Templates the change adds.
    pub added: Vec<String>,
    /// Templates the change modifies.
    pub modified: Vec<String>,
    /// Templates the change removes.
    pub removed: Vec<String>,
    /// Rendered files whose content the template change alone changes.
    pub rendered_files_changed: Vec<String>,
    /// Files of the committed output folder the change adds, edits or removes so that they
    /// differ from what `capops render` writes for the head (hand edits to what Argo CD, Flux
    /// or Terraform apply).
    pub output_edited: Vec<String>,
}

impl TemplateDelta {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.modified.is_empty()
            && self.removed.is_empty()
            && self.output_edited.is_empty()
    }
}

/// How the template overrides differ between two revisions (by name and text).
pub fn template_delta(
    base: &[crate::load::templates::TemplateFile],
    head: &[crate::load::templates::TemplateFile],
) -> TemplateDelta {
    let before: std::collections::BTreeMap<&str, &Result<String, String>> =
        base.iter().map(|t| (t.name.as_str(), &t.text)).collect();
    let after: std::collections::BTreeMap<&str, &Result<String, String>> =
        head.iter().map(|t| (t.name.as_str(), &t.text)).collect();
    TemplateDelta {
        added: after
            .keys()
            .filter(|k| !before.contains_key(*k))
            .map(|k| k.to_string())
            .collect(),
        modified: after
            .iter()
            .filter(|(k, v)| before.get(*k).is_some_and(|b| b != *v))
            .map(|(k, _)| k.to_string())
            .collect(),
        removed: before
            .keys()
            .filter(|k| !after.contains_key(*k))
            .map(|k| k.to_string())
            .collect(),
        rendered_files_changed: Vec::new(),
        output_edited: Vec::new(),
    }
}

/// What the conditions of a change to the templates read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TemplatesSubject {
    /// The evaluation time (`--at`, default now), RFC 3339.
    pub now: String,
    pub config: ConfigFacts,
    /// What the change does to the rendered objects and files (zero without a base).
    pub effects: EffectFacts,
    pub change: TemplatesChange,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct TemplatesChange {
    #[serde(flatten)]
    pub base: ChangeFacts,
    #[serde(flatten)]
    pub delta: TemplateDelta,
}

/// Builds the facts of a change to the templates.
pub fn templates(env: &Env<'_>, delta: &TemplateDelta) -> TemplatesSubject {
    TemplatesSubject {
        now: env.at.to_string(),
        config: super::config_facts(env.config, env.world),
        effects: env.effects.clone(),
        change: TemplatesChange {
            base: ChangeFacts {
                kind: "modified".into(),
                fields: Vec::new(),
            },
            delta: delta.clone(),
        },
    }
}
