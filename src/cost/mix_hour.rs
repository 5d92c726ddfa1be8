//! What one hour of a commitment mix buys, in whole instances, once the
//! commitments are known.
//!
//! The hour's demand comes in three parts: **steady** (what the commitment
//! tiers were sized on), a known **burst** (capacity-block candidate) and
//! **preemptible** work (spot candidate). Committed instances are paid
//! whatever happens, so their spare room above the steady demand serves the
//! burst, then the preemptible work, for nothing. What is left is bought in
//! whole instances: capacity blocks hold only the burst, spot only the
//! preemptible work, on demand anything. So a burst that fits in the room an
//! on-demand instance has anyway is not rounded up to an instance of its own:
//! with 8-GPU instances, 2 steady GPUs and a 4-GPU burst need one on-demand
//! instance (8 GPUs at the on-demand price), not one on demand and one block.
//!
//! Each block (or spot) instance short of covering its whole part takes a
//! full instance off on demand, and is cheaper, so only the counts that
//! cover the part and one less can be cheapest: the four pairs are priced
//! and the cheapest wins, fewer blocks and spot instances on a tie.

/// One hour's demand after the locked commitments, in GPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Demand {
    /// Steady demand (the burst and the preemptible work excluded).
    pub steady: f64,
    /// The known burst that may go on capacity blocks.
    pub burst: f64,
    /// Preemptible work that may go on spot.
    pub preemptible: f64,
}

/// What instances an hour buys and what each serves, in GPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bought {
    /// GPUs served by the commitment tiers (steady first, then spare room).
    pub committed_served: f64,
    /// GPUs bought on capacity blocks (whole instances), and served there.
    pub block_paid: f64,
    pub block_served: f64,
    /// GPUs bought on spot (whole instances), and served there.
    pub spot_paid: f64,
    pub spot_served: f64,
    /// GPUs bought on demand (whole instances), and served there.
    pub on_demand_paid: f64,
    pub on_demand_served: f64,
}

/// Per GPU-hour prices the hour chooses between (None: not offered).
#[derive(Clone, Copy, Debug)]
pub struct Prices {
    pub on_demand: f64,
    pub block: Option<f64>,
    pub spot: Option<f64>,
}

/// The cheapest way to buy one hour (see the module docs): `committed` GPUs
/// of commitment tiers, `gpn` GPUs an instance, at most `max_blocks`
/// capacity-block instances.
pub fn buy(d: Demand, committed: f64, gpn: f64, max_blocks: f64, p: Prices) -> Bought {
    let (steady, burst, pre) = (d.steady.max(0.0), d.burst.max(0.0), d.preemptible.max(0.0));
    let committed_served = (steady + burst + pre).min(committed.max(0.0));
    // The committed spare room serves the burst first, then the preemptible work.
    let spare = (committed - steady).max(0.0);
    let burst_left = burst - burst.min(spare);
    let pre_left = pre - pre.min((spare - burst).max(0.0));
    let steady_left = (steady - committed).max(0.0);
    let whole = |gpus: f64| (gpus / gpn - 1e-9).ceil().max(0.0);
    let counts = |part: f64, offered: bool, max: f64| -> Vec<f64> {
        if !offered || part <= 1e-9 {
            return vec![0.0];
        }
        let all = whole(part).min(max);
        if all >= 1.0 {
            vec![all - 1.0, all]
        } else {
            vec![0.0]
        }
    };
    let mut best: Option<(f64, Bought)> = None;
    for kb in counts(burst_left, p.block.is_some(), max_blocks) {
        for ks in counts(pre_left, p.spot.is_some(), f64::INFINITY) {
            let block_served = (kb * gpn).min(burst_left);
            let spot_served = (ks * gpn).min(pre_left);
            let on_demand_served = steady_left + burst_left - block_served + pre_left - spot_served;
            let on_demand_paid = if on_demand_served <= 1e-9 {
                0.0
            } else {
                whole(on_demand_served) * gpn
            };
            let b = Bought {
                committed_served,
                block_paid: kb * gpn,
                block_served,
                spot_paid: ks * gpn,
                spot_served,
                on_demand_paid,
                on_demand_served,
            };
            let cost = b.block_paid * p.block.unwrap_or(0.0)
                + b.spot_paid * p.spot.unwrap_or(0.0)
                + b.on_demand_paid * p.on_demand;
            if best.as_ref().is_none_or(|(c, _)| cost < *c - 1e-9) {
                best = Some((cost, b));
            }
        }
    }
    best.map(|(_, b)| b).unwrap_or_default()
}

#[cfg(test)]
#[path = "mix_hour_tests.rs"]
mod tests;
