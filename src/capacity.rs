//! Capacity arithmetic: what requests commit, over time, against what pools hold.
//!
//! Time is counted in whole hours since the Unix epoch; a request holds its
//! resources over `[start, end)` of its window rounded out to whole hours, or
//! forever when it has no window. Per pool and resource, and per team and
//! cluster, the sum of the requests in force is a step function of time
//! ([`Timeline`]); the checks ask for its peak over a window and for the hours
//! where it exceeds the pool's capacity. A request's size in GPUs counts a MIG
//! instance as its compute slices over those its pool's layout uses (at most
//! the GPU's 7, or 4 on A30; `resources::mig_share`) and a time-sliced
//! replica as 1 / replicas.

use crate::gpu::resources::{self, Provided};
use crate::model::{ClusterSpec, Document, NodePool, Repo, RequestSpec, Timestamp};
use std::collections::{BTreeMap, HashMap};

/// Hours in the horizon used to count hours of open-ended requests and over-commits.
pub const OPEN_HORIZON_HOURS: i64 = 365 * 24;

/// A half-open range of hours; `i64::MIN` / `i64::MAX` stand for no bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hours {
    pub start: i64,
    pub end: i64,
}

impl Hours {
    pub const ALWAYS: Hours = Hours {
        start: i64::MIN,
        end: i64::MAX,
    };

    /// The hours a request holds capacity.
    pub fn of_request(spec: &RequestSpec) -> Hours {
        match &spec.window {
            Some(w) => Hours {
                start: w.start.value.as_second().div_euclid(3600),
                end: (w.end.value.as_second() + 3599).div_euclid(3600),
            },
            None => Hours::ALWAYS,
        }
    }

    pub fn overlaps(&self, other: &Hours) -> bool {
        self.start < other.end && other.start < self.end
    }

    pub fn is_open(&self) -> bool {
        self.start == i64::MIN || self.end == i64::MAX
    }

    /// The same range with open bounds replaced by `[at, at + horizon)`.
    pub fn bounded(&self, at_hour: i64) -> Hours {
        let start = if self.start == i64::MIN {
            at_hour
        } else {
            self.start
        };
        let end = if self.end == i64::MAX {
            start.max(at_hour) + OPEN_HORIZON_HOURS
        } else {
            self.end
        };
        Hours { start, end }
    }

