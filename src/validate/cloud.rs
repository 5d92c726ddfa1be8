//! Rules the clouds enforce on reservations, checked with validation so that
//! a pull request sees a violation as a diagnostic on the Reservation rather
//! than as a failed `terraform apply`.

use crate::diag::{Code, Diagnostic};
use crate::model::*;
use std::collections::BTreeMap;

/// AWS: capacity blocks last 1-14 days in whole days, or up to 182 days in whole weeks.
pub const BLOCK_MAX_DAYS: i64 = 182;
/// AWS: instances in one capacity block.
pub const BLOCK_MAX_INSTANCES: u32 = 64;
/// AWS: instances across the capacity blocks an account holds at once.
pub const BLOCKS_MAX_INSTANCES: u32 = 256;

/// A GCP commitment lasts exactly its plan: one year (`12-month`, the
/// default) or three (`36-month`). GCP bills the whole plan whatever term the
/// document states, so a shorter term would be judged at a fraction of what
/// is committed.
fn commitment_term(r: &Document<ReservationSpec>, diags: &mut Vec<Diagnostic>) {
    let s = &r.spec;
    let years = match s.commitment_plan.as_ref().map(|p| p.value) {
        Some(crate::model::CommitmentPlan::ThirtySixMonth) => 3,
        _ => 1,
    };
    let secs = s.term.end.value.as_second() - s.term.start.value.as_second();
    // The same date and time `years` calendar years on (UTC): a year from
    // 2027-03-01 is 366 days, to 2028-03-01 (jiff clamps February 29 to
    // the 28th in a common year).
    let expected = s
        .term
        .start
        .value
        .0
        .to_zoned(jiff::tz::TimeZone::UTC)
        .checked_add(jiff::Span::new().years(years))
        .ok()
        .map(|z| z.timestamp());
    if expected == Some(s.term.end.value.0) {
        return;
    }
    let plan = if years == 3 { "36-month" } else { "12-month" };
    diags.push(
        Diagnostic::new(
            Code::CommitmentTermMismatch,
            format!(
                "GCP commitment `{}` is a {plan} plan but its term lasts {}: GCP commits (and bills) the whole {} year{}",
                r.name(),
                duration_text(secs),
                years,
                if years == 1 { "" } else { "s" }
            ),
        )
        .at(s.term.end.span, "term end")
        .help(format!(
            "end the term {years} year{} after it starts, or use another reservation type for a shorter hold",
            if years == 1 { "" } else { "s" }
        )),
    );
}

