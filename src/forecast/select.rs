//! Choosing the forecast from the candidates' rolling-origin validation on
//! the series' own history.
//!
//! Every candidate forecasts from each validation origin. The horizon is cut
//! into ranges of leads (the first quarter, the second quarter, the second
//! half): what predicts the next hours best (the last level) is often not
//! what predicts tomorrow's afternoon best (a daily shape). For each range,
//! a candidate's score is its mean absolute error there; the forecast is a
//! weighted mix of the (up to) three best, each weighted by the inverse of
//! its error, leaving out any more than 1.5 times the best one's. Naive is
//! the anchor: the mix is used only where it validates at least 10% better
//! than naive, else naive stands alone (demand moves in level shifts, and
//! the last level is hard to beat).

use super::models::Method;

/// A candidate with its validation error and validation forecasts.
pub struct Scored {
    pub method: Method,
    pub mae: f64,
    pub validation: Vec<Vec<f64>>,
}

/// How many of the best candidates are mixed.
pub const MIX_SIZE: usize = 3;
/// Candidates whose error is more than this multiple of the best one's are left out.
pub const MIX_REACH: f64 = 1.5;

/// The weights of the chosen candidates (indices into `scored`), summing to 1.
pub fn choose(scored: &[Scored]) -> Weights {
    let (mix_size, reach) = (MIX_SIZE, MIX_REACH);
    let mut order: Vec<usize> = (0..scored.len())
        .filter(|&i| scored[i].mae.is_finite())
        .collect();
    order.sort_by(|&a, &b| scored[a].mae.total_cmp(&scored[b].mae));
    let Some(&best) = order.first() else {
        return vec![(0, 1.0)];
    };
    let best_mae = scored[best].mae;
    if best_mae <= 1e-12 {
        return vec![(best, 1.0)];
    }
    let chosen: Vec<usize> = order
        .into_iter()
        .take(mix_size)
        .filter(|&i| scored[i].mae <= reach * best_mae)
        .collect();
    let total: f64 = chosen.iter().map(|&i| 1.0 / scored[i].mae).sum();
    chosen
        .into_iter()
        .map(|i| (i, (1.0 / scored[i].mae) / total))
        .collect()
}

/// A mix must validate at least this much better than naive (its error at
/// most this share of naive's) to be used; else naive stands alone.
pub const ANCHOR_MARGIN: f64 = 0.9;

/// `Σ weight × forecast` of the chosen candidates' forecasts.
pub fn mix(weights: &[(usize, f64)], forecasts: &[&[f64]]) -> Vec<f64> {
    let len = forecasts.first().map_or(0, |f| f.len());
    (0..len)
        .map(|j| {
            weights
                .iter()
                .zip(forecasts)
                .map(|((_, w), f)| w * f[j])
                .sum()
        })
        .collect()
}

/// A range of leads (steps ahead, from 0).
pub type Leads = std::ops::Range<usize>;
/// Candidates (indices) and their weights, summing to 1.
pub type Weights = Vec<(usize, f64)>;

/// The weights chosen for each range of leads.
pub struct Plan {
    pub parts: Vec<(Leads, Weights)>,
}

impl Plan {
    /// The candidates the plan uses.
    pub fn methods(&self) -> Vec<usize> {
        let mut out: Vec<usize> = self
            .parts
            .iter()
            .flat_map(|p| p.1.iter().map(|w| w.0))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The mixed forecast over `h` leads, from each candidate's forecast.
    pub fn apply(&self, forecast: impl Fn(usize) -> Vec<f64>, h: usize) -> Vec<f64> {
        let mut cache: std::collections::HashMap<usize, Vec<f64>> = Default::default();
        let mut out = vec![0.0; h];
        for (leads, weights) in &self.parts {
            for (i, w) in weights {
                let f = cache.entry(*i).or_insert_with(|| forecast(*i));
                for j in leads.clone() {
                    if j < h {
                        out[j] += w * f[j];
                    }
                }
            }
        }
        out
    }

    pub fn describe(&self, scored: &[Scored]) -> String {
        if self.parts.len() == 1 {
            return describe(scored, &self.parts[0].1);
        }
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|(leads, w)| {
                format!(
                    "steps {}-{}: {}",
                    leads.start + 1,
                    leads.end,
                    describe(scored, w)
                )
            })
            .collect();
        parts.join("; ")
    }
}

