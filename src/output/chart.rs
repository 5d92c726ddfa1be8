//! Charts of demand against capacity, drawn: a Mermaid `xychart-beta` block
//! (it renders in GitHub comments), a self-contained SVG, and a terminal
//! sparkline. The data ([`PoolChart`]) is built by `cost::chart`.

use crate::cost::chart::{Day, PoolChart, thin};

/// Colors of the series, in the order they are drawn: demand (P50, with
/// the approved requests), the day's peak hourly P90, the pool's GPUs,
/// reserved, committed by requests, and demand from the history alone.
pub const COLORS: [&str; 6] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
];

fn num(x: f64) -> String {
    let t = format!("{x:.1}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A Mermaid `xychart-beta` block (fenced), with a caption naming the lines.
/// The x axis is numeric, in days from the day of `--at`, so Mermaid picks
/// a few readable ticks however many days there are (date labels for each
/// day overlap at comment width).
pub fn mermaid(full: &PoolChart) -> String {
    let chart = thin(full, 40);
    let top = chart
        .days
        .iter()
        .map(|d| d.peak.max(d.p90).max(d.committed).max(d.reserved))
        .fold(chart.capacity, f64::max);
    let line = |f: fn(&Day) -> f64| -> String {
        let v: Vec<String> = chart.days.iter().map(|d| num(f(d))).collect();
        format!("    line [{}]\n", v.join(", "))
    };
    let first = chart.days.first().map_or(0, |d| d.offset);
    let last = full.days.last().map_or(0, |d| d.offset);
    let mut out = String::from("```mermaid\n");
    out.push_str(&format!(
        "%%{{init: {{\"themeVariables\": {{\"xyChart\": {{\"plotColorPalette\": \"{}\"}}}}}}}}%%\n",
        COLORS.join(", ")
    ));
    out.push_str("xychart-beta\n");
    out.push_str(&format!(
        "    title \"{}/{}: GPUs, demand against capacity\"\n",
        chart.cluster, chart.pool
    ));
    out.push_str(&format!(
        "    x-axis \"days from {}\" {first} --> {last}\n",
        chart.at
    ));
    out.push_str(&format!(
        "    y-axis \"GPUs\" 0 --> {}\n",
        (top * 1.1).ceil().max(1.0)
    ));
    out.push_str(&line(|d| d.p50));
    out.push_str(&line(|d| d.peak));
    let cap = chart.capacity;
    out.push_str(&format!(
        "    line [{}]\n",
        vec![num(cap); chart.days.len()].join(", ")
    ));
    out.push_str(&line(|d| d.reserved));
    out.push_str(&line(|d| d.committed));
    out.push_str(&line(|d| d.trend));
    out.push_str("```\n");
    let last_measured = full
        .days
        .iter()
        .rev()
        .find(|d| d.measured)
        .map(|d| d.date.clone());
    let over = full.days.iter().filter(|d| d.peak > cap + 1e-9).count();
    out.push_str(&format!(
        "<sub>Days from {} (day 0). Blue: demand (daily mean; measured{}, then P50 with the approved requests); orange: the day's peak hourly P90{}; green: the pool's {} GPUs; red: reserved; purple: committed by requests; brown: the forecast from the history alone. Forecast: {}.</sub>\n",
        chart.at,
        last_measured.map(|d| format!(" through {d}")).unwrap_or_default(),
        if over > 0 {
            format!(" (above the pool's GPUs on {over} day{})", if over == 1 { "" } else { "s" })
        } else {
            String::new()
        },
        num(cap),
        chart.method
    ));
    out
}

/// A terminal sparkline of `values` scaled to `top`.
pub fn sparkline(values: &[f64], top: f64) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    values
        .iter()
        .map(|v| {
            if top <= 0.0 {
                return BARS[0];
            }
            let i = ((v / top).clamp(0.0, 1.0) * 7.0).round() as usize;
            BARS[i]
        })
        .collect()
}

/// XML-escapes text; a bidirectional control is shown by its code point
/// (`<U+202E>`), as everywhere else.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if super::escape::reorders(c) => out.push_str(&format!("&lt;U+{:04X}&gt;", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// One SVG document with a panel per chart (self-contained: no scripts, no
/// external fonts or styles).
pub fn svg(charts: &[PoolChart]) -> String {
    let (w, panel_h) = (900.0, 300.0);
    let height = panel_h * charts.len().max(1) as f64;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{height}\" viewBox=\"0 0 {w} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    );
    for (i, c) in charts.iter().enumerate() {
        out.push_str(&format!(
            "<g transform=\"translate(0,{})\">\n",
            i as f64 * panel_h
        ));
        out.push_str(&panel(c, w, panel_h));
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out
}

/// One chart as SVG elements in a `w` × `h` box.
pub fn panel(c: &PoolChart, w: f64, h: f64) -> String {
    let (left, right, top_m, bottom) = (60.0, 20.0, 30.0, 56.0);
    let pw = w - left - right;
    let ph = h - top_m - bottom;
    let n = c.days.len().max(1);
    let top = c
        .days
        .iter()
        .map(|d| d.peak.max(d.p90).max(d.committed).max(d.reserved))
        .fold(c.capacity, f64::max)
        .max(1.0)
        * 1.1;
    let x = |i: usize| {
        left + if n > 1 {
            pw * i as f64 / (n - 1) as f64
        } else {
            pw / 2.0
        }
    };
    let y = |v: f64| top_m + ph - ph * (v / top).clamp(0.0, 1.0);
    let mut s = String::new();
    s.push_str(&format!(
        "<text x=\"{left}\" y=\"18\" font-weight=\"bold\">{}/{}: GPUs, demand against capacity</text>\n",
        escape(&c.cluster),
        escape(&c.pool)
    ));
    // Axes and grid.
    for k in 0..=4 {
        let v = top / 1.1 * k as f64 / 4.0;
        let yy = y(v);
        s.push_str(&format!(
            "<line x1=\"{left}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\" stroke=\"#ddd\"/>\n<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            left + pw,
            left - 6.0,
            yy + 4.0,
            num(v.round())
        ));
    }
    // Date labels at least 70 px apart (a label is about 40 px wide), and
    // always on the day of `--at`, so they never overlap at any width.
    let step = ((70.0 * n as f64 / pw).ceil() as usize).max(1);
    let anchor = c.days.iter().position(|d| d.offset == 0).unwrap_or(0);
    for (i, d) in c.days.iter().enumerate() {
        if (i as i64 - anchor as i64).rem_euclid(step as i64) != 0 {
            continue;
        }
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            x(i),
            top_m + ph + 16.0,
            escape(&d.date[5..])
        ));
    }
    if c.days.iter().any(|d| d.offset == 0) {
        s.push_str(&format!(
            "<line x1=\"{0:.1}\" y1=\"{1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"#333\" stroke-dasharray=\"1,2\"/>\n<text x=\"{0:.1}\" y=\"{3:.1}\" text-anchor=\"middle\" fill=\"#333\">{4}</text>\n",
            x(anchor),
            top_m,
            top_m + ph,
            top_m + ph + 30.0,
            escape(&format!("--at {}", c.at))
        ));
    }
    // The P10-P90 band over forecast days.
    let forecast: Vec<usize> = (0..c.days.len()).filter(|&i| !c.days[i].measured).collect();
    if let (Some(&a), Some(&b)) = (forecast.first(), forecast.last()) {
        let from = a.saturating_sub(1);
        let mut pts: Vec<String> = (from..=b)
            .map(|i| format!("{:.1},{:.1}", x(i), y(c.days[i].p90)))
            .collect();
        pts.extend(
            (from..=b)
                .rev()
                .map(|i| format!("{:.1},{:.1}", x(i), y(c.days[i].p10))),
        );
        s.push_str(&format!(
            "<polygon points=\"{}\" fill=\"{}\" fill-opacity=\"0.18\" stroke=\"none\"/>\n",
            pts.join(" "),
            COLORS[0]
        ));
        s.push_str(&format!(
            "<line x1=\"{0:.1}\" y1=\"{1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"#999\" stroke-dasharray=\"3,3\"/>\n<text x=\"{3:.1}\" y=\"{4}\" fill=\"#666\">forecast</text>\n",
            x(a),
            top_m,
            top_m + ph,
            x(a) + 4.0,
            top_m + 12.0
        ));
    }
    let poly = |f: &dyn Fn(&Day) -> f64, color: &str, dash: &str| -> String {
        let pts: Vec<String> = c
            .days
            .iter()
            .enumerate()
            .map(|(i, d)| format!("{:.1},{:.1}", x(i), y(f(d))))
            .collect();
        format!(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\n",
            pts.join(" ")
        )
    };
    s.push_str(&poly(&|_| c.capacity, COLORS[2], ""));
    if c.days.iter().any(|d| d.reserved > 0.0) {
        s.push_str(&poly(
            &|d| d.reserved,
            COLORS[3],
            " stroke-dasharray=\"6,3\"",
        ));
    }
    if c.days.iter().any(|d| d.committed > 0.0) {
        s.push_str(&poly(
            &|d| d.committed,
            COLORS[4],
            " stroke-dasharray=\"2,3\"",
        ));
    }
    s.push_str(&poly(&|d| d.peak, COLORS[1], " stroke-dasharray=\"4,2\""));
    if c.days.iter().any(|d| (d.trend - d.p50).abs() > 0.05) {
        s.push_str(&poly(&|d| d.trend, COLORS[5], " stroke-dasharray=\"8,3\""));
    }
    s.push_str(&poly(&|d| d.p50, COLORS[0], ""));
    // Legend.
    let items = [
        ("demand (P50)", COLORS[0]),
        ("peak hourly P90", COLORS[1]),
        ("pool GPUs", COLORS[2]),
        ("reserved", COLORS[3]),
        ("committed", COLORS[4]),
        ("history alone", COLORS[5]),
    ];
    for (k, (label, color)) in items.iter().enumerate() {
        let lx = left + k as f64 * 135.0;
        let ly = h - 12.0;
        s.push_str(&format!(
            "<rect x=\"{lx}\" y=\"{:.1}\" width=\"12\" height=\"4\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{ly}\">{label}</text>\n",
            ly - 5.0,
            lx + 16.0
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> PoolChart {
        PoolChart {
            cluster: "c".into(),
            pool: "p".into(),
            capacity: 240.0,
            method: "naive".into(),
            at: "2026-11-15".into(),
            days: (0..10)
                .map(|i| Day {
                    date: format!("2026-11-{:02}", 10 + i),
                    offset: i - 5,
                    p10: 70.0,
                    p50: 80.0 + i as f64,
                    p90: 95.0,
                    // A few hours of day 7 go above the pool's 240 GPUs.
                    peak: if i == 7 { 250.0 } else { 110.0 },
                    trend: 80.0,
                    measured: i < 5,
                    committed: 100.0,
                    reserved: 200.0,
                })
                .collect(),
        }
    }

    #[test]
    fn mermaid_has_one_value_per_day_for_every_line() {
        let m = mermaid(&chart());
        assert!(m.starts_with("```mermaid\n"));
        assert!(m.contains("xychart-beta"));
        // Days from --at on a numeric axis: Mermaid places a few readable ticks.
        assert!(
            m.contains("x-axis \"days from 2026-11-15\" -5 --> 4\n"),
            "{m}"
        );
        assert!(m.contains("line [80, 81, 82, 83, 84, 85, 86, 87, 88, 89]"));
        assert!(m.contains("line [240, 240, 240"));
        // The peak line shows the hours above capacity the daily means hide.
        assert!(m.contains("line [110, 110, 110, 110, 110, 110, 110, 250, 110, 110]"));
        assert_eq!(m.matches("    line [").count(), 6);
        assert!(m.contains("y-axis \"GPUs\" 0 --> 275"));
        assert!(m.contains("measured through 2026-11-14"));
        assert!(m.contains("above the pool's GPUs on 1 day"));
    }

    #[test]
    fn long_charts_are_thinned_to_weeks() {
        let mut c = chart();
        c.days = (0..100)
            .map(|i| Day {
                date: format!("d{i:03}-xx"),
                ..c.days[0].clone()
            })
            .collect();
        let t = thin(&c, 40);
        assert_eq!(t.days.len(), 34);
        // Peaks keep their highest value when days are grouped.
        assert!(t.days.iter().all(|d| d.peak == 110.0));
        assert!(mermaid(&c).matches(", ").count() < 5 * 40 + 10);
    }

    #[test]
    fn sparkline_scales_to_the_top() {
        assert_eq!(sparkline(&[0.0, 50.0, 100.0, 200.0], 100.0), "▁▅██");
        assert_eq!(sparkline(&[1.0], 0.0), "▁");
    }

    #[test]
    fn svg_labels_never_crowd_and_start_at_the_day_of_at() {
        let mut c = chart();
        c.days = (0..120)
            .map(|i| Day {
                date: format!("2026-{:02}-{:02}", 1 + i / 28, 1 + i % 28),
                offset: i - 30,
                ..c.days[0].clone()
            })
            .collect();
        let p = panel(&c, 900.0, 300.0);
        let xs: Vec<f64> = p
            .lines()
            .filter(|l| {
                let label = l.split("text-anchor=\"middle\">").nth(1).unwrap_or("");
                l.starts_with("<text") && label.len() == 12 && label.as_bytes()[2] == b'-'
            })
            .filter_map(|l| l.split("x=\"").nth(1)?.split('"').next()?.parse().ok())
            .collect();
        assert!(xs.len() >= 5, "{p}");
        assert!(xs.windows(2).all(|w| w[1] - w[0] >= 60.0), "{xs:?}");
        // The day of --at is labelled and marked.
        assert!(p.contains(">02-03</text>"), "{p}");
        assert!(p.contains("--at 2026-11-15"));
    }

    #[test]
    fn svg_is_one_self_contained_document() {
        let s = svg(&[chart(), chart()]);
        assert!(s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert_eq!(s.matches("<polygon").count(), 2);
        assert!(!s.contains("<script") && !s.contains("href"));
        assert!(s.trim_end().ends_with("</svg>"));
    }
}
