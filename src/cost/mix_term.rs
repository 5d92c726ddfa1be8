//! Whether a 3-year commitment beats buying the same instance a year at a
//! time over its term: each year, a 1-year commitment or on demand for the
//! hours the instance is needed, whichever is less. A 3-year term that
//! outlives the demand filling it (demand for 19 of its 36 months) can pass
//! the break-even rule against on demand and still cost more than a 1-year
//! term and then on demand: it is not recommended then.

/// Hours in a year of a term.
const YEAR: usize = 365 * 24;

/// How many instances (of `gpn` GPUs) are cheaper on a 3-year commitment
/// at `p3` a GPU-hour than a year at a time, over `term`, the steady demand
/// (GPUs) hour by hour from the term's start: instance `k + 1` is needed in
/// an hour whose demand is above `k` instances; a year of it costs the
/// 1-year price for the year (`p1`, when there is one) or on demand (`od`)
/// for the hours it is needed, whichever is less. Hours past `term` need
/// nothing (a 3-year term is paid for them all the same).
pub fn three_year_instances(term: &[f64], gpn: f64, p3: f64, p1: Option<f64>, od: f64) -> u32 {
    let three = p3 * (3 * YEAR) as f64;
    let mut k = 0u32;
    while (k as usize) < 100_000 {
        let level = k as f64 * gpn;
        let by_year: f64 = term
            .chunks(YEAR)
            .map(|year| {
                let needed = year.iter().filter(|&&d| d > level + 1e-9).count() as f64;
                let on_demand = od * needed;
                p1.map_or(on_demand, |p1| on_demand.min(p1 * YEAR as f64))
            })
            .sum();
        if three >= by_year {
            return k;
        }
        k += 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_three_year_term_the_demand_outlives_by_half_is_not_bought() {
        // 16 GPUs (2 instances of 8) for 557 days, then nothing; per GPU-hour
        // 3-year 4, 1-year 6, on demand 10 (the break-even against on demand
        // is 40% of the term, and the demand fills 50.8% of it).
        let mut term = vec![16.0; 557 * 24];
        term.resize(3 * YEAR, 0.0);
        // Per instance: 3-year 4 x 26,280 = 105,120; a year at a time
        // 6 x 8,760 + min(6 x 8,760, 10 x 4,608) = 52,560 + 46,080 = 98,640.
        assert_eq!(three_year_instances(&term, 8.0, 4.0, Some(6.0), 10.0), 0);
        // Without a 1-year price: 10 x 13,368 = 133,680 on demand, more.
        assert_eq!(three_year_instances(&term, 8.0, 4.0, None, 10.0), 2);
        // Demand all three years: both instances.
        let steady = vec![16.0; 3 * YEAR];
        assert_eq!(three_year_instances(&steady, 8.0, 4.0, Some(6.0), 10.0), 2);
        // 12 GPUs: the second instance is needed 4 of 8 GPUs' worth, all the
        // time, so it is needed every hour: still two.
        assert_eq!(
            three_year_instances(&vec![12.0; 3 * YEAR], 8.0, 4.0, Some(6.0), 10.0),
            2
        );
    }
}
