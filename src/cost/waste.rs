//! Where a pool's money went over the 30 days before `--at`: used, idle,
//! stranded or unmeasured, and who pays for it.
//!
//! Every hour of the lookback, a pool's GPUs (its nodes as the Cluster
//! declares them now) cost its blended GPU-hour price of that hour (the
//! reservations in force then: one that ended or began inside the lookback
//! prices only its own hours), and each of them is in exactly one bucket:
//!
//! - **used**: allocated to a team and busy (`used_gpus`, capped at the allocation);
//! - **idle**: allocated to a team and not busy;
//! - **stranded**: provisioned (or reserved) but allocated to nobody;
//! - **unmeasured**: the hour's allocation is not known: no team of the pool
//!   reported yet (or any more), or a team has a gap between its first row
//!   and its last, those two included (a gap is never a zero, and an empty
//!   last row is a gap as an empty first row is). The teams that did report
//!   are still counted.
//!
//! Instances the reservations in force hold beyond the pool's reserved
//! nodes bill their hours too (validation warns): they are in its capacity
//! cost, and stranded (no node runs on them).
//!
//! So capacity cost = used + idle + stranded + unmeasured, to the cent. An
//! hour where the teams' allocations add up to more than the pool's GPUs is
//! scaled down to them (the pool cannot cost more than its GPUs); such
//! GPU-hours are reported as `over_capacity`.
//!
//! Chargeback: each team pays its allocated GPU-hours at the pool's price,
//! plus a share of the pool's unallocated cost (stranded and unmeasured), as
//! the Config's `costs.chargeback` says: `proportional` to allocated
//! GPU-hours, `even` among the teams with an allocation (weighted by the
//! hours each held one), or `not-shared` (the
//! platform keeps it, as `unassigned`). Usage rows of a team with no Team
//! document are the platform's too (`unassigned`, no share). Teams plus
//! unassigned equal the pools' capacity cost, to the cent.

use super::{Analysis, LOOKBACK_HOURS, prices};
use crate::model::Chargeback;
use rust_decimal::Decimal;

/// GPU-hours of a pool by bucket.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GpuHours {
    pub capacity: f64,
    pub allocated: f64,
    pub used: f64,
    pub idle: f64,
    pub stranded: f64,
    pub unmeasured: f64,
    /// Allocated GPU-hours beyond the pool's GPUs (scaled away).
    pub over_capacity: f64,
}

/// The same in money. `allocated = used + idle`;
/// `capacity = allocated + stranded + unmeasured`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Costs {
    pub capacity: Decimal,
    pub allocated: Decimal,
    pub used: Decimal,
    pub idle: Decimal,
    pub stranded: Decimal,
    pub unmeasured: Decimal,
}

impl Costs {
    /// Stranded plus unmeasured: the cost no team's allocation accounts for.
    pub fn unallocated(&self) -> Decimal {
        self.stranded + self.unmeasured
    }

    pub fn add(&mut self, o: &Costs) {
        self.capacity += o.capacity;
        self.allocated += o.allocated;
        self.used += o.used;
        self.idle += o.idle;
        self.stranded += o.stranded;
        self.unmeasured += o.unmeasured;
    }
}

/// One team's part of a pool.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TeamPart {
    pub team: String,
    /// Hours with both allocated and used measured.
    pub hours: usize,
    /// Hours it held an allocation: its weight under `even` sharing (a team
    /// allocated one hour of the window does not pay a full share).
    pub allocated_hours: usize,
    pub allocated_gpu_hours: f64,
    pub used_gpu_hours: f64,
    /// Allocated GPU-hours at the pool's price.
    pub allocated_cost: Decimal,
    /// The unused part of `allocated_cost`.
    pub idle_cost: Decimal,
    /// Its share of the pool's unallocated cost.
    pub shared_cost: Decimal,
}