/// Lead ranges: the first step, then ranges that double in length.
fn ranges(h: usize, count: usize) -> Vec<Leads> {
    if count <= 1 || h < 4 {
        return std::iter::once(0..h).collect();
    }
    let mut cuts = vec![0usize];
    // Boundaries at h/2^(count-1), ..., h/2.
    for k in (1..count).rev() {
        let c = (h >> k).max(cuts.last().copied().unwrap_or(0) + 1);
        if c < h {
            cuts.push(c);
        }
    }
    cuts.push(h);
    cuts.dedup();
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// Chooses the weights per range of leads: the best candidates by their
/// error at those leads ([`choose`]), kept only when their mix validates
/// [`ANCHOR_MARGIN`] better than naive there. `err(forecasts, leads)` is
/// the mean absolute error of validation forecasts over those leads.
pub fn plan(
    scored: &[Scored],
    h: usize,
    origins: usize,
    err: &dyn Fn(&[Vec<f64>], Leads) -> f64,
) -> Plan {
    let parts = ranges(h, LEAD_RANGES)
        .into_iter()
        .map(|leads| {
            let local: Vec<Scored> = scored
                .iter()
                .map(|s| Scored {
                    method: s.method,
                    mae: err(&s.validation, leads.clone()),
                    validation: Vec::new(),
                })
                .collect();
            let weights = choose(&local);
            if weights.len() == 1 && weights[0].0 == 0 {
                return (leads, weights);
            }
            let mixed: Vec<Vec<f64>> = (0..origins)
                .map(|w| {
                    let mut out = vec![0.0; h];
                    for (i, wt) in &weights {
                        for (j, v) in scored[*i].validation[w].iter().enumerate() {
                            out[j] += wt * v;
                        }
                    }
                    out
                })
                .collect();
            // Naive (candidate 0) is the anchor: demand moves in level
            // shifts and the last level is hard to beat.
            let naive = local[0].mae;
            if err(&mixed, leads.clone()) <= ANCHOR_MARGIN * naive {
                (leads, weights)
            } else {
                (leads, vec![(0, 1.0)])
            }
        })
        .collect();
    Plan { parts }
}

/// Ranges of leads chosen separately: the first quarter of the horizon, the
/// second quarter and the second half (for 24 hours: hours 1-6, 7-12 and 13-24).
pub const LEAD_RANGES: usize = 3;

/// The chosen forecast in words.
pub fn describe(scored: &[Scored], weights: &[(usize, f64)]) -> String {
    if let [(i, _)] = weights {
        return scored[*i].method.describe();
    }
    let parts: Vec<String> = weights
        .iter()
        .map(|(i, w)| format!("{} {:.0}%", scored[*i].method.describe(), 100.0 * w))
        .collect();
    format!("mix of {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(mae: f64) -> Scored {
        Scored {
            method: Method::Naive,
            mae,
            validation: Vec::new(),
        }
    }

    #[test]
    fn the_best_are_mixed_by_their_inverse_errors() {
        // Errors 1, 2, 4, 1.2: the three best within 1.5x of the best are 1, 1.2 (2 is beyond).
        let w = choose(&[s(1.0), s(2.0), s(4.0), s(1.2)]);
        assert_eq!(w.iter().map(|x| x.0).collect::<Vec<_>>(), vec![0, 3]);
        // 1/1 : 1/1.2 = 6 : 5.
        assert!((w[0].1 - 6.0 / 11.0).abs() < 1e-12);
        assert!((w[1].1 - 5.0 / 11.0).abs() < 1e-12);
        // A perfect candidate stands alone.
        assert_eq!(choose(&[s(0.5), s(0.0)]), vec![(1, 1.0)]);
        let f = mix(&w, &[&[1.0, 2.0], &[12.0, 13.0]]);
        assert!((f[0] - (6.0 + 60.0) / 11.0).abs() < 1e-12);
    }

    #[test]
    fn leads_are_cut_in_quarters_and_halves() {
        assert_eq!(ranges(24, 3), vec![0..6, 6..12, 12..24]);
        assert_eq!(ranges(28, 3), vec![0..7, 7..14, 14..28]);
        assert_eq!(ranges(2, 3), std::iter::once(0..2).collect::<Vec<_>>());
    }

    #[test]
    fn each_range_keeps_naive_unless_a_mix_validates_ten_percent_better() {
        // The truth is 0; a forecast's values are its errors. Naive is off by 1
        // everywhere; B by 0.95 (5% better: not enough); C by 2 for the first
        // half and by 0.3 for the second (70% better there).
        let f = |first: f64, second: f64| {
            vec![
                (0..24)
                    .map(|j| if j < 12 { first } else { second })
                    .collect::<Vec<f64>>();
                2
            ]
        };
        let scored = vec![
            Scored {
                method: Method::Naive,
                mae: 1.0,
                validation: f(1.0, 1.0),
            },
            Scored {
                method: Method::RecentMean(6),
                mae: 0.95,
                validation: f(0.95, 0.95),
            },
            Scored {
                method: Method::SeasonalNaive(24),
                mae: 1.15,
                validation: f(2.0, 0.3),
            },
        ];
        let err = |v: &[Vec<f64>], leads: Leads| {
            let n = (v.len() * leads.len()) as f64;
            v.iter()
                .map(|w| w[leads.clone()].iter().map(|x| x.abs()).sum::<f64>())
                .sum::<f64>()
                / n
        };
        let p = plan(&scored, 24, 2, &err);
        // Hours 1-12: naive and B mix to ~0.97, not 10% better than naive's 1: naive.
        // Hours 13-24: C alone (B and naive are beyond 1.5x its 0.3), 0.3 <= 0.9.
        assert_eq!(
            p.parts,
            vec![
                (0..6, vec![(0, 1.0)]),
                (6..12, vec![(0, 1.0)]),
                (12..24, vec![(2, 1.0)])
            ]
        );
        let out = p.apply(|i| scored[i].validation[0].clone(), 24);
        assert_eq!((out[0], out[23]), (1.0, 0.3));
        assert_eq!(
            p.describe(&scored),
            "steps 1-6: naive (last value); steps 7-12: naive (last value); steps 13-24: seasonal naive (24 steps)"
        );
    }
}
