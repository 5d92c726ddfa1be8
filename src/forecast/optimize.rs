//! Nelder-Mead minimisation for the few parameters of smoothing models.

/// Minimises `f` from `start`, with initial steps `step`, for at most `iterations`.
pub fn nelder_mead(
    f: &dyn Fn(&[f64]) -> f64,
    start: &[f64],
    step: &[f64],
    iterations: usize,
) -> Vec<f64> {
    let n = start.len();
    let mut simplex: Vec<Vec<f64>> = vec![start.to_vec()];
    for i in 0..n {
        let mut p = start.to_vec();
        p[i] += step[i];
        simplex.push(p);
    }
    let mut values: Vec<f64> = simplex.iter().map(|p| f(p)).collect();
    for _ in 0..iterations {
        let mut order: Vec<usize> = (0..=n).collect();
        order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
        simplex = order.iter().map(|&i| simplex[i].clone()).collect();
        values = order.iter().map(|&i| values[i]).collect();
        if (values[n] - values[0]).abs() <= 1e-10 * (1.0 + values[0].abs()) {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|d| simplex[..n].iter().map(|p| p[d]).sum::<f64>() / n as f64)
            .collect();
        let along = |t: f64| -> Vec<f64> {
            (0..n)
                .map(|d| centroid[d] + t * (simplex[n][d] - centroid[d]))
                .collect()
        };
        let reflected = along(-1.0);
        let fr = f(&reflected);
        if fr < values[0] {
            let expanded = along(-2.0);
            let fe = f(&expanded);
            if fe < fr {
                simplex[n] = expanded;
                values[n] = fe;
            } else {
                simplex[n] = reflected;
                values[n] = fr;
            }
        } else if fr < values[n - 1] {
            simplex[n] = reflected;
            values[n] = fr;
        } else {
            let contracted = if fr < values[n] {
                along(-0.5)
            } else {
                along(0.5)
            };
            let fc = f(&contracted);
            if fc < values[n].min(fr) {
                simplex[n] = contracted;
                values[n] = fc;
            } else {
                // Shrink towards the best point.
                for i in 1..=n {
                    simplex[i] = (0..n)
                        .map(|d| simplex[0][d] + 0.5 * (simplex[i][d] - simplex[0][d]))
                        .collect();
                    values[i] = f(&simplex[i]);
                }
            }
        }
    }
    let best = (0..=n)
        .min_by(|&a, &b| values[a].total_cmp(&values[b]))
        .unwrap_or(0);
    simplex[best].clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_minimum_of_a_bowl() {
        let f = |p: &[f64]| (p[0] - 0.3).powi(2) + 2.0 * (p[1] - 0.7).powi(2);
        let best = nelder_mead(&f, &[0.5, 0.1], &[0.2, 0.1], 200);
        assert!((best[0] - 0.3).abs() < 1e-3, "{best:?}");
        assert!((best[1] - 0.7).abs() < 1e-3, "{best:?}");
    }
}