/// A pool's lookback, by bucket and by team.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolWaste {
    pub cluster: String,
    pub pool: String,
    pub gpus: f64,
    pub gpu_hours: GpuHours,
    /// `None` when the pool has no price.
    pub costs: Option<Costs>,
    pub teams: Vec<TeamPart>,
    /// Cost no team was charged: unallocated cost (`not-shared`, or no team
    /// allocated) and the allocated cost of teams with no Team document.
    pub unassigned: Decimal,
    /// The idle part (allocated, unused) of the allocation of teams with no
    /// Team document: in `unassigned`, and in the lookback's idle.
    pub unassigned_idle: Decimal,
}

impl PoolWaste {
    /// Used over allocated GPU-hours (`None` when nothing was allocated).
    pub fn busy(&self) -> Option<f64> {
        (self.gpu_hours.allocated > 0.0).then(|| self.gpu_hours.used / self.gpu_hours.allocated)
    }
}

/// A pool's busy share (used over allocated GPU-hours) over the 30 days
/// up to its last measured hour: what the busy share is taken to be when
/// the 30 days before `--at` hold no measurement (usage not pulled lately,
/// or `--at` ahead of it). `None` when the pool was never measured.
pub fn last_busy(a: &Analysis<'_>, series: &[usize]) -> Option<f64> {
    let last = series
        .iter()
        .filter_map(|&id| a.series.allocated(id).last_observed())
        .max()?;
    let (mut allocated, mut used) = (0.0, 0.0);
    for &id in series {
        for h in (last - LOOKBACK_HOURS + 1)..=last {
            if let (Some(x), Some(u)) = (a.series.allocated(id).get(h), a.series.used(id).get(h)) {
                allocated += x.max(0.0);
                used += u.clamp(0.0, x.max(0.0));
            }
        }
    }
    (allocated > 0.0).then(|| used / allocated)
}

fn round(d: Decimal) -> Decimal {
    d.round_dp(2)
}

