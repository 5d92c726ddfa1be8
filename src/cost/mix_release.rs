//! What rightsizing takes off a pool's demand, hour by hour: the GPUs the
//! low-utilization teams release, split between their preemptible work
//! and their steady work, and for the steady part only while the requests
//! it comes from last. A request the plan ends or cuts that would have
//! ended on its own releases nothing after that end: the demand there has
//! already lost it, and taking the release off again would count the same
//! GPUs twice (and price a saving the plan cannot make).

use crate::forecast::demand::Outlook;

/// GPUs rightsizing takes off a pool's demand, and how many of them come
/// off its preemptible part (the teams' released GPUs, each split by the
/// share of its requests there that are preemptible).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Release<'a> {
    pub gpus: f64,
    pub preemptible: f64,
    /// The hour the releasing teams' steady requests end: after it they hold
    /// nothing, and nothing comes off the steady demand.
    pub steady_until: i64,
    /// The hour the releasing teams' preemptible requests end: the share
    /// released is of the preemptible demand before it, and after it
    /// nothing comes off the preemptible demand.
    pub preemptible_until: i64,
    /// Before `steady_until`, the steady release falls by each step from
    /// its hour on (a cut request's own end, or the end of a team's
    /// requests when another team's last longer), sorted by hour.
    pub steps: &'a [Step],
}

/// From hour `at` on, `gpus` fewer GPUs come off the steady demand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub at: i64,
    pub gpus: f64,
}

impl From<f64> for Release<'static> {
    fn from(gpus: f64) -> Self {
        Release {
            gpus,
            preemptible: 0.0,
            steady_until: i64::MAX,
            preemptible_until: i64::MAX,
            steps: &[],
        }
    }
}

/// What rightsizing takes off one hour: the steady release while the
/// releasing teams hold it, and the preemptible demand scaled by the share
/// of it released (the teams release in proportion to what they hold each
/// hour: a batch that runs by day releases by day, not at night off the
/// steady demand).
#[derive(Clone, Copy)]
pub(super) struct Cut<'a> {
    steady: f64,
    steady_until: i64,
    steps: &'a [Step],
    pre_factor: f64,
    pre_until: i64,
}

impl<'a> Cut<'a> {
    /// The cut of `r` over the window `[from, from + hours)`, with the
    /// pool's preemptible demand.
    pub(super) fn new(
        r: Release<'a>,
        preemptible: Option<&Outlook>,
        from: i64,
        hours: usize,
    ) -> Cut<'a> {
        // The mean preemptible demand while the releasing requests last: a
        // release of 39 GPUs off a run that ends a month into the window is
        // 39 of each of its hours, not the window's mean packed into them.
        let until = (from + hours as i64).min(r.preemptible_until);
        let mean_pre = match preemptible {
            Some(o) if r.preemptible > 0.0 && until > from => {
                (from..until)
                    .filter_map(|h| o.at(h))
                    .map(|q| q.p50)
                    .sum::<f64>()
                    / (until - from) as f64
            }
            _ => 0.0,
        };
        let pre_factor = if mean_pre > 1e-9 {
            (r.preemptible / mean_pre).min(1.0)
        } else {
            0.0
        };
        // Without preemptible demand to take it from, it is steady.
        let steady = if pre_factor > 0.0 {
            (r.gpus - r.preemptible).max(0.0)
        } else {
            r.gpus
        };
        Cut {
            steady,
            steady_until: r.steady_until,
            steps: r.steps,
            pre_factor,
            pre_until: r.preemptible_until,
        }
    }

    /// The steady GPUs taken off hour `h`.
    pub(super) fn steady_at(&self, h: i64) -> f64 {
        if h >= self.steady_until {
            return 0.0;
        }
        let fallen: f64 = self
            .steps
            .iter()
            .take_while(|s| s.at <= h)
            .map(|s| s.gpus)
            .sum();
        (self.steady - fallen).max(0.0)
    }

    /// (GPUs taken off the hour, preemptible demand left) at hour `h`.
    pub(super) fn at(&self, preemptible: Option<&Outlook>, h: i64) -> (f64, f64) {
        let pre = preemptible.and_then(|o| o.at(h)).map_or(0.0, |q| q.p50);
        let pre_cut = if h < self.pre_until {
            pre * self.pre_factor
        } else {
            0.0
        };
        (self.steady_at(h) + pre_cut, (pre - pre_cut).max(0.0))
    }
}
