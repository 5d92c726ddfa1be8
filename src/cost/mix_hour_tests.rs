//! One hour's purchase, worked out by hand: 8-GPU instances, on demand 1.00
//! a GPU-hour (8.00 an instance), capacity blocks 0.50 (4.00), spot 0.25.

use super::*;

const P: Prices = Prices {
    on_demand: 1.0,
    block: Some(0.5),
    spot: Some(0.25),
};

fn cost(b: &Bought) -> f64 {
    b.on_demand_paid * 1.0 + b.block_paid * 0.5 + b.spot_paid * 0.25
}

#[test]
fn a_burst_that_fits_in_the_on_demand_instance_is_not_bought_again() {
    // 2 steady GPUs and a 4-GPU burst: one on-demand instance holds all 6
    // (8.00 an hour). A block of its own would cost 4.00 more the hour (the
    // 2 steady GPUs still need their on-demand instance): 12.00.
    let d = Demand {
        steady: 2.0,
        burst: 4.0,
        preemptible: 0.0,
    };
    let b = buy(d, 0.0, 8.0, 256.0, P);
    assert_eq!(b.on_demand_paid, 8.0);
    assert_eq!(b.on_demand_served, 6.0);
    assert_eq!(b.block_paid, 0.0);
    assert_eq!(cost(&b), 8.0);
}

#[test]
fn a_burst_bigger_than_the_room_left_buys_blocks_for_the_rest() {
    // 2 steady and a 12-GPU burst (14 GPUs): all on demand, two instances,
    // 16.00. One block (8 of the burst, 4.00) and one on-demand instance for
    // the other 6 (8.00): 12.00. Two blocks (8.00) and one on-demand
    // instance for the 2 steady GPUs (8.00): 16.00. One block wins.
    let d = Demand {
        steady: 2.0,
        burst: 12.0,
        preemptible: 0.0,
    };
    let b = buy(d, 0.0, 8.0, 256.0, P);
    assert_eq!((b.block_paid, b.block_served), (8.0, 8.0));
    assert_eq!((b.on_demand_paid, b.on_demand_served), (8.0, 6.0));
    assert_eq!(cost(&b), 12.0);
    // Without steady demand the burst has no on-demand room to fill: two
    // blocks, 8.00, against 16.00 all on demand or 12.00 with one block.
    let alone = buy(Demand { steady: 0.0, ..d }, 0.0, 8.0, 256.0, P);
    assert_eq!((alone.block_paid, alone.on_demand_paid), (16.0, 0.0));
    assert_eq!(cost(&alone), 8.0);
}

#[test]
fn committed_spare_room_serves_the_burst_then_preemptible_work_for_nothing() {
    // 8 committed GPUs, 5 steady: 3 spare. A 2-GPU burst and 4 GPUs of
    // preemptible work: the burst and 1 preemptible GPU fit in the spare
    // room; the other 3 preemptible GPUs go on one spot instance (2.00)
    // rather than on demand (8.00).
    let d = Demand {
        steady: 5.0,
        burst: 2.0,
        preemptible: 4.0,
    };
    let b = buy(d, 8.0, 8.0, 256.0, P);
    assert_eq!(b.committed_served, 8.0);
    assert_eq!((b.block_paid, b.block_served), (0.0, 0.0));
    assert_eq!((b.spot_paid, b.spot_served), (8.0, 3.0));
    assert_eq!(b.on_demand_paid, 0.0);
    assert_eq!(cost(&b), 2.0);
}

#[test]
fn without_block_or_spot_prices_everything_left_is_on_demand() {
    // 9 steady GPUs, a 4-GPU burst and 2 preemptible, nothing committed:
    // 15 GPUs, two on-demand instances (16.00).
    let d = Demand {
        steady: 9.0,
        burst: 4.0,
        preemptible: 2.0,
    };
    let none = Prices {
        on_demand: 1.0,
        block: None,
        spot: None,
    };
    let b = buy(d, 0.0, 8.0, 256.0, none);
    assert_eq!((b.on_demand_paid, b.on_demand_served), (16.0, 15.0));
    assert_eq!(b.block_paid + b.spot_paid, 0.0);
}
