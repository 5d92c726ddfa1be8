//! The forecaster on series whose answer is known: sines, gaps, level shifts,
//! short histories, and quantiles that never cross.

use super::*;

/// A small deterministic pseudo-random generator for test series.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64) / ((1u64 << 53) as f64)
    }
    fn normal(&mut self) -> f64 {
        let u1 = self.next().max(1e-12);
        let u2 = self.next();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

fn sine(hours: usize, noise: f64, seed: u64) -> Vec<Option<f64>> {
    let mut rng = Lcg(seed);
    (0..hours)
        .map(|i| {
            let v = 40.0 + 15.0 * (2.0 * std::f64::consts::PI * (i % 24) as f64 / 24.0).sin();
            Some(v + noise * rng.normal())
        })
        .collect()
}

fn truth(i: usize) -> f64 {
    40.0 + 15.0 * (2.0 * std::f64::consts::PI * (i % 24) as f64 / 24.0).sin()
}

#[test]
fn a_daily_sine_with_noise_is_forecast_with_its_season() {
    let history = sine(24 * 30, 2.0, 7);
    let f = hourly(&history, 24);
    let n = history.len();
    let mae: f64 = f
        .p50
        .iter()
        .enumerate()
        .map(|(j, v)| (v - truth(n + j)).abs())
        .sum::<f64>()
        / 24.0;
    // The season's amplitude is 15; a flat forecast would be off by about 9.5 on average.
    assert!(mae < 2.5, "MAE {mae}: {}", f.method);
    // The peak and the trough land where the season puts them.
    let peak = (0..24)
        .max_by(|&a, &b| f.p50[a].total_cmp(&f.p50[b]))
        .unwrap();
    let trough = (0..24)
        .min_by(|&a, &b| f.p50[a].total_cmp(&f.p50[b]))
        .unwrap();
    assert!(
        ((n + peak) % 24).abs_diff(6) <= 1,
        "peak at phase {}",
        (n + peak) % 24
    );
    assert!(
        ((n + trough) % 24).abs_diff(18) <= 1,
        "trough at phase {}",
        (n + trough) % 24
    );
    assert!(
        f.fallback.is_none() || f.fallback.as_deref().unwrap().contains("weekly"),
        "{:?}",
        f.fallback
    );
    // The truth is inside [P10, P90] most of the time.
    let inside = (0..24)
        .filter(|&j| f.p10[j] <= truth(n + j) && truth(n + j) <= f.p90[j])
        .count();
    assert!(inside >= 18, "{inside} of 24 inside the band");
}

#[test]
fn gaps_and_a_level_shift_do_not_break_the_model() {
    // Two weeks at 20, a collector outage of a day, then the level jumps to 60.
    let mut history: Vec<Option<f64>> = (0..24 * 14).map(|i| Some(20.0 + (i % 3) as f64)).collect();
    history.extend(std::iter::repeat_n(None, 24));
    history.extend((0..24 * 3).map(|i| Some(60.0 + (i % 3) as f64)));
    history.push(None);
    let f = hourly(&history, 48);
    assert_eq!(f.p50.len(), 48);
    for j in 0..48 {
        assert!(f.p10[j].is_finite() && f.p50[j].is_finite() && f.p90[j].is_finite());
        assert!(f.p10[j] >= 0.0 && f.p10[j] <= f.p50[j] && f.p50[j] <= f.p90[j]);
    }
    // It follows the new level, not the old one or their average.
    let mean = f.p50.iter().sum::<f64>() / 48.0;
    assert!(
        (mean - 61.0).abs() < 5.0,
        "mean forecast {mean} by {}",
        f.method
    );
}

#[test]
fn three_days_of_history_fall_back_and_say_so() {
    let history = sine(24 * 3, 1.0, 3);
    let f = hourly(&history, 24);
    let reason = f.fallback.as_deref().expect("a fallback reason");
    assert!(
        reason.contains("too short for a weekly season") || reason.contains("fewer than"),
        "{reason}"
    );
    assert_eq!(f.p50.len(), 24);
    // Two days: not even a daily season can be validated.
    let f = hourly(&sine(30, 1.0, 3), 24);
    assert!(
        f.fallback
            .as_deref()
            .unwrap()
            .contains("fewer than two seasons"),
        "{:?}",
        f.fallback
    );
    assert_eq!(f.method, "naive (last value)");
}

#[test]
fn quantiles_are_never_negative_and_never_cross() {
    let mut rng = Lcg(42);
    for case in 0..40 {
        // Spiky series near zero with gaps and jumps.
        let hours = 24 * (3 + case % 20);
        let mut level = 0.0f64;
        let history: Vec<Option<f64>> = (0..hours)
            .map(|_| {
                if rng.next() < 0.03 {
                    level = (rng.next() * 50.0).floor();
                }
                if rng.next() < 0.05 {
                    None
                } else {
                    Some((level + 5.0 * rng.normal()).max(0.0))
                }
            })
            .collect();
        for horizon in [1, 24, 168, 24 * 60] {
            let f = hourly(&history, horizon);
            assert_eq!(f.p50.len(), horizon);
            for j in 0..horizon {
                assert!(f.p10[j] >= 0.0, "case {case}: negative P10");
                assert!(
                    f.p10[j] <= f.p50[j] && f.p50[j] <= f.p90[j],
                    "case {case}: crossing at {j}"
                );
            }
        }
    }
}

#[test]
fn empty_and_all_gap_series_forecast_zero() {
    let f = hourly(&[], 24);
    assert!(f.p50.iter().all(|v| *v == 0.0));
    assert!(f.fallback.is_some());
    let f = hourly(&[None; 100], 24);
    assert!(f.p90.iter().all(|v| *v == 0.0));
}

#[test]
fn long_horizons_use_daily_means_and_keep_the_level() {
    // 90 days around 80 GPUs with a daily cycle: six months ahead stays around 80.
    let mut rng = Lcg(9);
    let history: Vec<Option<f64>> = (0..24 * 90)
        .map(|i| {
            Some(
                80.0 + 5.0 * (2.0 * std::f64::consts::PI * (i % 24) as f64 / 24.0).sin()
                    + rng.normal(),
            )
        })
        .collect();
    let f = hourly(&history, 24 * 182);
    assert!(f.method.starts_with("daily means"), "{}", f.method);
    assert_eq!(f.p50.len(), 24 * 182);
    let mean = f.p50.iter().sum::<f64>() / f.p50.len() as f64;
    assert!((mean - 80.0).abs() < 1.5, "{mean}");
    // The daily cycle is put back onto the hours.
    let spread = f.p50[..24].iter().cloned().fold(f64::MIN, f64::max)
        - f.p50[..24].iter().cloned().fold(f64::MAX, f64::min);
    assert!(spread > 7.0, "{spread}");
}

#[test]
fn long_horizons_read_sparse_rows() {
    // 92 days at a steady 8 GPUs measured one hour in three (rows every 3
    // hours, or hourly rows with two cells in three empty): no day has half
    // of its 24 hours, but every day has all the hours this series measures.
    // Sixty days ahead stays at 8, not the "no values" fallback of 0.
    let history: Vec<Option<f64>> = (0..24 * 92).map(|i| (i % 3 == 0).then_some(8.0)).collect();
    let f = hourly(&history, 24 * 60);
    assert!(f.method.starts_with("daily means"), "{}", f.method);
    assert_eq!(f.fallback, None, "{}", f.method);
    for p in [&f.p10, &f.p50, &f.p90] {
        let mean = p.iter().sum::<f64>() / p.len() as f64;
        assert!((mean - 8.0).abs() < 1e-6, "{mean}");
    }
    // A day with fewer of them than half of what the series usually measures
    // is still left out: two rows of 200 on one day do not make a level.
    let mut history = history;
    for h in history[24 * 91..].iter_mut() {
        *h = None;
    }
    history[24 * 91] = Some(200.0);
    let f = hourly(&history, 24 * 60);
    let mean = f.p50.iter().sum::<f64>() / f.p50.len() as f64;
    assert!((mean - 8.0).abs() < 1e-6, "{mean}");
}

#[test]
fn fill_interpolates_gaps() {
    let (y, offset) = fill(&[None, Some(1.0), None, None, Some(4.0), None]);
    assert_eq!(offset, 1);
    assert_eq!(y, vec![1.0, 2.0, 3.0, 4.0, 4.0]);
}

#[test]
fn steps_keep_every_hour_of_a_series() {
    use super::demand::Steps;
    let series = |j: usize| match j {
        0..=9 => 4.0,
        10..=29 => 12.5,
        30..=30 => -3.0,
        _ => 0.0,
    };
    let s = Steps::from_fn(50, series);
    assert_eq!(s.len(), 50);
    for j in 0..50 {
        assert_eq!(s.get(j), Some(series(j)), "hour {j}");
    }
    assert_eq!(s.get(50), None);
    assert_eq!(Steps::from_fn(0, series).get(0), None);
    // A NaN run is one run and reads back as NaN.
    let n = Steps::from_fn(3, |_| f64::NAN);
    assert!(n.get(2).unwrap().is_nan());
}

#[test]
fn long_horizons_do_not_move_with_the_hour_the_history_starts() {
    // A team holds 16 GPUs from 12:00 to 24:00 and none before: 8 a day on
    // average. Histories that start at midnight or at noon (as `--at`'s hour
    // sets the lookback's start) forecast the same level a month out.
    let day = |h: usize| if h % 24 >= 12 { 16.0 } else { 0.0 };
    for start in [0, 12, 5] {
        let history: Vec<Option<f64>> = (start..24 * 60).map(|h| Some(day(h))).collect();
        let f = hourly(&history, 24 * 40);
        assert!(f.method.starts_with("daily means"), "{}", f.method);
        let month = &f.p50[24 * 30..24 * 37];
        let mean = month.iter().sum::<f64>() / month.len() as f64;
        assert!((mean - 8.0).abs() < 0.5, "start {start}: {mean}");
    }
}
