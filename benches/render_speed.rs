//! Render speed: load a capacity repository (by default the synthetic one of
//! 50 clusters, 500 teams and 10,000 requests that `benches/gen_repo.py`
//! writes), then time rendering every cluster's objects and the cloud files
//! in memory, and writing them as text.
//!
//!     python3 benches/gen_repo.py /tmp/synth
//!     cargo bench --bench render_speed -- /tmp/synth [RUNS]

use capops::render::{self, templates::Templates};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().filter(|a| a != "--bench").collect();
    let path = args.get(1).cloned().unwrap_or_else(|| "/tmp/synth".into());
    let runs: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(7);
    let t = Instant::now();
    let head = capops::pipeline::validate_dir(std::path::Path::new(&path))
        .unwrap_or_else(|e| panic!("{path}: {e}; generate it with benches/gen_repo.py"));
    let load = t.elapsed();
    let mut diags = Vec::new();
    let templates = Templates::new(&[], &mut diags);
    let opts = render::Options {
        at: "2026-11-22".parse().unwrap(),
        revision: "bench".into(),
        clusters: None,
    };
    let mut times = Vec::new();
    let mut files = 0;
    let mut bytes = 0;
    for _ in 0..runs {
        let t = Instant::now();
        let r = render::render(&head.repo, &templates, &opts);
        bytes = r.files.iter().map(|f| f.text().len()).sum::<usize>();
        times.push(t.elapsed().as_secs_f64());
        files = r.files.len();
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{path}: {} clusters, {} teams, {} requests; load and validate {:.3} s",
        head.repo.clusters.len(),
        head.repo.teams.len(),
        head.repo.requests.len(),
        load.as_secs_f64()
    );
    println!(
        "render to text: {files} files, {:.1} MB; median {:.3} s, min {:.3} s over {runs} runs",
        bytes as f64 / 1e6,
        times[times.len() / 2],
        times[0]
    );
}
