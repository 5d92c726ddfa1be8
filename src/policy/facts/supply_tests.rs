//! A supply's worth: units fill the most valuable pools first.

use super::*;

#[test]
fn units_fill_the_most_valuable_pools_first_whatever_their_order() {
    // 8 GPUs time-sliced 8 ways (64 units of 1/8), then 560 whole GPUs.
    let a = Supply(vec![(560.0, 1.0), (64.0, 0.125)]);
    assert_eq!(a.units(), 624.0);
    assert_eq!(a.worth(32.0), 32.0);
    assert_eq!(a.worth(560.0), 560.0);
    // Past the whole GPUs, the slices: 64 units are 8 GPUs.
    assert_eq!(a.worth(1632.0), 568.0);
    assert_eq!(a.worth(600.0), 565.0);
    assert_eq!(a.worth(-3.0), 0.0);
    assert_eq!(Supply::default().worth(10.0), 0.0);
    // A change is judged at the most a unit is worth, uncapped.
    assert_eq!(a.max_worth(), 1.0);
    assert_eq!(a.bound(1600.0), 1600.0);
    assert_eq!(Supply(vec![(64.0, 0.125)]).bound(80.0), 10.0);
    assert_eq!(Supply::default().bound(3.0), 3.0);
    // Merged with a head of fewer, dearer units (time-slicing taken off):
    // the more units, at the dearer worth.
    let sliced = Supply(vec![(6400.0, 0.125)]);
    let whole = Supply(vec![(800.0, 1.0)]);
    let m = Supply::merged(&sliced, &whole);
    assert_eq!((m.units(), m.max_worth()), (6400.0, 1.0));
}