    pub fn len(&self) -> i64 {
        (self.end - self.start).max(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A step function of time: `points[i].1` holds from `points[i].0` until the next point.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    points: Vec<(i64, f64)>,
}

impl Timeline {
    /// Builds the sum of `(hours, amount)` contributions.
    pub fn build(contributions: impl IntoIterator<Item = (Hours, f64)>) -> Timeline {
        let mut events: Vec<(i64, f64)> = Vec::new();
        for (h, amount) in contributions {
            if h.start >= h.end || amount == 0.0 {
                continue;
            }
            events.push((h.start, amount));
            if h.end != i64::MAX {
                events.push((h.end, -amount));
            }
        }
        events.sort_by_key(|e| e.0);
        let mut points: Vec<(i64, f64)> = Vec::with_capacity(events.len());
        let mut level = 0.0;
        for (t, d) in events {
            level += d;
            // Guard against float dust from adding and removing the same fractions.
            if level.abs() < 1e-9 {
                level = 0.0;
            }
            match points.last_mut() {
                Some(last) if last.0 == t => last.1 = level,
                _ => points.push((t, level)),
            }
        }
        Timeline { points }
    }

    /// The level at an hour.
    pub fn at(&self, hour: i64) -> f64 {
        match self.points.partition_point(|p| p.0 <= hour) {
            0 => 0.0,
            i => self.points[i - 1].1,
        }
    }

    /// Segments `(hours, level)` covering `range`.
    pub fn segments(&self, range: Hours) -> Vec<(Hours, f64)> {
        let mut out = Vec::new();
        let mut cursor = range.start;
        let mut level = self.at(range.start);
        let first = self.points.partition_point(|p| p.0 <= range.start);
        for &(t, l) in &self.points[first..] {
            if t >= range.end {
                break;
            }
            out.push((
                Hours {
                    start: cursor,
                    end: t,
                },
                level,
            ));
            cursor = t;
            level = l;
        }
        out.push((
            Hours {
                start: cursor,
                end: range.end,
            },
            level,
        ));
        out.retain(|(h, _)| h.start < h.end);
        out
    }

    /// The highest level over `range`.
    pub fn peak(&self, range: Hours) -> f64 {
        self.segments(range).iter().map(|s| s.1).fold(0.0, f64::max)
    }
}

/// Where a timeline exceeds a capacity within a range.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Overcommit {
    /// Hours above capacity (open-ended ranges counted over [`OPEN_HORIZON_HOURS`]).
    pub hours: i64,
    /// Largest excess over capacity.
    pub shortfall: f64,
    /// First hour above capacity.
    pub first_hour: Option<i64>,
    /// The first hour of the largest excess.
    pub peak_hour: Option<i64>,
}

pub fn overcommit(timeline: &Timeline, capacity: f64, range: Hours, at_hour: i64) -> Overcommit {
    let mut out = Overcommit::default();
    for (h, level) in timeline.segments(range) {
        if level > capacity + 1e-9 {
            out.hours += h.bounded(at_hour).len();
            if out.peak_hour.is_none() || level - capacity > out.shortfall + 1e-9 {
                // From the hour the range starts, not before it.
                out.peak_hour = Some(h.start.max(range.start));
            }
            out.shortfall = out.shortfall.max(level - capacity);
            out.first_hour = Some(out.first_hour.map_or(h.start, |f: i64| f.min(h.start)));
        }
    }
    out
}

/// A request's resources, resolved against its pool.
#[derive(Debug, Clone, Default)]
pub struct Sized {
    /// Units per resource, keyed by the pool's resource name.
    pub units: crate::model::SmallMap<u32>,
    /// GPU-equivalents.
    pub gpus: f64,
}

/// Sizes a request against its pool. Resources the pool does not provide
/// count as whole GPUs for `nvidia.com/gpu` and by their profile's slices
/// otherwise (they are reported by validation).
pub fn size(spec: &RequestSpec, pool: Option<(&NodePool, &ClusterSpec)>) -> Sized {
    let mut out = Sized::default();
    for unit in units(spec, pool) {
        *out.units.entry_or_default(unit.key) += unit.count;
        out.gpus += unit.count as f64 * unit.gpu_equivalent;
    }
    out
}

/// One resource a request asks for, as its pool provides it.
#[derive(Debug, Clone, PartialEq)]
pub struct Units {
    /// The resource as the request writes it.
    pub written: String,
    /// The resource as the pool provides it (the key its units add up under).
    pub key: String,
    pub count: u32,
    /// GPUs one unit is worth (a MIG instance's share, 1 / time-slicing replicas).
    pub gpu_equivalent: f64,
}

/// The resources a request asks for, each with what one unit is worth in
/// its pool.
pub fn units(spec: &RequestSpec, pool: Option<(&NodePool, &ClusterSpec)>) -> Vec<Units> {
    let provided: Vec<Provided> = pool
        .map(|(p, c)| resources::provided(p, c.mig_strategy.value))
        .unwrap_or_default();
    spec.resources
        .iter()
        .map(|(name, count)| {
            let (key, eq) = match pool.and_then(|(p, _)| resources::find(&provided, &name.value, p))
            {
                Some(p) => (p.resource.clone(), p.gpu_equivalent),
                None => (name.value.clone(), fallback_equivalent(&name.value)),
            };
            Units {
                written: name.value.clone(),
                key,
                count: count.value.0,
                gpu_equivalent: eq,
            }
        })
        .collect()
}

fn fallback_equivalent(resource: &str) -> f64 {
    match resources::parse(resource) {
        Ok(resources::ResourceName::Mig(p)) => crate::gpu::mig::parse_name(&p)
            .map(|n| n.gpu_slices as f64 / 7.0)
            .unwrap_or(1.0),
        _ => 1.0,
    }
}

/// Capacity of a pool per resource, in units.
/// The largest rise and the largest fall of a signed sum of holdings over
/// the hours from `from` on: `(gain, loss)`, both at least 0. A change is
/// the new holdings added and the old ones subtracted, so a request moved
/// later in time, or an expired one revived, gains what it holds in hours
/// it did not hold before, whatever its size did.
pub fn swing(changes: impl IntoIterator<Item = (Hours, f64)>, from: i64) -> (f64, f64) {
    let mut events: Vec<(i64, f64)> = Vec::new();
    for (h, amount) in changes {
        let start = h.start.max(from);
        if start >= h.end || amount == 0.0 {
            continue;
        }
        events.push((start, amount));
        if h.end != i64::MAX {
            events.push((h.end, -amount));
        }
    }
    events.sort_by_key(|e| e.0);
    let (mut level, mut gain, mut loss) = (0.0f64, 0.0f64, 0.0f64);
    let mut i = 0;
    while i < events.len() {
        let hour = events[i].0;
        while i < events.len() && events[i].0 == hour {
            level += events[i].1;
            i += 1;
        }
        gain = gain.max(level);
        loss = loss.max(-level);
    }
    // Rounding noise of sums that cancel is no change.
    let clean = |x: f64| if x < 1e-9 { 0.0 } else { x };
    (clean(gain), clean(loss))
}

/// The largest rise, at any hour from `from` on, of several groups of
/// holdings together, where a group that falls offsets none that rises:
/// each group's level counts where it is above 0. Within a group rises and
/// falls net out hour by hour, and groups that rise one after the other do
/// not add up. (A team's monthly rate across its pools: a release in one
/// pool pays for no gain in another.)
pub fn clipped_rise<'a>(groups: impl IntoIterator<Item = &'a [(Hours, f64)]>, from: i64) -> f64 {
    let mut events: Vec<(i64, usize, f64)> = Vec::new();
    let mut n = 0;
    for (g, changes) in groups.into_iter().enumerate() {
        n = g + 1;
        for (h, amount) in changes {
            let start = h.start.max(from);
            if start >= h.end || *amount == 0.0 {
                continue;
            }
            events.push((start, g, *amount));
            if h.end != i64::MAX {
                events.push((h.end, g, -amount));
            }
        }
    }
    events.sort_by_key(|e| e.0);
    let mut levels = vec![0.0f64; n];
    let (mut total, mut best) = (0.0f64, 0.0f64);
    let mut i = 0;
    while i < events.len() {
        let hour = events[i].0;
        while i < events.len() && events[i].0 == hour {
            let (_, g, amount) = events[i];
            let old = levels[g];
            levels[g] = old + amount;
            total += levels[g].max(0.0) - old.max(0.0);
            i += 1;
        }
        best = best.max(total);
    }
    if best < 1e-9 { 0.0 } else { best }
}