/// Measures every pool of the analysis over the lookback.
pub fn measure(a: &Analysis<'_>) -> Vec<PoolWaste> {
    let at = a.at.hour_index();
    let from = at - LOOKBACK_HOURS;
    let rule = a.config.costs.chargeback;
    let mut out = Vec::with_capacity(a.pools.len());
    for ((cluster, pool), entry) in &a.pools {
        let gpus = crate::capacity::pool_gpus(entry.pool) as f64;
        // The teams' series, with the span between their first and last row:
        // an empty cell is a gap wherever it is, the first row or the last
        // (a row with use but no allocation too), not the team's absence.
        let series: Vec<(usize, i64, i64)> = entry
            .series
            .iter()
            .filter_map(|&id| {
                let s = a.series.allocated(id);
                (s.hours() > 0).then(|| (id, s.start, s.end() - 1))
            })
            .collect();
        let mut teams: Vec<TeamPart> = series
            .iter()
            .map(|(id, _, _)| TeamPart {
                team: a.repo.usage.series[*id].team.clone(),
                ..TeamPart::default()
            })
            .collect();
        let mut gh = GpuHours::default();
        // The price hour by hour: each segment's GPU-hours are costed at its
        // own price (a reservation that ended or began in the lookback).
        let segments = prices::pool_segments(a.repo, entry.cluster, entry.pool, from, at);
        let mut seg_gh = vec![GpuHours::default(); segments.len()];
        let mut seg_hours = vec![0u32; segments.len()];
        let mut seg_teams = vec![vec![(0.0_f64, 0.0_f64); teams.len()]; segments.len()];
        let mut seg = 0;
        let mut measured: Vec<(usize, f64, f64)> = Vec::new();
        for h in from..at {
            while seg + 1 < segments.len() && h >= segments[seg + 1].0 {
                seg += 1;
            }
            seg_hours[seg] += 1;
            let sg = &mut seg_gh[seg];
            sg.capacity += gpus;
            gh.capacity += gpus;
            measured.clear();
            let mut complete = true;
            let mut spanned = false;
            for (k, (id, first, last)) in series.iter().enumerate() {
                if h < *first || h > *last {
                    continue;
                }
                spanned = true;
                match (a.series.allocated(*id).get(h), a.series.used(*id).get(h)) {
                    (Some(x), Some(u)) => measured.push((k, x.max(0.0), u.clamp(0.0, x.max(0.0)))),
                    _ => complete = false,
                }
            }
            if !spanned {
                gh.unmeasured += gpus;
                continue;
            }
            let total: f64 = measured.iter().map(|m| m.1).sum();
            let scale = if total > gpus && total > 0.0 {
                gh.over_capacity += total - gpus;
                gpus / total
            } else {
                1.0
            };
            for &(k, x, u) in &measured {
                let t = &mut teams[k];
                t.hours += 1;
                if x > 0.0 {
                    t.allocated_hours += 1;
                }
                t.allocated_gpu_hours += x * scale;
                t.used_gpu_hours += u * scale;
                let st = &mut seg_teams[seg][k];
                st.0 += x * scale;
                st.1 += u * scale;
                gh.allocated += x * scale;
                gh.used += u * scale;
                gh.idle += (x - u) * scale;
            }
            let rest = gpus - total * scale;
            if complete {
                gh.stranded += rest;
                seg_gh[seg].stranded += rest;
            } else {
                gh.unmeasured += rest;
            }
        }
        // Costs by team before merging (a team's rows keep their series order).
        let priced = !segments.is_empty() && segments.iter().all(|s| s.1.is_some());
        let mut capacity_cost = Decimal::ZERO;
        let mut stranded_cost = Decimal::ZERO;
        if priced {
            for (k, (_, price, excess)) in segments.iter().enumerate() {
                let price = price.unwrap_or_default();
                // Instances reserved beyond the pool's reserved nodes bill
                // too, and nothing can be allocated to them: stranded.
                let beyond = Decimal::from(seg_hours[k]) * excess;
                let capacity = prices::decimal(seg_gh[k].capacity) * price + beyond;
                // The segment's cents go to its parts by largest remainder, so
                // the teams' allocations and the stranded cost never add up to
                // more than the capacity (no -0.01 of unallocated cost).
                let mut exact: Vec<Decimal> = seg_teams[k]
                    .iter()
                    .map(|&(x, _)| prices::decimal(x) * price)
                    .collect();
                exact.push(prices::decimal(seg_gh[k].stranded) * price + beyond);
                let accounted: Decimal = exact.iter().map(|e| (*e).max(Decimal::ZERO)).sum();
                exact.push(capacity - accounted);
                let parts = apportion(round(capacity), &exact);
                capacity_cost += round(capacity);
                stranded_cost += parts[teams.len()];
                for ((t, &(x, u)), part) in teams.iter_mut().zip(&seg_teams[k]).zip(&parts) {
                    t.allocated_cost += part;
                    let idle = round(prices::decimal(x - u).max(Decimal::ZERO) * price);
                    t.idle_cost += idle.min(*part);
                }
            }
        }
        // One row per team (a team has one series per pool; merge to be safe).
        // Indexed by name: a usage file of many series (teams the repository
        // does not know among them) must not merge in quadratic time.
        let mut merged: Vec<TeamPart> = Vec::new();
        let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for t in teams {
            match index.get(&t.team).map(|&i| &mut merged[i]) {
                Some(m) => {
                    m.hours = m.hours.max(t.hours);
                    m.allocated_hours = m.allocated_hours.max(t.allocated_hours);
                    m.allocated_gpu_hours += t.allocated_gpu_hours;
                    m.used_gpu_hours += t.used_gpu_hours;
                    m.allocated_cost += t.allocated_cost;
                    m.idle_cost += t.idle_cost;
                }
                None => {
                    index.insert(t.team.clone(), merged.len());
                    merged.push(t);
                }
            }
        }
        // Rows of a team with no Team document (removed or renamed) count in
        // the pool (its GPUs were allocated) and in no team's chargeback:
        // their cost is the platform's (`unassigned`), and they take no share.
        let (mut teams, strays): (Vec<TeamPart>, Vec<TeamPart>) = merged
            .into_iter()
            .partition(|t| a.repo.teams.contains_key(&t.team));
        let mut unassigned = Decimal::ZERO;
        let mut unassigned_idle = Decimal::ZERO;
        let costs = priced.then(|| {
            let mut c = Costs {
                capacity: capacity_cost,
                ..Costs::default()
            };
            for t in teams.iter().chain(&strays) {
                c.allocated += t.allocated_cost;
                c.idle += t.idle_cost;
            }
            c.used = c.allocated - c.idle;
            let unallocated = c.capacity - c.allocated;
            c.stranded = stranded_cost.min(unallocated);
            c.unmeasured = unallocated - c.stranded;
            unassigned = share(&mut teams, unallocated, rule)
                + strays.iter().map(|t| t.allocated_cost).sum::<Decimal>();
            unassigned_idle = strays.iter().map(|t| t.idle_cost).sum();
            c
        });
        teams.extend(strays);
        out.push(PoolWaste {
            cluster: cluster.clone(),
            pool: pool.clone(),
            gpus,
            gpu_hours: gh,
            costs,
            teams,
            unassigned,
            unassigned_idle,
        });
    }
    out
}

