//! How a pool's reserved GPUs are shared out: what the reservations in
//! force hold at each hour (a step function), and the most instances of a
//! reservation whose idle share over the demand left for it stays within
//! the stranded threshold.

/// What terms `[start, end)` of some GPUs each hold at any hour, as a step
/// function: the sum changes only where a term starts or ends.
pub(super) struct InForce {
    /// From each hour on (ascending), what is held until the next.
    steps: Vec<(i64, f64)>,
}

impl InForce {
    pub(super) fn new(terms: &[(i64, i64, f64)]) -> InForce {
        let mut events: Vec<(i64, f64)> = terms
            .iter()
            .filter(|(a, b, _)| a < b)
            .flat_map(|&(a, b, g)| [(a, g), (b, -g)])
            .collect();
        events.sort_by_key(|e| e.0);
        let mut steps: Vec<(i64, f64)> = Vec::new();
        let mut held = 0.0;
        for (h, g) in events {
            held += g;
            match steps.last_mut() {
                Some(last) if last.0 == h => last.1 = held,
                _ => steps.push((h, held)),
            }
        }
        InForce { steps }
    }

    pub(super) fn at(&self, h: i64) -> f64 {
        match self.steps.partition_point(|s| s.0 <= h) {
            0 => 0.0,
            i => self.steps[i - 1].1,
        }
    }
}

/// The most instances (up to `count`) of `per` GPUs whose idle share, over
/// the demand `left` for them, stays within `threshold`: with `past` hours
/// more before the first measurement, each at the mean of the first
/// `measured` entries (the measured hours; all of `left` when none), as the
/// utilization counts them. Idle share grows with the count, so a binary
/// search finds it.
pub(crate) fn suggest(
    left: &[f64],
    measured: usize,
    past: usize,
    per: f64,
    count: u32,
    threshold: f64,
) -> u32 {
    if left.is_empty() || per <= 0.0 {
        return count;
    }
    let stand_in = if measured > 0 {
        &left[..measured]
    } else {
        left
    };
    let idle_share = |k: u32| -> f64 {
        let cap = k as f64 * per;
        let served: f64 = left.iter().map(|d| d.min(cap)).sum();
        let before: f64 = stand_in.iter().map(|d| d.min(cap)).sum::<f64>()
            * (past as f64 / stand_in.len() as f64);
        1.0 - (served + before) / (cap * (left.len() + past) as f64)
    };
    let (mut lo, mut hi) = (0u32, count);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if idle_share(mid) <= threshold + 1e-9 {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}
