//! A pool's commitment mix as the analysis works it out: the locked
//! reservations paid whatever happens, the known bursts, the preemptible
//! share of demand, and unlocked reservations cheaper than what the mix
//! would buy, tried replaced and kept, whole or in part ([`mix`] does the
//! splitting). Only reservations of the pool's own instances serve its
//! demand.

use super::plan_changes::Cuts;
use super::{Analysis, OUTLOOK_HOURS, mix, prices, reservation};

/// What every mix tried for one pool shares: its known, bounded bursts, and
/// the whole GPUs its MIG layout must dedicate to the units its requests
/// hold (as rightsizing leaves them, see [`Analysis::mix_cut`]).
struct Given {
    bursts: crate::capacity::Timeline,
    floor: Vec<(crate::capacity::Timeline, f64)>,
}

/// At most this many counts of one reservation are tried in one pass; a
/// pass narrows the range around the cheapest until it is tried count by
/// count.
const MAX_COUNTS_TRIED: u32 = 32;

/// At most this many sweeps over the candidate reservations (see
/// [`Analysis::descend`]); a sweep that changes nothing ends the search.
const MAX_SWEEPS: usize = 4;

/// Up to this many candidate reservations, each kept one is also left out
/// in turn (see [`Analysis::mix`]).
const MAX_CANDIDATES_RETRIED: usize = 4;

/// Up to this many candidate reservations, every set of them is also tried
/// kept whole, and the search started again from the cheapest set (see
/// [`Analysis::mix`]): 2^6 = 64 mixes at most.
const MAX_CANDIDATES_SETS: usize = 6;

/// When every combination of the candidates' counts makes at most this many
/// mixes, each of them is priced and the cheapest wins (the search is then
/// exact); above it, the heuristic passes run.
const MAX_COMBINATIONS: u64 = 512;

/// Whether plan `a` beats `b`: cheaper, or as cheap keeping more of the
/// reservations held (cancelling one to buy the same commitment again is
/// churn, and risks the capacity it holds).
/// Costs within [`TIE`] are as cheap: a plan's parts are each rounded to
/// the cent, so the same GPU-hours bought two ways can differ by a cent or
/// two, and a cent must not decide to give up reserved capacity.
fn better(a: &mix::Mix, b: &mix::Mix) -> bool {
    let kept = |m: &mix::Mix| m.kept.iter().map(|k| k.count).sum::<u32>();
    let (x, y) = (a.monthly_plan(), b.monthly_plan());
    if (x - y).abs() <= TIE {
        kept(a) > kept(b) || (kept(a) == kept(b) && x < y)
    } else {
        x < y
    }
}

/// Monthly costs this close are a tie (see [`better`]).
const TIE: rust_decimal::Decimal = rust_decimal::Decimal::from_parts(5, 0, 0, false, 2);

/// The count in `1..=count` whose mix is cheapest, and that mix: every count
/// when there are at most [`MAX_COUNTS_TRIED`], else evenly spaced counts,
/// then the range around the cheapest of them at a finer step, until the
/// step is one. Ties go to the larger count (more kept).
fn cheapest_count(count: u32, cost: impl Fn(u32) -> Option<mix::Mix>) -> Option<(u32, mix::Mix)> {
    let mut tried: std::collections::BTreeMap<u32, Option<mix::Mix>> = Default::default();
    let (mut lo, mut hi) = (1u32, count);
    loop {
        let step = (hi - lo + 1).div_ceil(MAX_COUNTS_TRIED).max(1);
        let mut n = lo;
        while n <= hi {
            tried.entry(n).or_insert_with(|| cost(n));
            n += step;
        }
        tried.entry(hi).or_insert_with(|| cost(hi));
        // As cheap (to within [`TIE`]), more kept: replacing a reservation
        // by the same commitment is churn, and risks the capacity it holds.
        let cheapest = tried
            .values()
            .filter_map(|m| Some(m.as_ref()?.monthly_plan()))
            .min()?;
        let best = *tried
            .iter()
            .filter(|(_, m)| {
                m.as_ref()
                    .is_some_and(|m| m.monthly_plan() <= cheapest + TIE)
            })
            .map(|(n, _)| n)
            .max()?;
        if step == 1 {
            let m = tried.remove(&best).flatten()?;
            return Some((best, m));
        }
        lo = best.saturating_sub(step - 1).max(1);
        hi = (best + step - 1).min(count);
    }
}