/// Splits `target` (in cents) into parts as close to `exact` as cents allow
/// (negative parts count as zero): each part is its exact value rounded down,
/// and the cents left go one by one to the largest remainders. The parts add
/// up to `target` exactly.
fn apportion(target: Decimal, exact: &[Decimal]) -> Vec<Decimal> {
    let cent = Decimal::new(1, 2);
    let mut parts: Vec<Decimal> = exact
        .iter()
        .map(|e| {
            (*e).max(Decimal::ZERO)
                .round_dp_with_strategy(2, rust_decimal::RoundingStrategy::ToZero)
        })
        .collect();
    let mut order: Vec<usize> = (0..exact.len()).collect();
    order.sort_by(|&a, &b| {
        let ra = exact[a].max(Decimal::ZERO) - parts[a];
        let rb = exact[b].max(Decimal::ZERO) - parts[b];
        rb.cmp(&ra).then(a.cmp(&b))
    });
    let mut left = target - parts.iter().sum::<Decimal>();
    let mut i = 0;
    while left >= cent && !order.is_empty() {
        parts[order[i % order.len()]] += cent;
        left -= cent;
        i += 1;
    }
    // Float noise may leave the exact parts a cent above the target: take it
    // from the largest parts.
    while left <= -cent {
        let Some(big) = (0..parts.len()).max_by(|&a, &b| parts[a].cmp(&parts[b]).then(b.cmp(&a)))
        else {
            break;
        };
        if parts[big] < cent {
            break;
        }
        parts[big] -= cent;
        left += cent;
    }
    parts
}