/// Cloud rules for every Reservation.
pub fn check_reservations(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    let mut blocks: Vec<(&Document<ReservationSpec>, i64, i64)> = Vec::new();
    for r in repo.reservations.values() {
        let s = &r.spec;
        let kind = s.kind.value;
        let needs_zone = matches!(
            kind,
            ReservationType::AwsCapacityReservation
                | ReservationType::GcpReservation
                | ReservationType::GcpCommitment
        );
        if needs_zone && s.zone.is_none() {
            diags.push(
                Diagnostic::new(
                    Code::ReservationZoneRequired,
                    format!(
                        "reservation `{}` ({}) holds capacity in one zone but names none",
                        r.name(),
                        kind.as_str()
                    ),
                )
                .at(s.kind.span, "zonal reservation")
                .help("add `zone:` with the zone of the pool's nodes, e.g. `zone: us-east-1a`"),
            );
        }
        if matches!(
            kind,
            ReservationType::GcpReservation | ReservationType::GcpCommitment
        ) && !rfc1035(r.name())
        {
            diags.push(
                Diagnostic::new(
                    Code::ReservationNameInvalid,
                    format!(
                        "`{}` is not a valid GCP reservation name: a lowercase letter, then lowercase letters, digits or hyphens, at most 63 characters, not ending in a hyphen",
                        r.name()
                    ),
                )
                .at(r.name_span(), "GCP name")
                .help("rename the Reservation"),
            );
        }
        if let Some(plan) = s
            .commitment_plan
            .as_ref()
            .filter(|_| kind != ReservationType::GcpCommitment)
        {
            diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!(
                        "Reservation `{}` of type `{}` names a commitment plan: only a `gcp-commitment` is bought on one",
                        r.name(),
                        kind.as_str()
                    ),
                )
                .at(plan.span, "a plan nothing reads")
                .help("remove `commitmentPlan`, or make the reservation a `gcp-commitment`"),
            );
        }
        if kind == ReservationType::GcpCommitment {
            commitment_term(r, diags);
            let model = repo
                .pool(&s.covers.cluster.value, &s.covers.pool.value)
                .and_then(|p| crate::gpu::model(&p.gpu_model.value))
                .map(|m| m.id);
            if let Err(why) = crate::gpu::gcp::commitment(&s.instance_type.value, model) {
                diags.push(
                    Diagnostic::new(
                        Code::GcpCommitmentUnsupported,
                        format!("GCP commitment `{}`: {why}", r.name()),
                    )
                    .at(s.instance_type.span, "machine type committed")
                    .help("commit a GPU machine type of the pool's model (a2, a3, a4, a4x, g2, g4 or N1 with GPUs; see docs/render.md), or use a `gcp-reservation` without a commitment"),
                );
            }
        }
        if kind == ReservationType::AwsCapacityBlock {
            let start = s.term.start.value.as_second();
            let end = s.term.end.value.as_second();
            blocks.push((r, start, end));
            let secs = end - start;
            let days = secs / 86_400;
            let whole_days = secs % 86_400 == 0;
            let ok = whole_days
                && days >= 1
                && (days <= 14 || (days % 7 == 0 && days <= BLOCK_MAX_DAYS));
            if !ok {
                let nearest = nearest_block_days(secs as f64 / 86_400.0);
                diags.push(
                    Diagnostic::new(
                        Code::CapacityBlockDuration,
                        format!(
                            "capacity block `{}` lasts {} but AWS sells blocks of 1-14 days, or 7-182 days in whole weeks",
                            r.name(),
                            duration_text(secs)
                        ),
                    )
                    .at(s.term.end.span, "term end")
                    .help(format!("the nearest length AWS sells is {nearest} days")),
                );
            }
            if s.count.value.0 > BLOCK_MAX_INSTANCES {
                diags.push(
                    Diagnostic::new(
                        Code::CapacityBlockSize,
                        format!(
                            "capacity block `{}` has {} instances; a block holds at most {BLOCK_MAX_INSTANCES}",
                            r.name(),
                            s.count.value.0
                        ),
                    )
                    .at(s.count.span, "instances")
                    .help("split it into blocks of at most 64 instances"),
                );
            }
            let end_time = s.term.end.value.as_second().rem_euclid(86_400);
            if end_time != 11 * 3600 + 30 * 60 {
                diags.push(
                    Diagnostic::new(
                        Code::CapacityBlockEndTime,
                        format!(
                            "capacity block `{}` ends at {:02}:{:02} UTC; every AWS capacity block ends at 11:30 UTC",
                            r.name(),
                            end_time / 3600,
                            end_time % 3600 / 60
                        ),
                    )
                    .at(s.term.end.span, "term end")
                    .help("end the term at 11:30 UTC, e.g. `end: \"2027-04-01T11:30:00Z\"`"),
                );
            }
        }
    }
    // At most 256 instances across the blocks held at any moment: check at
    // each block's start, where the total can first rise.
    let mut reported = std::collections::BTreeSet::new();
    for (r, start, _) in &blocks {
        if reported.contains(start) {
            continue;
        }
        let held: u32 = blocks
            .iter()
            .filter(|(_, s, e)| s <= start && start < e)
            .map(|(o, _, _)| o.spec.count.value.0)
            .sum();
        if held > BLOCKS_MAX_INSTANCES {
            reported.insert(*start);
            diags.push(
                Diagnostic::new(
                    Code::CapacityBlockSize,
                    format!(
                        "when capacity block `{}` starts, capacity blocks hold {held} instances; AWS allows {BLOCKS_MAX_INSTANCES} across blocks",
                        r.name()
                    ),
                )
                .at(r.spec.term.start.span, "term start")
                .help("shorten or move overlapping blocks, or have AWS raise the limit"),
            );
        }
    }
    reserved_nodes_cover_reservations(repo, diags);
}

