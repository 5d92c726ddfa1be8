//! The facts of a Reservation: its commitment, cost, the forecast use of it,
//! the pool it covers and what it was before.

use super::Env;
use super::model::*;
use super::values::{self, round};
use crate::cost::prices::{self, float};
use crate::cost::reservation::ReservationOutlook;
use crate::model::*;
use crate::policy::change::Change;
use schemars::JsonSchema;
use serde::Serialize;

/// What a reservation's conditions read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReservationSubject {
    /// The evaluation time (`--at`, default now), RFC 3339.
    pub now: String,
    pub config: ConfigFacts,
    /// What the change does to the rendered objects and files (zero without a base).
    pub effects: EffectFacts,
    pub change: ReservationChange,
    pub reservation: ReservationFacts,
    pub cluster: ClusterFacts,
    pub pool: PoolFacts,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ReservationChange {
    #[serde(flatten)]
    pub base: ChangeFacts,
    /// GPUs now minus GPUs before (requests, reservations) or quota GPUs now minus before (teams); the whole size when added.
    pub delta_gpus: f64,
    /// What the change commits from `now` on, at the catalog's price at least: the cost of
    /// the term's hours from `now` (plus the upfront fee when it has not started) now, minus
    /// the same before (nothing before when that was locked: prepaid and started, or when
    /// the change turns it into other capacity: another provider, region, zone, instance type
    /// or pool, which is a release and a purchase). Hours
    /// already spent count neither way, so moving a term later is judged as the new hours it
    /// buys; a change that leaves what it bills alone (`change.commitment_changed` false)
    /// commits nothing. Judged without a base, what it commits from `now` on. A GCP commitment
    /// is billed its whole plan from when it is bought, so it commits its whole term whatever
    /// start it states.
    pub delta_total_cost: f64,
    /// What all the change's reservations commit together (their `delta_total_cost` where it
    /// is above 0, summed; without a base, this reservation's own). Tiers read this, so a
    /// commitment split into many reservations is judged as the whole, and one released or
    /// cut does not pay for another bought.
    pub pr_delta_total_cost: f64,
    /// What the reservations added or grown in the 30 days before the base revision commit
    /// (from the start of those 30 days on, each at least 0), from its git history (0
    /// without history): a commitment split over several pull requests adds up.
    pub recent_commitment_cost: f64,
    /// Whether the change alters what the reservation bills: provider, type, region, zone,
    /// instance type, count, term, prices, upfront fee or commitment plan (true when added or removed).
    pub commitment_changed: bool,
    /// Whether the change leaves the reservation unable to serve the pool it covers (another
    /// provider, region, instance type or zone than the pool's nodes, or a pool that is not
    /// there) where its base version could serve its own: paid for capacity nobody can use.
    pub leaves_pool_unserved: bool,
    pub previous: PreviousReservation,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PreviousReservation {
    /// GPU-equivalents before the change (0 when added).
    pub gpus: f64,
    /// The term's whole cost before the change (0 when added).
    pub total_cost: f64,
    /// Whether the reservation was locked before the change (prepaid or not cancellable,
    /// bought by `now`: a capacity block from eight weeks before its start): removing
    /// or shrinking it does not stop the bill.
    pub locked: bool,
    /// Whether the reservation was of a kind paid whatever happens once bought before the
    /// change (false when added).
    pub prepaid: bool,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ReservationFacts {
    /// The reservation's name.
    pub name: String,
    /// Provider.
    pub provider: String,
    /// Reservation type (`aws-capacity-block`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// Region.
    pub region: String,
    /// Instance type.
    pub instance_type: String,
    /// Instances reserved.
    pub count: u32,
    /// GPUs reserved (instances times the covered pool's GPUs per node).
    pub gpus: f64,
    /// Length of the term in hours.
    pub hours: i64,
    /// Length of the term in days.
    pub days: f64,
    /// Days from the first start to the last end of this term and the terms of the other
    /// reservations of the same provider, region and instance type that the change adds or
    /// moves, where they overlap, touch or are less than 30 days apart (one long commitment
    /// split into back-to-back reservations is one run). The base's terms of that capacity
    /// from `now` on join the run too (a renewal in a later pull request continues the
    /// commitment), except one that covers this term whole by itself. `days` when no other term
    /// joins, or without a base. Tier term limits read the longer of the two.
    pub run_days: f64,
    /// Term start, RFC 3339.
    pub start: String,
    /// Term end, RFC 3339.
    pub end: String,
    /// Price per instance-hour (the reservation's own, else the catalog's; 0 when unknown).
    pub hourly_price: f64,
    /// The catalog's price per instance-hour for its type and term (0 when the catalog has none).
    pub catalog_hourly_price: f64,
    /// Whether the reservation states an hourly price below the catalog's. Its commitment is
    /// judged at the catalog's price either way (`change.delta_total_cost`).
    pub price_below_catalog: bool,
    /// How far below the catalog's price the stated hourly price is, as a share of the
    /// catalog's (`0.25`: a quarter cheaper; 0 when not below or either is unknown). A
    /// commitment whose term's price the catalog lacks is measured against the lowest
    /// committed price the catalog has for the instance type, not its on-demand price. The pool's
    /// GPU-hours are priced at the stated price once it merges, so every later request there
    /// is judged cheaper by as much.
    pub price_cut_vs_catalog: f64,
    /// Cost of the whole term: instances times hours times the hourly price, plus any upfront fee.
    pub total_cost: f64,
    /// `reservation.total_cost` over the reserved GPU-hours.
    pub gpu_hour_price: f64,
    /// Whether the reservation can serve the pool it covers: the pool is there and its provider,
    /// region, instance type and zone (when both name one) are the reservation's, as the base has
    /// the pool or as the change leaves it (a pool and its reservation moved together; the pool's
    /// edit is judged as a cluster change). Priced or not.
    pub serves_pool: bool,
    /// Whether the covered pool has a demand outlook: usage history, or else approved requests (the facts below are 0 without).
    pub has_forecast: bool,
    /// What the demand rests on: `history` (usage history, forecast, plus what approved requests change), `requests` (no usage history: the approved requests alone) or `none`.
    pub forecast_basis: String,
    /// Days of usage history behind the forecast (usage history of the base revision when checking a change).
    pub history_days: f64,
    /// Whether the term ends within `config.history_multiple` times the history's length after the last measurement (false without history).
    pub term_supported: bool,
    /// The last day the history supports, RFC 3339 (empty without history).
    pub supported_until: String,
    /// Whether a `businessCase` with visible text is given (white space and invisible characters are blank).
    pub has_business_case: bool,
    /// Whether the reservation is prepaid or cannot be cancelled (capacity block, GCP commitment, upfront fee) and bought by `now` (a capacity block from eight weeks before its start, others from their start).
    pub locked: bool,
    /// Whether the reservation is paid whatever happens once bought (capacity block, GCP
    /// commitment, upfront fee), bought yet or not.
    pub prepaid: bool,
    /// Share of the reserved GPU-hours the P50 demand uses (measured hours as measured).
    pub expected_utilization: f64,
    /// The same at P10 demand (the low case).
    pub utilization_p10: f64,
    /// Expected stranded spend: idle reserved GPU-hours at P50 demand times `reservation.gpu_hour_price`.
    pub stranded_cost: f64,
    /// Stranded spend at P10 demand (the risk).
    pub stranded_cost_p10: f64,
    /// `reservation.stranded_cost` over `reservation.total_cost`, rounded up to four places
    /// (rules compare it with `>`: 0.200025 is above 0.2).
    pub stranded_share: f64,
    /// Share of the reserved GPU-hours from `now` (or the term's start, if later) to its end that P50
    /// demand leaves unallocated: what is still to be paid for. Hours already past, measured, do not
    /// dilute it (a term dated back over busy weeks). `reservation.stranded_share` once the term has ended.
    pub stranded_share_ahead: f64,
    /// Expected idle spend: reserved GPU-hours allocated to work but not busy, at P50 demand and the pool's measured busy share (used over allocated GPU-hours in the 30 days before `now`), priced.
    pub idle_cost: f64,
    /// `reservation.idle_cost` over `reservation.total_cost`, rounded up to four places.
    pub idle_share: f64,
    /// The pool's measured busy share (0 without usage).
    pub busy_share: f64,
    /// The most instances whose expected stranded share stays within `config.thresholds.stranded_spend_share`, over the whole term and over the hours from `now` to its end alike.
    pub suggested_count: u32,
    /// Hours of the term where P90 demand exceeds all the pool's GPUs (reserved, on-demand and spot).
    pub shortfall_hours: u32,
    /// The most GPUs short at such an hour.
    pub shortfall_gpus: f64,
}

/// Builds the facts of a Reservation.
pub fn reservation(
    env: &Env<'_>,
    res: &Document<ReservationSpec>,
    change: &Change,
) -> ReservationSubject {
    let s = &res.spec;
    let cluster = env.world.clusters.get(&s.covers.cluster.value);
    let pool = cluster.and_then(|c| {
        c.spec
            .node_pools
            .iter()
            .find(|p| p.name.value.as_str() == s.covers.pool.value)
    });
    let gpus = prices::reservation_gpus(env.world, s) as f64;
    let hours = s.term.hours();
    let cost = prices::reservation(env.world, s);
    let catalog = prices::catalog_term_hourly(env.world, s);
    let outlook = env.analysis.reservation(res.name());
    let o = |g: fn(&ReservationOutlook) -> f64| outlook.map(g).unwrap_or(0.0);
    let reservation = ReservationFacts {
        name: res.name().to_string(),
        provider: s.provider.value.as_str().to_string(),
        kind: s.kind.value.as_str().to_string(),
        region: s.region.value.clone(),
        instance_type: s.instance_type.value.clone(),
        count: s.count.value.0,
        gpus,
        hours,
        days: round(hours as f64 / 24.0),
        run_days: round(
            (super::runs::reservation(env, res) as f64 / 86400.0).max(hours as f64 / 24.0),
        ),
        start: s.term.start.value.to_string(),
        end: s.term.end.value.to_string(),
        hourly_price: round(cost.as_ref().map(|c| float(c.hourly)).unwrap_or(0.0)),
        catalog_hourly_price: round(catalog.map(|c| float(c.0)).unwrap_or(0.0)),
        price_below_catalog: match (&s.hourly_price, catalog) {
            (Some(p), Some((c, _))) => p.value.0 < c,
            _ => false,
        },
        price_cut_vs_catalog: match (&s.hourly_price, prices::cut_reference(env.world, s)) {
            (Some(p), Some(c)) if p.value.0 < c && c > rust_decimal::Decimal::ZERO => {
                round(float((c - p.value.0) / c))
            }
            _ => 0.0,
        },
        total_cost: cost
            .as_ref()
            .map(|c| float(c.total.round_dp(2)))
            .unwrap_or(0.0),
        gpu_hour_price: round(cost.as_ref().map(|c| float(c.per_gpu_hour)).unwrap_or(0.0)),
        serves_pool: cluster
            .zip(pool)
            .is_some_and(|(c, p)| s.mismatches(&c.spec, p).is_empty())
            || env.aggregates.serving_in_head.contains(res.name()),
        has_forecast: outlook.is_some(),
        forecast_basis: outlook
            .map(|r| r.basis.as_str())
            .unwrap_or("none")
            .to_string(),
        history_days: round(o(|r| r.history_hours as f64 / 24.0)),
        term_supported: outlook.is_some_and(|r| r.term_supported),
        supported_until: outlook
            .filter(|r| r.basis == crate::forecast::demand::Basis::History)
            .and_then(|r| Timestamp::from_second(r.supported_until * 3600))
            .map(|t| t.to_string())
            .unwrap_or_default(),
        has_business_case: s
            .business_case
            .as_ref()
            .is_some_and(|b| crate::model::types::has_visible_text(&b.value)),
        locked: crate::cost::reservation::locked(s, env.at.hour_index()),
        prepaid: crate::cost::reservation::prepaid(s),
        expected_utilization: round(o(|r| r.utilization_p50)),
        utilization_p10: round(o(|r| r.utilization_p10)),
        stranded_cost: o(|r| float(r.stranded_p50)),
        stranded_cost_p10: o(|r| float(r.stranded_p10)),
        stranded_share: values::round_up(o(|r| r.stranded_share)),
        stranded_share_ahead: values::round_up(o(|r| r.stranded_share_ahead)),
        idle_cost: o(|r| float(r.idle_p50)),
        idle_share: values::round_up(o(|r| r.idle_share)),
        busy_share: round(outlook.and_then(|r| r.busy).unwrap_or(0.0)),
        suggested_count: outlook
            .map(|r| r.suggested_count)
            .unwrap_or(s.count.value.0),
        shortfall_hours: outlook.map(|r| r.shortfall_hours).unwrap_or(0),
        shortfall_gpus: round(o(|r| r.shortfall_gpus)),
    };
    let (start, end) = crate::cost::reservation::term_hours(&s.term);
    let demand = super::demand_facts(
        env,
        &s.covers.cluster.value,
        &s.covers.pool.value,
        (start, end),
    );
    let cluster_facts = match cluster {
        Some(c) => super::cluster_facts(c),
        None => ClusterFacts {
            name: s.covers.cluster.value.clone(),
            ..ClusterFacts::default()
        },
    };
    let pool_facts = match (pool, cluster) {
        (Some(p), Some(c)) => super::pool_facts(p, &c.spec, demand),
        _ => PoolFacts {
            demand,
            ..PoolFacts::missing(&s.covers.pool.value)
        },
    };
    let removed = change.kind == crate::policy::change::ChangeKind::Removed;
    let previous = change.previous::<ReservationSpec>();
    let prev = previous
        .map(|p| prices::reservation_gpus(env.world, &p.spec) as f64)
        .unwrap_or(0.0);
    // Commitments are judged at the catalog's price at least (a price
    // written into the reservation cannot shrink them).
    let judged_total = |spec: &ReservationSpec| {
        prices::reservation_judged(env.world, spec)
            .map(|c| float(c.total.round_dp(2)))
            .unwrap_or(0.0)
    };
    let prev_total = previous.map(|p| judged_total(&p.spec)).unwrap_or(0.0);
    let commitment_changed = match (change.kind, previous) {
        (crate::policy::change::ChangeKind::Unchanged, _) => false,
        (crate::policy::change::ChangeKind::Modified, Some(p)) => {
            !crate::cost::reservation::same_commitment(&p.spec, s)
        }
        _ => true,
    };
    let serves = |spec: &ReservationSpec| {
        env.world
            .clusters
            .get(&spec.covers.cluster.value)
            .and_then(|c| {
                let p = c
                    .spec
                    .node_pools
                    .iter()
                    .find(|p| p.name.value.as_str() == spec.covers.pool.value)?;
                Some(spec.mismatches(&c.spec, p).is_empty())
            })
            .unwrap_or(false)
    };
    let leaves_pool_unserved = change.kind == crate::policy::change::ChangeKind::Modified
        && previous.is_some_and(|p| serves(&p.spec))
        && !serves(s);
    let prev_locked = previous
        .filter(|_| change.kind != crate::policy::change::ChangeKind::Unchanged)
        .is_some_and(|p| crate::cost::reservation::locked(&p.spec, env.at.hour_index()));
    let now_gpus = if removed { 0.0 } else { gpus };
    // Judged as it stands (no base), a reservation is asked for whole.
    let unchanged = change.kind == crate::policy::change::ChangeKind::Unchanged;
    let (prev, prev_total) = if unchanged {
        (0.0, 0.0)
    } else {
        (prev, prev_total)
    };
    // What the change commits from `now` on (hours already spent are spent).
    let delta_total = crate::cost::reservation::reservation_delta(
        env.world,
        (!removed).then_some(s),
        previous.filter(|_| !unchanged).map(|p| &p.spec),
        env.at,
    );
    ReservationSubject {
        now: env.at.to_string(),
        config: super::config_facts(env.config, env.world),
        effects: env.effects.clone(),
        change: ReservationChange {
            base: super::change_facts(change),
            delta_gpus: round(now_gpus - prev),
            delta_total_cost: round(delta_total),
            pr_delta_total_cost: if unchanged {
                round(delta_total)
            } else {
                round(env.aggregates.reservations_total_cost)
            },
            recent_commitment_cost: round(env.aggregates.platform_growth.recent_commitment_cost),
            previous: PreviousReservation {
                gpus: prev,
                total_cost: prev_total,
                locked: prev_locked,
                prepaid: previous
                    .filter(|_| change.kind != crate::policy::change::ChangeKind::Unchanged)
                    .is_some_and(|p| crate::cost::reservation::prepaid(&p.spec)),
            },
            commitment_changed,
            leaves_pool_unserved,
        },
        reservation,
        cluster: cluster_facts,
        pool: pool_facts,
    }
}
