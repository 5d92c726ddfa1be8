//! The commitment mix of a MIG pool whose layout leaves slices unused: the
//! demand is floored at the whole GPUs its requests' units take.

use super::tests_finops::d;
use super::*;
use crate::forecast::demand::Outlook;
use rust_decimal::Decimal;

#[test]
fn a_mig_layout_that_leaves_slices_unused_floors_the_demand_at_the_gpus_its_units_take() {
    // 18 units of a profile two to a GPU (2/7 of each GPU's compute) are
    // 18/7 = 2.6 GPU-equivalents of use, but take 9 whole GPUs: two 8-GPU
    // nodes. The usage says 2.6; the mix buys what the units need.
    let price = prices::GpuHour {
        on_demand: d(10),
        spot: None,
        reserved1y: None,
        reserved3y: None,
        capacity_block: None,
        source: "test".into(),
    };
    let hours = 90 * 24;
    let demand = Outlook::requests_only(0, hours, |_| 18.0 / 7.0);
    let none = crate::capacity::Timeline::default();
    let units = crate::capacity::Timeline::build([(
        crate::capacity::Hours {
            start: 0,
            end: hours,
        },
        18.0,
    )]);
    let floor = [(units, 2.0)];
    assert_eq!(mix::layout_floor(&floor, 5), 9.0);
    assert_eq!(
        mix::layout_floor(&floor, hours),
        0.0,
        "after the request ends"
    );
    let inputs = |floor| mix::Inputs {
        demand: &demand,
        preemptible: None,
        steady: None,
        from: 0,
        hours: hours as usize,
        gpus_per_node: 8,
        price: &price,
        spot_allowance: 0.0,
        release: mix::Release::default(),
        ending: &[],
        locked: &none,
        locked_monthly: Decimal::ZERO,
        bursts: &none,
        three_years_supported: false,
        floor,
    };
    let without = mix::recommend(&inputs(&[])).unwrap();
    let with = mix::recommend(&inputs(&floor)).unwrap();
    // All on demand either way, in whole 8-GPU instances: one, then two.
    assert_eq!(without.on_demand_gpus, 8.0, "{without:?}");
    assert_eq!(with.on_demand_gpus, 16.0, "{with:?}");
    assert!((with.mean_demand - 9.0).abs() < 1e-9, "{with:?}");
}