/// The reservations covering a pool, at any moment, hold no more instances
/// than the pool declares reserved (`purchase.reserved`): capops prices a
/// pool's reserved nodes by its reservations, so instances beyond them
/// would be paid for and counted nowhere. Checked at each term's start,
/// where the total can first rise.
/// A pool's price per GPU-hour is its instance's price over the catalog's
/// `gpusPerInstance`; the pool counts `gpusPerNode` GPUs a node. Where the
/// two differ every cost of the pool is off by their ratio.
pub fn pools_match_their_prices(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    for cluster in repo.clusters.values() {
        let c = &cluster.spec;
        for pool in &c.node_pools {
            let Some(itype) = &pool.instance_type else {
                continue;
            };
            let region = c.region.as_ref().map(|r| r.value.as_str());
            let entry = crate::model::catalog::entry(repo, c.provider.value, region, &itype.value);
            let Some(e) = entry else { continue };
            if region.is_none() {
                region_ambiguous(repo, cluster, pool, e, diags);
            }
            let spot = crate::model::purchase_nodes(pool).2;
            if spot > 0 && e.spot.is_none() {
                diags.push(
                    Diagnostic::new(
                        Code::SpotPriceMissing,
                        format!(
                            "pool `{}` of cluster `{}` has {spot} spot node{}, but the price of {} has no `spot`: they are costed at its on-demand price, the most they can cost",
                            pool.name.value,
                            cluster.name(),
                            if spot == 1 { "" } else { "s" },
                            itype.value,
                        ),
                    )
                    .at(pool.name.span, "spot nodes")
                    .related(e.instance_type.span, "price without `spot`")
                    .help("add the spot price per instance-hour to the price entry (`spot: 0.22`)"),
                );
            }
            let (per_instance, per_node) =
                (e.gpus_per_instance.value.0, pool.gpus_per_node.value.0);
            if per_instance == per_node {
                continue;
            }
            diags.push(
                Diagnostic::new(
                    Code::PriceGpusMismatch,
                    format!(
                        "pool `{}` of cluster `{}` has {per_node} GPUs a node, but {} is priced as an instance of {per_instance}: its GPU-hours would cost {} what they do",
                        pool.name.value,
                        cluster.name(),
                        itype.value,
                        if per_instance < per_node { "more than" } else { "less than" },
                    ),
                )
                .at(pool.gpus_per_node.span, "GPUs per node")
                .related(e.gpus_per_instance.span, "GPUs per instance in the price")
                .help(format!(
                    "make both the GPUs a {} instance has",
                    itype.value
                )),
            );
        }
    }
}

/// A pool of a cluster without a region is priced by the first catalog
/// entry of its provider and instance type in any region. With entries in
/// several regions which one that is depends on catalog and list order, so
/// reordering a catalog reprices the pool: say so, and ask for the region.
fn region_ambiguous(
    repo: &Repo,
    cluster: &Document<ClusterSpec>,
    pool: &NodePool,
    first: &PriceEntry,
    diags: &mut Vec<Diagnostic>,
) {
    let others: Vec<&PriceEntry> = repo
        .catalogs
        .values()
        .flat_map(|k| &k.spec.prices)
        .filter(|e| {
            e.provider.value == first.provider.value
                && e.instance_type.value == first.instance_type.value
                && e.region.value != first.region.value
        })
        .collect();
    let Some(second) = others.first() else {
        return;
    };
    let mut regions: Vec<&str> = others.iter().map(|e| e.region.value.as_str()).collect();
    regions.sort_unstable();
    regions.dedup();
    diags.push(
        Diagnostic::new(
            Code::PriceRegionAmbiguous,
            format!(
                "cluster `{}` names no region, and {} is priced in {} region{} besides `{}`: pool `{}` takes the first entry in catalog order (`{}`), so reordering the catalog would reprice it",
                cluster.name(),
                first.instance_type.value,
                regions.len(),
                if regions.len() == 1 { "" } else { "s" },
                first.region.value,
                pool.name.value,
                first.region.value,
            ),
        )
        .at(pool.name.span, "priced by the first entry")
        .related(first.region.span, "the entry it takes")
        .related(second.region.span, "another region's entry")
        .help(format!(
            "give cluster `{}` the `region` its prices are for (`region: {}`)",
            cluster.name(),
            first.region.value
        )),
    );
}

