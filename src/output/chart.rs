//! Charts of demand against capacity, drawn: a Mermaid `xychart-beta` block
//! (it renders in GitHub comments), a self-contained SVG, and a terminal
//! sparkline. The data ([`PoolChart`]) is built by `cost::chart`.

use crate::cost::chart::{Day, PoolChart, thin};

/// Colors of the series, in the order they are drawn: P50, P90, capacity,
/// reserved, committed.
pub const COLORS: [&str; 5] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"];

fn num(x: f64) -> String {
    let t = format!("{x:.1}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A Mermaid `xychart-beta` block (fenced), with a caption naming the lines.
pub fn mermaid(full: &PoolChart) -> String {
    let chart = thin(full, 40);
    let top = chart
        .days
        .iter()
        .map(|d| d.p90.max(d.committed).max(d.reserved))
        .fold(chart.capacity, f64::max);
    let labels: Vec<String> = chart
        .days
        .iter()
        .map(|d| format!("\"{}\"", &d.date[5..]))
        .collect();
    let line = |f: fn(&Day) -> f64| -> String {
        let v: Vec<String> = chart.days.iter().map(|d| num(f(d))).collect();
        format!("    line [{}]\n", v.join(", "))
    };
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
    out.push_str(&format!("    x-axis [{}]\n", labels.join(", ")));
    out.push_str(&format!(
        "    y-axis \"GPUs\" 0 --> {}\n",
        (top * 1.1).ceil().max(1.0)
    ));
    out.push_str(&line(|d| d.p50));
    out.push_str(&line(|d| d.p90));
    let cap = chart.capacity;
    out.push_str(&format!(
        "    line [{}]\n",
        vec![num(cap); chart.days.len()].join(", ")
    ));
    out.push_str(&line(|d| d.reserved));
    out.push_str(&line(|d| d.committed));
    out.push_str("```\n");
    let last_measured = full
        .days
        .iter()
        .rev()
        .find(|d| d.measured)
        .map(|d| d.date.clone());
    out.push_str(&format!(
        "<sub>Blue: demand (daily mean; measured{}, P50 after); orange: P90; green: the pool's {} GPUs; red: reserved; purple: committed by requests. Forecast: {}.</sub>\n",
        last_measured.map(|d| format!(" through {d}")).unwrap_or_default(),
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

/// XML-escapes text.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
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
    let (left, right, top_m, bottom) = (60.0, 20.0, 30.0, 50.0);
    let pw = w - left - right;
    let ph = h - top_m - bottom;
    let n = c.days.len().max(1);
    let top = c
        .days
        .iter()
        .map(|d| d.p90.max(d.committed).max(d.reserved))
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
    let step = n.div_ceil(8).max(1);
    for (i, d) in c.days.iter().enumerate().step_by(step) {
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            x(i),
            top_m + ph + 16.0,
            escape(&d.date[5..])
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
    s.push_str(&poly(&|d| d.p90, COLORS[1], " stroke-dasharray=\"4,2\""));
    s.push_str(&poly(&|d| d.p50, COLORS[0], ""));
    // Legend.
    let items = [
        ("demand (P50)", COLORS[0]),
        ("P90", COLORS[1]),
        ("pool GPUs", COLORS[2]),
        ("reserved", COLORS[3]),
        ("committed", COLORS[4]),
    ];
    for (k, (label, color)) in items.iter().enumerate() {
        let lx = left + k as f64 * 140.0;
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
            days: (0..10)
                .map(|i| Day {
                    date: format!("2026-11-{:02}", 10 + i),
                    p10: 70.0,
                    p50: 80.0 + i as f64,
                    p90: 95.0,
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
        assert!(m.contains("x-axis [\"11-10\", \"11-11\""));
        assert!(m.contains("line [80, 81, 82, 83, 84, 85, 86, 87, 88, 89]"));
        assert!(m.contains("line [240, 240, 240"));
        assert_eq!(m.matches("    line [").count(), 5);
        assert!(m.contains("y-axis \"GPUs\" 0 --> 264"));
        assert!(m.contains("measured through 2026-11-14"));
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
        assert!(mermaid(&c).matches(", ").count() < 5 * 40 + 10);
    }

    #[test]
    fn sparkline_scales_to_the_top() {
        assert_eq!(sparkline(&[0.0, 50.0, 100.0, 200.0], 100.0), "▁▅██");
        assert_eq!(sparkline(&[1.0], 0.0), "▁");
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