/// A signed change from `(gain, loss)`: the gain when there is one (an ask),
/// else minus the loss (a release).
pub fn signed((gain, loss): (f64, f64)) -> f64 {
    if gain > 0.0 {
        gain
    } else if loss > 0.0 {
        -loss
    } else {
        0.0
    }
}

pub fn pool_capacity(pool: &NodePool, cluster: &ClusterSpec) -> BTreeMap<String, f64> {
    let gpus = pool.nodes.value.0 as f64 * pool.gpus_per_node.value.0 as f64;
    resources::provided(pool, cluster.mig_strategy.value)
        .into_iter()
        .map(|p| (p.resource, gpus * p.per_gpu as f64))
        .collect()
}

/// Physical GPUs in a pool.
pub fn pool_gpus(pool: &NodePool) -> u32 {
    // Validation refuses a pool over MAX_POOL_GPUS; saturate, never wrap.
    pool.nodes
        .value
        .0
        .saturating_mul(pool.gpus_per_node.value.0)
}

/// The most GPUs one pool may hold (nodes times GPUs per node).
pub const MAX_POOL_GPUS: u64 = 1_000_000;

type Nested2<T> = HashMap<String, HashMap<String, T>>;
type Nested3<T> = HashMap<String, HashMap<String, HashMap<String, T>>>;

/// Every request sized, with timelines per pool and per team, built once per
/// repository. Lookups take `&str` and allocate nothing.
#[derive(Debug, Default)]
pub struct Ledger {
    sizes: HashMap<String, (Hours, Sized)>,
    /// cluster -> pool -> resource -> units committed.
    pool_units: Nested3<Timeline>,
    /// cluster -> pool -> GPU-equivalents committed.
    pool_gpus: Nested2<Timeline>,
    /// team -> cluster -> resource -> units held.
    team_units: Nested3<Timeline>,
    /// team -> cluster -> GPU-equivalents held.
    team_gpus: Nested2<Timeline>,
}