fn reserved_nodes_cover_reservations(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    let mut by_pool: BTreeMap<(&str, &str), Vec<&Document<ReservationSpec>>> = BTreeMap::new();
    for r in repo.reservations.values() {
        by_pool
            .entry((
                r.spec.covers.cluster.value.as_str(),
                r.spec.covers.pool.value.as_str(),
            ))
            .or_default()
            .push(r);
    }
    for ((cluster, pool_name), list) in by_pool {
        let Some(pool) = repo.pool(cluster, pool_name) else {
            continue;
        };
        let reserved = pool.purchase.as_ref().map_or(0, |p| p.value.reserved.0);
        for r in &list {
            let at = r.spec.term.start.value;
            let held: Vec<&&Document<ReservationSpec>> = list
                .iter()
                .filter(|o| o.spec.term.start.value <= at && at < o.spec.term.end.value)
                .collect();
            let count: u32 = held.iter().map(|o| o.spec.count.value.0).sum();
            if count <= reserved {
                continue;
            }
            let names: Vec<String> = held.iter().map(|o| format!("`{}`", o.name())).collect();
            diags.push(
                Diagnostic::new(
                    Code::ReservationsExceedReservedNodes,
                    format!(
                        "from {at} the reservations {} hold {count} instances of pool `{pool_name}`, which declares {reserved} reserved nodes: the other {} are paid for with no node running on them (the report counts them in the pool's cost, stranded)",
                        names.join(", "),
                        count - reserved
                    ),
                )
                .at(r.spec.count.span, "instances reserved")
                .help("raise the pool's `purchase.reserved` (and its nodes) to what is reserved, or reserve fewer instances"),
            );
            break;
        }
    }
}

fn nearest_block_days(days: f64) -> i64 {
    let mut allowed: Vec<i64> = (1..=14).collect();
    allowed.extend((3..=26).map(|w| w * 7));
    *allowed
        .iter()
        .min_by(|a, b| {
            (**a as f64 - days)
                .abs()
                .total_cmp(&(**b as f64 - days).abs())
        })
        .expect("not empty")
}

fn duration_text(secs: i64) -> String {
    let days = secs / 86_400;
    let hours = secs % 86_400 / 3600;
    let minutes = secs % 3600 / 60;
    match (hours, minutes) {
        (0, 0) => format!("{days} days"),
        (h, 0) => format!("{days} days {h} hours"),
        (h, m) => format!("{days} days {h} hours {m} minutes"),
    }
}

/// RFC 1035 label: `[a-z]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
pub fn rfc1035(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_lowercase()
        && b[b.len() - 1] != b'-'
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gcp_names_follow_rfc1035() {
        assert!(rfc1035("a100-research"));
        assert!(!rfc1035("A100"));
        assert!(!rfc1035("1a"));
        assert!(!rfc1035("a-"));
        assert!(!rfc1035(&"a".repeat(64)));
    }

    #[test]
    fn capacity_block_lengths_snap_to_what_aws_sells() {
        assert_eq!(nearest_block_days(15.0), 14);
        assert_eq!(nearest_block_days(20.0), 21);
        assert_eq!(nearest_block_days(183.0), 182);
    }
}
