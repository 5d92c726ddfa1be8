//! Turning one cluster's query answers into hourly rows per pool and team.
//!
//! A node belongs to the pool whose `nodeLabels` it carries (as
//! kube-state-metrics writes them: `label_<key with non-alphanumerics as _>`),
//! hour by hour, so nodes that join, leave or move are counted where they
//! were. A namespace belongs to the team whose Team document names it in this
//! cluster. Allocated units become GPU-equivalents the way capops counts
//! requests: a MIG instance is its compute slices over the GPU's, a
//! time-sliced replica is 1 / replicas. Used activity on a MIG instance
//! (`profile` label) is scaled the same way.
//!
//! An hour is measured when the answers hold any point for it: allocation is
//! known when kube-state-metrics saw nodes, use when dcgm-exporter reported
//! any GPU (idle GPUs included). In a measured hour a team with nothing is a
//! zero; in an hour with no measurement every value is empty (a gap). Gaps
//! between measured hours are written; hours after the last measured one are
//! not, so the next pull asks for them again. Values are rounded to 0.01 GPU
//! and used never exceeds allocated.

use super::matrix::Series;
use crate::gpu::catalog::{self, MigModel};
use crate::gpu::mig;
use crate::gpu::resources::{self, Provided};
use crate::model::Repo;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How one cluster's nodes, namespaces and resources map to pools, teams and GPUs.
pub struct Attribution<'a> {
    pub cluster: &'a str,
    pools: Vec<PoolMatch<'a>>,
    namespaces: HashMap<&'a str, &'a str>,
}

struct PoolMatch<'a> {
    name: &'a str,
    /// `(kube-state-metrics label, value)` pairs a node must carry.
    selector: Vec<(String, &'a str)>,
    provided: Vec<Provided>,
    mig: Option<&'static MigModel>,
    /// Compute slices the pool's MIG layout shares out (`resources::mig_share`).
    share: Option<u32>,
}

/// The label kube-state-metrics gives a node label in `kube_node_labels`.
pub fn node_label_name(key: &str) -> String {
    let mut s = String::from("label_");
    s.extend(key.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '_'
        }
    }));
    s
}

/// The name kube-state-metrics gives a resource (`nvidia.com/mig-1g.10gb` ->
/// `nvidia_com_mig_1g_10gb`).
pub fn resource_label(resource: &str) -> String {
    resource
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

impl<'a> Attribution<'a> {
    /// The attribution for a cluster of the repository, if it exists.
    pub fn new(repo: &'a Repo, cluster: &'a str) -> Option<Attribution<'a>> {
        let spec = &repo.clusters.get(cluster)?.spec;
        let pools = spec
            .node_pools
            .iter()
            .map(|p| PoolMatch {
                name: p.name.value.as_str(),
                selector: p
                    .node_labels
                    .iter()
                    .map(|(k, v)| (node_label_name(k), v.as_str()))
                    .collect(),
                provided: resources::provided(p, spec.mig_strategy.value),
                mig: catalog::model(&p.gpu_model.value).and_then(|m| m.mig.as_ref()),
                share: resources::mig_share(p),
            })
            .collect();
        let namespaces = repo
            .teams
            .iter()
            .filter_map(|(team, doc)| {
                let tc = doc
                    .spec
                    .clusters
                    .iter()
                    .find(|(c, _)| c.value == cluster)?
                    .1;
                Some((tc.namespace.value.as_str(), team.as_str()))
            })
            .collect();
        Some(Attribution {
            cluster,
            pools,
            namespaces,
        })
    }

    /// Pools whose `nodeLabels` are empty: no node can be counted to them.
    pub fn pools_without_labels(&self) -> Vec<String> {
        self.pools
            .iter()
            .filter(|p| p.selector.is_empty())
            .map(|p| p.name.to_string())
            .collect()
    }

    /// The pools a node with these labels belongs to.
    fn pools_of(&self, labels: &BTreeMap<String, String>) -> Vec<usize> {
        (0..self.pools.len())
            .filter(|&i| {
                let sel = &self.pools[i].selector;
                !sel.is_empty()
                    && sel
                        .iter()
                        .all(|(k, v)| labels.get(k).is_some_and(|x| x == v))
            })
            .collect()
    }

    /// GPU-equivalents of one unit of a kube-state-metrics resource on a pool,
    /// and whether the pool declares that resource.
    fn allocated_equivalent(&self, pool: usize, resource: &str) -> (f64, bool) {
        let p = &self.pools[pool];
        if let Some(found) = p
            .provided
            .iter()
            .find(|x| resource_label(&x.resource) == resource)
        {
            return (found.gpu_equivalent, true);
        }
        let slices = p.share.or(p.mig.map(|m| m.compute_slices)).unwrap_or(7) as f64;
        let eq = resource
            .strip_prefix("nvidia_com_mig_")
            .and_then(|rest| rest.split('g').next())
            .and_then(|g| g.parse::<f64>().ok())
            .map(|g| g / slices)
            .unwrap_or(1.0);
        (eq, false)
    }

    /// GPU-equivalents of one unit of activity on a MIG instance of `profile`
    /// (a whole GPU when empty).
    fn used_equivalent(&self, pool: usize, profile: &str) -> f64 {
        if profile.is_empty() {
            return 1.0;
        }
        let p = &self.pools[pool];
        let slices = p.share.or(p.mig.map(|m| m.compute_slices)).unwrap_or(7) as f64;
        match p.mig.and_then(|m| mig::resolve(m, profile).ok()) {
            Some(r) => r.profile.compute_slices as f64 / slices,
            None => mig::parse_name(profile)
                .map(|n| n.gpu_slices as f64 / slices)
                .unwrap_or(1.0),
        }
    }
}

