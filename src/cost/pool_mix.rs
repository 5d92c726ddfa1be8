//! A pool's commitment mix as the analysis works it out: the locked
//! reservations paid whatever happens, the known bursts, the preemptible
//! share of demand, and unlocked reservations cheaper than what the mix
//! would buy, tried replaced and kept ([`mix`] does the splitting). Only
//! reservations of the pool's own instances serve its demand.

use super::{Analysis, OUTLOOK_HOURS, mix, prices, reservation};

impl Analysis<'_> {
    /// The commitment mix for a pool's next 90 days, with `release` GPUs
    /// taken off its demand by rightsizing ([`mix`]).
    pub fn mix(&self, cluster: &str, pool: &str, release: f64) -> Option<mix::Mix> {
        let p = self.pool(cluster, pool)?;
        let price = p.price.catalog.as_ref()?;
        let at = self.at.hour_index();
        let replaced = self.mix_keeping(cluster, pool, release, &[])?;
        // Unlocked reservations of the pool's own instances cheaper per
        // GPU-hour than what the mix would commit at (the dearest of its
        // tiers, else on demand) are tried one by one, cheapest first: each
        // is kept (paid like a locked one) when keeping it, with those kept
        // before, makes the mix cheaper.
        let dearest = [&replaced.baseline, &replaced.flexible]
            .into_iter()
            .flatten()
            .map(|t| t.price)
            .max()
            .unwrap_or(price.on_demand);
        let mut cheaper: Vec<(rust_decimal::Decimal, &str)> = self
            .repo
            .reservations
            .iter()
            .filter(|(_, r)| {
                prices::holds_pool_instances(p.cluster, p.pool, &r.spec)
                    && r.spec.term.end.value > self.at
                    && r.spec.count.value.0 > 0
                    && !reservation::locked(&r.spec, at)
            })
            .filter_map(|(name, r)| {
                let rate = prices::reservation(self.repo, &r.spec)?.per_gpu_hour;
                (rate < dearest).then_some((rate, name.as_str()))
            })
            .collect();
        cheaper.sort();
        let mut best = replaced;
        let mut kept: Vec<&str> = Vec::new();
        for (_, name) in cheaper {
            kept.push(name);
            match self.mix_keeping(cluster, pool, release, &kept) {
                Some(k) if k.monthly_plan() < best.monthly_plan() => best = k,
                _ => {
                    kept.pop();
                }
            }
        }
        Some(best)
    }

    /// The commitment mix with the locked reservations and those named in
    /// `keep` paid whatever happens (see [`Analysis::mix`]).
    fn mix_keeping(
        &self,
        cluster: &str,
        pool: &str,
        release: f64,
        keep: &[&str],
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
        for (_, r) in self.repo.reservations.iter().filter(|(name, r)| {
            prices::holds_pool_instances(p.cluster, p.pool, &r.spec)
                && (reservation::locked(&r.spec, at) || keep.contains(&name.as_str()))
        }) {
            let (start, end) = reservation::term_hours(&r.spec.term);
            let gpus = prices::reservation_gpus(self.repo, &r.spec) as f64;
            locked.push((crate::capacity::Hours { start, end }, gpus));
            if let Some(c) = prices::reservation(self.repo, &r.spec)
                && c.hours > 0
            {
                let overlap = (end.min(to) - start.max(from)).max(0);
                locked_cost += c.total / rust_decimal::Decimal::from(c.hours)
                    * rust_decimal::Decimal::from(overlap)
                    / rust_decimal::Decimal::from(OUTLOOK_HOURS)
                    * rust_decimal::Decimal::from(prices::HOURS_PER_MONTH);
            }
        }
        let locked = crate::capacity::Timeline::build(locked);
        let bursts = crate::capacity::Timeline::build(
            p.requests
                .iter()
                .filter(|r| {
                    !r.preemptible
                        && !r.hours.is_open()
                        && r.hours.start >= at
                        && r.hours.len() <= mix::MAX_BLOCK_HOURS
                })
                .map(|r| (r.hours, r.gpus)),
        );
        let three_years = at + 3 * 365 * 24;
        let mut m = mix::recommend(&mix::Inputs {
            demand: outlook,
            preemptible: self.preemptible_outlook(cluster, pool),
            from,
            hours,
            gpus_per_node: p.pool.gpus_per_node.value.0,
            price,
            spot_allowance: self.config.costs.spot_interruption_allowance.as_f64(),
            release,
            locked: &locked,
            locked_monthly: locked_cost,
            bursts: &bursts,
            three_years_supported: outlook.basis == crate::forecast::demand::Basis::History
                && outlook.supported_until(self.history_multiple()) >= three_years,
        })?;
        m.kept = keep.iter().map(|k| k.to_string()).collect();
        Some(m)
    }
}
