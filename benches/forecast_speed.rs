//! Forecast speed: 1,000 synthetic hourly series of 90 days (level shifts,
//! daily and weekly cycles, noise, gaps, some near zero), each forecast 24 h
//! ahead with quantiles, on 1 and on 2 threads.
//!
//!     cargo bench --bench forecast_speed [-- SERIES DAYS HORIZON]

use capops::forecast;
use std::time::Instant;

struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64) / ((1u64 << 53) as f64)
    }
}

fn series(seed: u64, hours: usize) -> Vec<Option<f64>> {
    let mut rng = Lcg(seed);
    let base = if seed.is_multiple_of(5) {
        0.5
    } else {
        8.0 + 100.0 * rng.next()
    };
    let daily = base * 0.3 * rng.next();
    let weekly = base * 0.2 * rng.next();
    let mut level = base;
    (0..hours)
        .map(|t| {
            if rng.next() < 0.01 {
                // A big job starts or stops.
                level = (level + base * (rng.next() - 0.5)).max(0.0);
            }
            if rng.next() < 0.005 {
                return None;
            }
            let phase = 2.0 * std::f64::consts::PI * t as f64;
            let v = level
                + daily * (phase / 24.0).sin()
                + weekly * (phase / 168.0).sin()
                + base * 0.05 * (rng.next() - 0.5);
            Some(v.max(0.0).round())
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let count: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let days: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(90);
    let horizon: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(24);
    let histories: Vec<Vec<Option<f64>>> = (0..count as u64)
        .map(|s| series(s + 1, days * 24))
        .collect();
    println!("{count} series x {days} days hourly, horizon {horizon} h");
    for threads in [1, 2] {
        let mut times = Vec::new();
        let mut checksum = 0.0;
        for _ in 0..5 {
            let start = Instant::now();
            let out = forecast::hourly_many(&histories, horizon, threads);
            times.push(start.elapsed().as_secs_f64());
            checksum = out.iter().map(|f| f.p50[0]).sum::<f64>();
        }
        times.sort_by(f64::total_cmp);
        println!(
            "threads {threads}: median {:.3} s, min {:.3} s ({:.0} series/s); checksum {checksum:.1}",
            times[2],
            times[0],
            count as f64 / times[2]
        );
    }
}