/// The three answers for one cluster, every chunk concatenated.
#[derive(Clone, Debug, Default)]
pub struct Answers {
    pub allocated: Vec<Series>,
    pub used: Vec<Series>,
    pub nodes: Vec<Series>,
}

/// One hourly row of the usage history.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Hours since the epoch of the hour described.
    pub hour: i64,
    pub pool: String,
    pub team: String,
    pub allocated: Option<f64>,
    pub used: Option<f64>,
}

/// What was made of one cluster's answers.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Hours written (measured or gaps between measured ones).
    pub hours: usize,
    /// Hours written as gaps.
    pub gap_hours: usize,
    /// Measured hours at the end of the window left out (asked again next time).
    pub trailing_unmeasured_hours: usize,
    pub series: usize,
    pub rows: usize,
    /// Allocated GPU-hours that could not be counted to a pool and team, by reason.
    pub unattributed: BTreeMap<String, f64>,
    pub pools_without_labels: Vec<String>,
    /// Nodes whose labels matched more than one pool (counted to the first).
    pub ambiguous_nodes: BTreeSet<String>,
    /// Resources requested on a pool that does not declare them.
    pub undeclared_resources: BTreeSet<String>,
    /// Rows whose used GPUs were lowered to the allocated ones.
    pub clamped: usize,
    /// Points Prometheus answered as `NaN` or `±Inf`: the cells they fall in
    /// are left empty (unknown), never read as 0 or summed without them.
    pub unknown_values: usize,
}

const ABSENT: u16 = u16::MAX;
const NO_POOL: u16 = u16::MAX - 1;