/// Shares `amount` among the teams with an allocation as `rule` says;
/// returns what is left unassigned. The cents go by largest remainder
/// ([`apportion`]), so the shares add up to the amount exactly and none is
/// negative.
fn share(teams: &mut [TeamPart], amount: Decimal, rule: Chargeback) -> Decimal {
    let takers: Vec<usize> = (0..teams.len())
        .filter(|&i| teams[i].allocated_gpu_hours > 0.0)
        .collect();
    if rule == Chargeback::NotShared || takers.is_empty() || amount.is_zero() {
        return amount;
    }
    let total: f64 = takers.iter().map(|&i| teams[i].allocated_gpu_hours).sum();
    // Even: the same for every hour present, so a team allocated for part
    // of the window pays for that part (a team there one hour of 720 took a
    // third of a month's unallocated cost among three).
    let presence = |i: usize| teams[i].allocated_hours.max(1);
    let present: usize = takers.iter().map(|&i| presence(i)).sum();
    let exact: Vec<Decimal> = takers
        .iter()
        .map(|&i| {
            let weight = match rule {
                Chargeback::Even => Decimal::from(presence(i)) / Decimal::from(present),
                _ => prices::decimal(teams[i].allocated_gpu_hours / total),
            };
            amount * weight
        })
        .collect();
    for (&i, part) in takers.iter().zip(apportion(amount, &exact)) {
        teams[i].shared_cost = part;
    }
    Decimal::ZERO
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(cents: i64) -> Decimal {
        Decimal::new(cents, 2)
    }

    #[test]
    fn cents_go_to_the_largest_remainders_and_add_up_to_the_target() {
        // Rounded one by one, 0.335 + 0.335 + 0.33 make 1.01 of a 1.00 capacity
        // (an unallocated cost of -0.01); apportioned, they make 1.00.
        let exact = [Decimal::new(335, 3), Decimal::new(335, 3), d(33), d(0)];
        assert_eq!(apportion(d(100), &exact), vec![d(34), d(33), d(33), d(0)]);
        // Thirds: the first remainder takes the cent; a negative part is zero.
        let third = Decimal::ONE / Decimal::from(3);
        assert_eq!(
            apportion(d(100), &[third, third, third, d(-5)]),
            vec![d(34), d(33), d(33), d(0)]
        );
        // Float noise above the target is taken from the largest part.
        assert_eq!(apportion(d(1000), &[d(600), d(401)]), vec![d(599), d(401)]);
        assert_eq!(apportion(d(0), &[]), Vec::<Decimal>::new());
    }

    fn part(team: &str, gpu_hours: f64) -> TeamPart {
        TeamPart {
            team: team.into(),
            allocated_gpu_hours: gpu_hours,
            allocated_hours: 720,
            ..TeamPart::default()
        }
    }

    #[test]
    fn unallocated_cost_is_shared_as_the_config_says_and_adds_up() {
        // 100.00 unallocated; teams with 300 and 100 allocated GPU-hours, one with none.
        let teams = || vec![part("a", 300.0), part("b", 100.0), part("c", 0.0)];
        let amount = Decimal::new(10000, 2);
        let mut t = teams();
        assert_eq!(
            share(&mut t, amount, Chargeback::Proportional),
            Decimal::ZERO
        );
        let got: Vec<Decimal> = t.iter().map(|x| x.shared_cost).collect();
        assert_eq!(
            got,
            vec![Decimal::new(7500, 2), Decimal::new(2500, 2), Decimal::ZERO]
        );
        let mut t = teams();
        share(&mut t, amount, Chargeback::Even);
        assert_eq!(t[0].shared_cost, Decimal::new(5000, 2));
        assert_eq!(t[1].shared_cost, Decimal::new(5000, 2));
        let mut t = teams();
        assert_eq!(share(&mut t, amount, Chargeback::NotShared), amount);
        assert!(t.iter().all(|x| x.shared_cost.is_zero()));
        // Thirds: the cent left goes to a largest remainder, so the shares add up.
        let mut t = vec![part("a", 1.0), part("b", 1.0), part("c", 1.0)];
        share(&mut t, amount, Chargeback::Even);
        let got: Vec<Decimal> = t.iter().map(|x| x.shared_cost).collect();
        assert_eq!(got, vec![d(3334), d(3333), d(3333)]);
        // 0.02 among 5, 5, 5 and 1 GPU-hours: rounded one by one the first three
        // would take 0.01 each and leave the last -0.01.
        let mut t = vec![
            part("a", 5.0),
            part("b", 5.0),
            part("c", 5.0),
            part("d", 1.0),
        ];
        share(&mut t, d(2), Chargeback::Proportional);
        let got: Vec<Decimal> = t.iter().map(|x| x.shared_cost).collect();
        assert_eq!(got, vec![d(1), d(1), d(0), d(0)]);
        // Even, by presence: a team allocated 1 hour of 720 pays 1 / 1,441
        // of 100.00 beside two there all along (0.07), not a third.
        let mut t = vec![part("a", 720.0), part("b", 720.0), part("c", 1.0)];
        t[2].allocated_hours = 1;
        share(&mut t, amount, Chargeback::Even);
        let got: Vec<Decimal> = t.iter().map(|x| x.shared_cost).collect();
        assert_eq!(got, vec![d(4997), d(4996), d(7)]);
    }
}