fn push3(m: &mut Nested3<Vec<(Hours, f64)>>, a: &str, b: &str, c: &str, v: (Hours, f64)) {
    m.entry(a.to_string())
        .or_default()
        .entry(b.to_string())
        .or_default()
        .entry(c.to_string())
        .or_default()
        .push(v);
}

fn push2(m: &mut Nested2<Vec<(Hours, f64)>>, a: &str, b: &str, v: (Hours, f64)) {
    m.entry(a.to_string())
        .or_default()
        .entry(b.to_string())
        .or_default()
        .push(v);
}

fn build2(m: Nested2<Vec<(Hours, f64)>>) -> Nested2<Timeline> {
    m.into_iter()
        .map(|(a, inner)| {
            (
                a,
                inner
                    .into_iter()
                    .map(|(b, v)| (b, Timeline::build(v)))
                    .collect(),
            )
        })
        .collect()
}

fn build3(m: Nested3<Vec<(Hours, f64)>>) -> Nested3<Timeline> {
    m.into_iter().map(|(a, inner)| (a, build2(inner))).collect()
}

impl Ledger {
    pub fn build(repo: &Repo) -> Ledger {
        let mut sizes = HashMap::with_capacity(repo.requests.len());
        let mut pool_units = Nested3::default();
        let mut pool_gpus = Nested2::default();
        let mut team_units = Nested3::default();
        let mut team_gpus = Nested2::default();
        for (name, req) in &repo.requests {
            let spec = &req.spec;
            let sized = size(spec, pool_of(repo, spec));
            let hours = Hours::of_request(spec);
            let (cluster, pool, team) = (&spec.cluster.value, &spec.pool.value, &spec.team.value);
            for (resource, units) in &sized.units {
                push3(
                    &mut pool_units,
                    cluster,
                    pool,
                    resource,
                    (hours, *units as f64),
                );
                push3(
                    &mut team_units,
                    team,
                    cluster,
                    resource,
                    (hours, *units as f64),
                );
            }
            push2(&mut pool_gpus, cluster, pool, (hours, sized.gpus));
            push2(&mut team_gpus, team, cluster, (hours, sized.gpus));
            sizes.insert(name.clone(), (hours, sized));
        }
        Ledger {
            sizes,
            pool_units: build3(pool_units),
            pool_gpus: build2(pool_gpus),
            team_units: build3(team_units),
            team_gpus: build2(team_gpus),
        }
    }

    /// A request's hours and size.
    pub fn size(&self, request: &str) -> Option<&(Hours, Sized)> {
        self.sizes.get(request)
    }

    pub fn pool_units(&self, cluster: &str, pool: &str, resource: &str) -> Option<&Timeline> {
        self.pool_units.get(cluster)?.get(pool)?.get(resource)
    }

    pub fn pool_gpus(&self, cluster: &str, pool: &str) -> Option<&Timeline> {
        self.pool_gpus.get(cluster)?.get(pool)
    }

    pub fn team_units(&self, team: &str, cluster: &str, resource: &str) -> Option<&Timeline> {
        self.team_units.get(team)?.get(cluster)?.get(resource)
    }

    pub fn team_gpus(&self, team: &str, cluster: &str) -> Option<&Timeline> {
        self.team_gpus.get(team)?.get(cluster)
    }
}

/// The pool a request names, with its cluster, if both exist.
pub fn pool_of<'r>(repo: &'r Repo, spec: &RequestSpec) -> Option<(&'r NodePool, &'r ClusterSpec)> {
    pool_in(&repo.clusters, spec)
}

/// [`pool_of`] among `clusters` (a past revision's, say).
pub fn pool_in<'r>(
    clusters: &'r BTreeMap<String, Document<ClusterSpec>>,
    spec: &RequestSpec,
) -> Option<(&'r NodePool, &'r ClusterSpec)> {
    let cluster = clusters.get(&spec.cluster.value)?;
    let pool = cluster
        .spec
        .node_pools
        .iter()
        .find(|p| p.name.value.as_str() == spec.pool.value)?;
    Some((pool, &cluster.spec))
}

/// The requests of a repository in force at an instant.
pub fn active_at(repo: &Repo, at: Timestamp) -> impl Iterator<Item = &Document<RequestSpec>> {
    repo.requests
        .values()
        .filter(move |r| r.spec.window.as_ref().is_none_or(|w| w.contains(at)))
}

#[cfg(test)]
#[path = "capacity_tests.rs"]
mod tests;