/// Rows for the hours `[start, end)`. `continuing` are series committed
/// before with something allocated in their last row: they get rows (zeros
/// if need be) so that an ending is recorded. `has_history` says whether the
/// file already holds hours before `start`: then unmeasured hours at the
/// start are gaps to write rather than time before the history began.
pub fn build(
    attr: &Attribution<'_>,
    answers: &Answers,
    hours: (i64, i64),
    continuing: &BTreeSet<(String, String)>,
    has_history: bool,
) -> (Vec<Row>, Stats) {
    let (start, end) = hours;
    let n = (end - start).max(0) as usize;
    let mut stats = Stats {
        pools_without_labels: attr.pools_without_labels(),
        ..Stats::default()
    };
    let index = |t: i64| -> Option<usize> {
        if t.rem_euclid(3600) != 0 {
            return None;
        }
        let h = t / 3600 - 1;
        (start..end).contains(&h).then(|| (h - start) as usize)
    };

    // Node -> pool, hour by hour.
    let mut node_pool: HashMap<&str, Vec<u16>> = HashMap::new();
    let mut alloc_known = vec![false; n];
    for s in &answers.nodes {
        let node = s.label("node");
        let pools = attr.pools_of(&s.labels);
        if pools.len() > 1 {
            stats.ambiguous_nodes.insert(node.to_string());
        }
        let p = pools.first().map(|&i| i as u16).unwrap_or(NO_POOL);
        let slots = node_pool.entry(node).or_insert_with(|| vec![ABSENT; n]);
        for &(t, v) in &s.points {
            if v.is_nan() {
                stats.unknown_values += 1;
                continue;
            }
            if let Some(i) = index(t) {
                alloc_known[i] = true;
                if slots[i] == ABSENT || slots[i] == NO_POOL || (p != NO_POOL && p < slots[i]) {
                    slots[i] = p;
                }
            }
        }
    }
    let pool_at = |node: &str, i: usize| -> Option<usize> {
        match node_pool.get(node).map(|v| v[i]) {
            Some(p) if p != ABSENT && p != NO_POOL => Some(p as usize),
            _ => None,
        }
    };

    type Acc<'s> = HashMap<(usize, &'s str), Vec<f64>>;
    let mut allocated: Acc<'_> = HashMap::new();
    for s in &answers.allocated {
        let (ns, node, resource) = (s.label("namespace"), s.label("node"), s.label("resource"));
        let team = attr.namespaces.get(ns).copied();
        for &(t, v) in &s.points {
            let Some(i) = index(t) else { continue };
            if v.is_nan() {
                stats.unknown_values += 1;
            }
            let pool = pool_at(node, i);
            let (eq, declared) = pool
                .map(|p| attr.allocated_equivalent(p, resource))
                .unwrap_or((1.0, true));
            match (pool, team) {
                (Some(p), Some(team)) => {
                    if !declared {
                        stats
                            .undeclared_resources
                            .insert(format!("{} on {}", resource, attr.pools[p].name));
                    }
                    // NaN stays NaN: the cell is unknown.
                    allocated.entry((p, team)).or_insert_with(|| vec![0.0; n])[i] += v * eq;
                }
                _ if v.is_nan() => {}
                (_, None) => {
                    let why = format!("namespace `{ns}` belongs to no Team in this cluster");
                    *stats.unattributed.entry(why).or_default() += v * eq;
                }
                (None, Some(_)) => {
                    let why = format!("node `{node}` matches no pool's nodeLabels");
                    *stats.unattributed.entry(why).or_default() += v * eq;
                }
            }
        }
    }

    let mut used: Acc<'_> = HashMap::new();
    let mut used_known = vec![false; n];
    for s in &answers.used {
        let (ns, node, profile) = (s.label("namespace"), s.label("node"), s.label("profile"));
        let team = attr.namespaces.get(ns).copied();
        for &(t, v) in &s.points {
            let Some(i) = index(t) else { continue };
            used_known[i] = true;
            if v.is_nan() {
                stats.unknown_values += 1;
            }
            if let (Some(p), Some(team)) = (pool_at(node, i), team) {
                let eq = attr.used_equivalent(p, profile);
                used.entry((p, team)).or_insert_with(|| vec![0.0; n])[i] += v * eq;
            }
        }
    }

    let measured: Vec<bool> = (0..n).map(|i| alloc_known[i] || used_known[i]).collect();
    let Some(last) = measured.iter().rposition(|&m| m) else {
        stats.trailing_unmeasured_hours = n;
        return (Vec::new(), stats);
    };
    let first = if has_history {
        0
    } else {
        measured.iter().position(|&m| m).unwrap_or(0)
    };
    stats.trailing_unmeasured_hours = n - 1 - last;

    let nonzero = |v: &Vec<f64>| v[first..=last].iter().any(|x| round(*x) > 0.0);
    let mut keys: BTreeSet<(&str, &str)> = allocated
        .iter()
        .chain(used.iter())
        .filter(|(_, v)| nonzero(v))
        .map(|((p, t), _)| (attr.pools[*p].name, *t))
        .collect();
    for (pool, team) in continuing {
        if let Some(p) = attr.pools.iter().find(|p| p.name == pool)
            && let Some(t) = attr.namespaces.values().find(|t| **t == team)
        {
            keys.insert((p.name, t));
        }
    }
    let pool_index: HashMap<&str, usize> = attr
        .pools
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name, i))
        .collect();

    let mut rows = Vec::with_capacity((last + 1 - first) * keys.len());
    for i in first..=last {
        if !measured[i] {
            stats.gap_hours += 1;
        }
        for &(pool, team) in &keys {
            let p = pool_index[pool];
            // Known for the hour, and for this cell (no NaN point in its sum).
            let cell = |known: &[bool], acc: &Acc<'_>| {
                known[i]
                    .then(|| round(acc.get(&(p, team)).map_or(0.0, |v| v[i])))
                    .filter(|x| !x.is_nan())
            };
            let a = cell(&alloc_known, &allocated);
            let mut u = cell(&used_known, &used);
            if let (Some(a), Some(x)) = (a, u.as_mut())
                && *x > a
            {
                *x = a;
                stats.clamped += 1;
            }
            rows.push(Row {
                hour: start + i as i64,
                pool: pool.to_string(),
                team: team.to_string(),
                allocated: a,
                used: u,
            });
        }
    }
    stats.hours = last + 1 - first;
    stats.series = keys.len();
    stats.rows = rows.len();
    (rows, stats)
}

/// Rounds to 0.01, never to a negative zero (a negative count stays
/// negative, for [`impossible`] to refuse, never read as 0).
fn round(v: f64) -> f64 {
    let r = (v * 100.0).round() / 100.0;
    if r == 0.0 { 0.0 } else { r }
}

/// Why the rows made of a cluster's answers cannot be its usage, if they
/// cannot: a row whose GPUs are negative, not finite, or more than its pool
/// has (`capacity`, GPU-equivalents by pool). Such a pull writes nothing: a
/// file that `validate` then refuses, or numbers made up, would be worse
/// than none. (A series sent twice in one answer is refused as it is read,
/// [`super::matrix::parse`].)
pub fn impossible(rows: &[Row], capacity: impl Fn(&str) -> Option<f64>) -> Option<String> {
    for r in rows {
        let most = capacity(&r.pool).unwrap_or(f64::INFINITY);
        for (what, v) in [("allocated", r.allocated), ("used", r.used)] {
            let Some(v) = v else { continue };
            if !v.is_finite() || v < 0.0 || v > most + 0.005 {
                return Some(format!(
                    "team `{}` in pool `{}` at {} would have {v} GPUs {what}, {}",
                    r.team,
                    r.pool,
                    jiff::Timestamp::from_second(r.hour * 3600)
                        .map_or_else(|_| r.hour.to_string(), |t| t.to_string()),
                    if v.is_finite() && v >= 0.0 {
                        format!("more than the pool's {most}")
                    } else {
                        "not a count".to_string()
                    }
                ));
            }
        }
    }
    None
}