impl Analysis<'_> {
    /// The commitment mix for a pool's next 90 days, with `release` GPUs
    /// taken off its demand by rightsizing ([`mix`]).
    pub fn mix<'r>(
        &self,
        cluster: &str,
        pool: &str,
        release: impl Into<mix::Release<'r>>,
    ) -> Option<mix::Mix> {
        let release = release.into();
        if release.gpus == 0.0 {
            // Before rightsizing: asked for by the report and the plan alike.
            let p = self.pool(cluster, pool)?;
            return p
                .mix
                .get_or_init(|| {
                    self.mix_worked_out(cluster, pool, mix::Release::default(), &Cuts::new())
                })
                .clone();
        }
        self.mix_worked_out(cluster, pool, release, &Cuts::new())
    }

    /// [`Analysis::mix`] after rightsizing, with the releasing teams'
    /// requests as it leaves them (`cuts`): a MIG pool's floor counts the
    /// slices they keep, not those they give up.
    pub fn mix_cut(
        &self,
        cluster: &str,
        pool: &str,
        release: mix::Release,
        cuts: &Cuts,
    ) -> Option<mix::Mix> {
        if release.gpus == 0.0 && cuts.is_empty() {
            return self.mix(cluster, pool, release);
        }
        self.mix_worked_out(cluster, pool, release, cuts)
    }

    fn mix_worked_out(
        &self,
        cluster: &str,
        pool: &str,
        release: mix::Release,
        cuts: &Cuts,
    ) -> Option<mix::Mix> {
        let p = self.pool(cluster, pool)?;
        let price = p.price.catalog.as_ref()?;
        let at = self.at.hour_index();
        // Known, bounded bursts: approved non-preemptible requests with a
        // window no longer than a capacity block, starting from now on.
        let bursts = crate::capacity::Timeline::build(
            p.requests
                .iter()
                .filter(|r| r.is_burst(at))
                .map(|r| (r.hours, r.gpus)),
        );
        let given = Given {
            bursts,
            floor: self.layout_units(p, cuts),
        };
        let replaced = self.mix_keeping(cluster, pool, release, &[], &given)?;
        // Unlocked reservations of the pool's own instances cheaper per
        // GPU-hour than what the mix would commit at (the dearest of its
        // tiers, else on demand) are tried one by one, cheapest first: each
        // is kept (paid like a locked one) when keeping it, with those kept
        // before, makes the mix cheaper. Those between that and on demand
        // are tried in a second search.
        let dearest = [&replaced.baseline, &replaced.flexible]
            .into_iter()
            .flatten()
            .map(|t| t.price)
            .max()
            .unwrap_or(price.on_demand);
        let mut held: Vec<(rust_decimal::Decimal, &str, u32)> = self
            .repo
            .reservations
            .iter()
            .filter(|(_, r)| {
                prices::serves_pool(p.cluster, p.pool, &r.spec)
                    && r.spec.term.end.value > self.at
                    && r.spec.count.value.0 > 0
                    && !reservation::locked(&r.spec, at)
            })
            .filter_map(|(name, r)| {
                let rate = prices::reservation(self.repo, &r.spec)?.per_gpu_hour;
                (rate <= price.on_demand).then_some((rate, name.as_str(), r.spec.count.value.0))
            })
            .collect();
        held.sort();
        let cheaper: Vec<(&str, u32)> = held
            .iter()
            .filter(|&&(rate, _, _)| rate <= dearest)
            .map(|&(_, n, c)| (n, c))
            .collect();
        let mut best = self.search_kept(cluster, pool, release, &given, &cheaper, &replaced);
        // Reservations dearer than the mix's dearest tier but cheaper than on
        // demand can still pay where they would otherwise be bursts on demand:
        // the search runs again with them among the candidates, and the
        // cheaper plan wins (never dearer than without them).
        if held.len() > cheaper.len() {
            let all: Vec<(&str, u32)> = held.iter().map(|&(_, n, c)| (n, c)).collect();
            let other = self.search_kept(cluster, pool, release, &given, &all, &replaced);
            if better(&other, &best) {
                best = other;
            }
        }
        Some(best)
    }

    /// The cheapest mix found keeping some of `candidates` (name, count;
    /// cheapest first): a descent from keeping none, each kept one left out
    /// in turn, and every set of them as a starting point (see [`Self::mix`]).
    fn search_kept(
        &self,
        cluster: &str,
        pool: &str,
        release: mix::Release,
        given: &Given,
        candidates: &[(&str, u32)],
        replaced: &mix::Mix,
    ) -> mix::Mix {
        let combinations = candidates
            .iter()
            .try_fold(1u64, |n, &(_, c)| n.checked_mul(u64::from(c) + 1))
            .filter(|&n| n <= MAX_COMBINATIONS);
        if let Some(n) = combinations {
            return self.every_combination(cluster, pool, release, given, candidates, n, replaced);
        }
        let none = vec![0; candidates.len()];
        let mut best = self.descend(
            cluster,
            pool,
            release,
            given,
            candidates,
            none,
            replaced.clone(),
        );
        // A reservation kept early can hold the search in a dearer plan (one
        // ending inside the window kept before a longer one): with few
        // candidates, each kept one is also left out in turn and the search
        // run again on the rest; the cheapest plan wins.
        if candidates.len() <= MAX_CANDIDATES_RETRIED {
            for left_out in best.kept.clone() {
                let rest: Vec<(&str, u32)> = candidates
                    .iter()
                    .copied()
                    .filter(|(n, _)| *n != left_out.name)
                    .collect();
                let other = self.descend(
                    cluster,
                    pool,
                    release,
                    given,
                    &rest,
                    vec![0; rest.len()],
                    replaced.clone(),
                );
                if better(&other, &best) {
                    best = other;
                }
            }
        }
        // Changes that pay only together (a reservation and its renewal,
        // neither cheaper alone than what the mix buys; two kept ones left
        // out at once): with few candidates, every set of them is tried kept
        // whole and kept at the instances the pool's busiest forecast hour
        // needs (each in turn serving the same demand), and the search runs
        // again from the cheapest. The plan is never dearer than the searches
        // above found.
        if (2..=MAX_CANDIDATES_SETS).contains(&candidates.len()) {
            let needs = self.instances_needed(cluster, pool, release);
            let mut cheapest: Option<(Vec<u32>, mix::Mix)> = None;
            for set in 1u32..(1 << candidates.len()) {
                let whole: Vec<u32> = candidates
                    .iter()
                    .enumerate()
                    .map(|(i, &(_, n))| if set & (1 << i) != 0 { n } else { 0 })
                    .collect();
                let mut tries = vec![whole.clone()];
                for &need in &needs {
                    let capped: Vec<u32> = whole.iter().map(|&n| n.min(need)).collect();
                    if !tries.contains(&capped) {
                        tries.push(capped);
                    }
                }
                for counts in tries {
                    let keep: Vec<(&str, u32)> = candidates
                        .iter()
                        .zip(&counts)
                        .filter(|&(_, &n)| n > 0)
                        .map(|(&(name, _), &n)| (name, n))
                        .collect();
                    if let Some(m) = self.mix_keeping(cluster, pool, release, &keep, given)
                        && cheapest.as_ref().is_none_or(|(_, c)| better(&m, c))
                    {
                        cheapest = Some((counts, m));
                    }
                }
            }
            if let Some((counts, start)) = cheapest {
                let other = self.descend(cluster, pool, release, given, candidates, counts, start);
                if better(&other, &best) {
                    best = other;
                }
            }
        }
        best
    }

    /// The cheapest of the mixes keeping every combination of counts of
    /// `candidates` (`n` of them, counting keeping none, which is `replaced`).
    #[allow(clippy::too_many_arguments)]
    fn every_combination(
        &self,
        cluster: &str,
        pool: &str,
        release: mix::Release,
        given: &Given,
        candidates: &[(&str, u32)],
        n: u64,
        replaced: &mix::Mix,
    ) -> mix::Mix {
        let mut best = replaced.clone();
        for index in 1..n {
            // `index` in the mixed radix of the counts + 1.
            let mut rest = index;
            let mut keep: Vec<(&str, u32)> = Vec::new();
            for &(name, count) in candidates {
                let base = u64::from(count) + 1;
                let k = (rest % base) as u32;
                rest /= base;
                if k > 0 {
                    keep.push((name, k));
                }
            }
            if let Some(m) = self.mix_keeping(cluster, pool, release, &keep, given)
                && better(&m, &best)
            {
                best = m;
            }
        }
        best
    }

    /// The units of each MIG resource the pool's requests hold, hour by
    /// hour, with the units a GPU of its layout holds: only resources whose
    /// layout leaves part of each GPU unused (two 1g.10gb on an H100 are 2/7
    /// of its compute but take the whole GPU), where GPU-equivalents would
    /// size the pool below what its requests need ([`mix::layout_floor`]).
    fn layout_units(
        &self,
        p: &super::PoolEntry<'_>,
        cuts: &Cuts,
    ) -> Vec<(crate::capacity::Timeline, f64)> {
        let provided = crate::gpu::resources::provided(p.pool, p.cluster.spec.mig_strategy.value);
        let mut by: std::collections::BTreeMap<String, (Vec<(crate::capacity::Hours, f64)>, f64)> =
            provided
                .iter()
                .filter(|r| {
                    r.profile.is_some() && f64::from(r.per_gpu) * r.gpu_equivalent < 1.0 - 1e-9
                })
                .map(|r| {
                    (
                        r.resource.clone(),
                        (Vec::new(), f64::from(r.per_gpu.max(1))),
                    )
                })
                .collect();
        if by.is_empty() {
            return Vec::new();
        }
        let (cluster, pool) = (p.cluster.name(), p.pool.name.value.as_str());
        for r in self.repo.requests.values() {
            let s = &r.spec;
            if s.cluster.value != cluster || s.pool.value != pool {
                continue;
            }
            let name = r.name().to_string();
            if cuts.get(&(name.clone(), String::new())) == Some(&None) {
                continue; // ended by rightsizing
            }
            let hours = crate::capacity::Hours::of_request(s);
            for u in crate::capacity::units(s, Some((p.pool, &p.cluster.spec))) {
                let count = match cuts.get(&(name.clone(), u.key.clone())) {
                    Some(Some(kept)) => *kept,
                    _ => u.count,
                };
                if let Some((spans, _)) = by.get_mut(&u.key) {
                    spans.push((hours, f64::from(count)));
                }
            }
        }
        by.into_values()
            .map(|(spans, per_gpu)| (crate::capacity::Timeline::build(spans), per_gpu))
            .collect()
    }

    /// The whole instances the pool's demand needs over the window (forecast
    /// P50, less `release`): in its quietest hour, its median hour and its
    /// busiest, each at least 1 (the counts a set of reservations is also
    /// tried at, see [`Analysis::mix`]).
    fn instances_needed(&self, cluster: &str, pool: &str, release: mix::Release) -> Vec<u32> {
        let (Some(p), Some(outlook)) = (self.pool(cluster, pool), self.outlook(cluster, pool))
        else {
            return Vec::new();
        };
        let gpn = f64::from(p.pool.gpus_per_node.value.0.max(1));
        let from = self.at.hour_index().max(outlook.forecast_start);
        let mut demand: Vec<f64> = (from..from + OUTLOOK_HOURS)
            .filter_map(|h| outlook.at(h))
            .map(|q| (q.p50 - release.gpus).max(0.0))
            .collect();
        if demand.is_empty() {
            return Vec::new();
        }
        demand.sort_by(f64::total_cmp);
        let mut out: Vec<u32> = [0, demand.len() / 2, demand.len() - 1]
            .iter()
            .map(|&i| {
                (demand[i] / gpn - 1e-9)
                    .ceil()
                    .clamp(1.0, f64::from(u32::MAX)) as u32
            })
            .collect();
        out.dedup();
        out
    }

    /// Coordinate descent from `start` (the mix keeping `counts` of the
    /// candidates): each candidate in turn gets the count (none included)
    /// that makes the mix cheapest with the others as they stand, until a
    /// sweep changes nothing. From none kept, the first sweep is
    /// cheapest-first greedy; later ones let a reservation turned down early
    /// be kept once others are, and revise counts chosen before.
    #[allow(clippy::too_many_arguments)]
    fn descend(
        &self,
        cluster: &str,
        pool: &str,
        release: mix::Release,
        given: &Given,
        candidates: &[(&str, u32)],
        mut counts: Vec<u32>,
        start: mix::Mix,
    ) -> mix::Mix {
        let mut best = start;
        for _ in 0..MAX_SWEEPS {
            let mut improved = false;
            for i in 0..candidates.len() {
                let with = |k: u32| {
                    let keep: Vec<(&str, u32)> = candidates
                        .iter()
                        .zip(&counts)
                        .enumerate()
                        .map(|(j, (&(name, _), &n))| (name, if j == i { k } else { n }))
                        .filter(|&(_, n)| n > 0)
                        .collect();
                    self.mix_keeping(cluster, pool, release, &keep, given)
                };
                let mut choice: Option<(u32, mix::Mix)> = None;
                if counts[i] > 0
                    && let Some(m) = with(0)
                    && better(&m, &best)
                {
                    choice = Some((0, m));
                }
                if let Some((k, m)) = cheapest_count(candidates[i].1, with)
                    && k != counts[i]
                    && better(&m, choice.as_ref().map_or(&best, |c| &c.1))
                {
                    choice = Some((k, m));
                }
                if let Some((k, m)) = choice {
                    counts[i] = k;
                    best = m;
                    improved = true;
                }
            }
            if !improved {
                break;
            }
        }
        best
    }

    /// The commitment mix with the locked reservations and those named in
    /// `keep` paid whatever happens (see [`Analysis::mix`]).
    fn mix_keeping(
        &self,
        cluster: &str,
        pool: &str,
        release: mix::Release,
        keep: &[(&str, u32)],
        given: &Given,
    ) -> Option<mix::Mix> {
        let p = self.pool(cluster, pool)?;
        let price = p.price.catalog.as_ref()?;
        let outlook = self.outlook(cluster, pool)?;
        let at = self.at.hour_index();
        let from = at.max(outlook.forecast_start);
        let hours = OUTLOOK_HOURS as usize;
        let to = from + OUTLOOK_HOURS;
        // Locked (and kept) commitments on the pool: their GPUs over their
        // terms, and their cost over the window, per average month.
        let mut locked = Vec::new();
        let mut locked_cost = rust_decimal::Decimal::ZERO;
        for (name, r) in self
            .repo
            .reservations
            .iter()
            .filter(|(_, r)| prices::holds_pool_instances(p.cluster, p.pool, &r.spec))
        {
            let count = r.spec.count.value.0;
            // A kept reservation counts with the instances kept, its cost in
            // proportion (the upfront fee too: an unlocked one is not paid yet).
            let held = if reservation::locked(&r.spec, at) {
                count
            } else {
                match keep.iter().find(|(k, _)| *k == name.as_str()) {
                    Some(&(_, n)) => n.min(count),
                    None => continue,
                }
            };
            if held == 0 {
                continue;
            }
            let (start, end) = reservation::term_hours(&r.spec.term);
            let gpus = prices::reservation_gpus(self.repo, &r.spec) as f64 * f64::from(held)
                / f64::from(count);
            // One locked in another zone is paid and serves nothing.
            if prices::serves_pool(p.cluster, p.pool, &r.spec) {
                locked.push((crate::capacity::Hours { start, end }, gpus));
            }
            if let Some(c) = prices::reservation(self.repo, &r.spec)
                && c.hours > 0
            {
                // Hours of the term in the window, never more than it bills
                // (a term that starts at half past spans one hour more than
                // its length rounded up).
                let overlap = (end.min(to) - start.max(from)).max(0).min(c.hours);
                locked_cost += c.total / rust_decimal::Decimal::from(c.hours)
                    * rust_decimal::Decimal::from(overlap)
                    / rust_decimal::Decimal::from(OUTLOOK_HOURS)
                    * rust_decimal::Decimal::from(prices::HOURS_PER_MONTH)
                    * rust_decimal::Decimal::from(held)
                    / rust_decimal::Decimal::from(count);
            }
        }
        let locked = crate::capacity::Timeline::build(locked);
        let three_years = at + 3 * 365 * 24;
        let mut ending: Vec<(i64, f64)> = p
            .requests
            .iter()
            .filter(|r| !r.preemptible && r.hours.end != i64::MAX)
            .map(|r| (r.hours.end, r.gpus))
            .collect();
        ending.sort_by_key(|e| e.0);
        let mut m = mix::recommend(&mix::Inputs {
            demand: outlook,
            preemptible: self.preemptible_outlook(cluster, pool),
            steady: self.steady_outlook(cluster, pool),
            from,
            hours,
            gpus_per_node: p.pool.gpus_per_node.value.0,
            price,
            spot_allowance: self.config.costs.spot_interruption_allowance.as_f64(),
            release,
            ending: &ending,
            locked: &locked,
            locked_monthly: locked_cost,
            bursts: &given.bursts,
            three_years_supported: outlook.basis == crate::forecast::demand::Basis::History
                && outlook.supported_until(self.history_multiple()) >= three_years,
            floor: &given.floor,
        })?;
        m.kept = keep
            .iter()
            .map(|&(name, count)| mix::Kept {
                name: name.to_string(),
                count,
            })
            .collect();
        Some(m)
    }
}
