//! A pool's demand in its two parts: the work that tolerates preemption
//! (what spot can serve) and the steady rest (what commitments are sized
//! on). Each is forecast on its own: each team's allocation weighted by the
//! share of its requests in force that are (or are not) preemptible, plus
//! what those requests change. The steady part's bands are its own: a
//! research team swinging by 90 GPUs on spot does not make the training and
//! inference beside it uncertain.

use super::{Analysis, PoolEntry, approved};
use crate::forecast::demand::Outlook;

/// The share of `team`'s requests in force at `hour` that are preemptible
/// (0 when it has none in force).
fn preemptible_share(p: &PoolEntry<'_>, team: &str, hour: i64) -> f64 {
    let (mut pre, mut all) = (0.0, 0.0);
    for r in p.requests.iter().filter(|r| r.team == team) {
        if r.hours.start <= hour && hour < r.hours.end {
            all += r.gpus;
            if r.preemptible {
                pre += r.gpus;
            }
        }
    }
    if all > 0.0 { pre / all } else { 0.0 }
}

impl<'r> Analysis<'r> {
    /// The outlook of the part of a pool's demand that tolerates preemption;
    /// `None` when no request of the pool is preemptible.
    pub fn preemptible_outlook(&self, cluster: &str, pool: &str) -> Option<&Outlook> {
        let p = self.pool(cluster, pool)?;
        p.preemptible
            .get_or_init(|| {
                if !p.requests.iter().any(|r| r.preemptible) {
                    return None;
                }
                self.build_outlook(
                    p,
                    p.until,
                    |r: &approved::PoolRequest| r.preemptible,
                    |team, hour| preemptible_share(p, team, hour),
                )
            })
            .as_ref()
    }

    /// The outlook of the steady rest of a pool's demand; `None` when no
    /// request of the pool is preemptible (the steady part is then the
    /// whole outlook).
    pub fn steady_outlook(&self, cluster: &str, pool: &str) -> Option<&Outlook> {
        let p = self.pool(cluster, pool)?;
        p.steady
            .get_or_init(|| {
                if !p.requests.iter().any(|r| r.preemptible) {
                    return None;
                }
                self.build_outlook(
                    p,
                    p.until,
                    |r: &approved::PoolRequest| !r.preemptible,
                    |team, hour| 1.0 - preemptible_share(p, team, hour),
                )
            })
            .as_ref()
    }
}
