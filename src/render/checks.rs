//! Rules the clouds and Kueue enforce, checked before anything is rendered so
//! that a violation is a diagnostic on the document it comes from rather
//! than a failed `terraform apply` or a rejected object.
//!
//! Reservation rules run with validation (a pull request sees them);
//! label and Kueue limits run when objects are built.

use crate::diag::{Code, Diagnostic, Span};
use crate::model::*;

/// AWS: capacity blocks last 1-14 days in whole days, or up to 182 days in whole weeks.
pub const BLOCK_MAX_DAYS: i64 = 182;
/// AWS: instances in one capacity block.
pub const BLOCK_MAX_INSTANCES: u32 = 64;
/// AWS: instances across the capacity blocks an account holds at once.
pub const BLOCKS_MAX_INSTANCES: u32 = 256;

/// Kueue's limits (CRD schema, CEL rules and webhook; Kueue v0.19, v1beta2).
pub mod kueue {
    /// Flavors in one resource group, and covered resources.
    pub const MAX_FLAVORS: usize = 64;
    pub const MAX_RESOURCES: usize = 64;
    /// Flavor × resource combinations in one resource group.
    pub const MAX_COMBINATIONS: usize = 512;
    /// Node labels, node taints and tolerations of one ResourceFlavor.
    pub const MAX_FLAVOR_LIST: usize = 8;
    /// Characters of a WorkloadPriorityClass description.
    pub const MAX_DESCRIPTION: usize = 2048;
}

/// Cloud rules for every Reservation.
pub fn reservations(repo: &Repo, diags: &mut Vec<Diagnostic>) {
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

/// A Kubernetes qualified name (label key, resource name): an optional DNS
/// subdomain prefix of at most 253 characters and `/`, then a name of at
/// most 63 alphanumerics, `-`, `_` or `.`, starting and ending alphanumeric.
pub fn label_key(s: &str) -> bool {
    let (prefix, name) = match s.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    if let Some(p) = prefix
        && (p.is_empty()
            || p.len() > 253
            || !p.split('.').all(|l| {
                !l.is_empty()
                    && l.len() <= 63
                    && l.bytes()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                    && !l.starts_with('-')
                    && !l.ends_with('-')
            }))
    {
        return false;
    }
    !name.is_empty() && label_value(name)
}

/// A Kubernetes label value: empty, or at most 63 alphanumerics, `-`, `_`
/// or `.`, starting and ending alphanumeric.
pub fn label_value(s: &str) -> bool {
    let b = s.as_bytes();
    b.is_empty()
        || (b.len() <= 63
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')))
}

/// Node labels and taints of a pool that Kueue would reject on its ResourceFlavor.
pub fn flavor(pool: &NodePool, at: Span, diags: &mut Vec<Diagnostic>) {
    let mut problems = Vec::new();
    if pool.node_labels.len() > kueue::MAX_FLAVOR_LIST {
        problems.push(format!(
            "{} node labels (Kueue allows {})",
            pool.node_labels.len(),
            kueue::MAX_FLAVOR_LIST
        ));
    }
    if pool.taints.len() > kueue::MAX_FLAVOR_LIST {
        problems.push(format!(
            "{} taints, so {} tolerations (Kueue allows {})",
            pool.taints.len(),
            pool.taints.len(),
            kueue::MAX_FLAVOR_LIST
        ));
    }
    for (k, v) in &pool.node_labels {
        if !label_key(k) {
            problems.push(format!("node label key `{k}` is not a valid label key"));
        }
        if !label_value(v) {
            problems.push(format!(
                "node label value `{v}` (of `{k}`) is not a valid label value"
            ));
        }
    }
    for t in &pool.taints {
        if !label_key(&t.key) {
            problems.push(format!("taint key `{}` is not a valid label key", t.key));
        }
        if let Some(v) = &t.value
            && !label_value(v)
        {
            problems.push(format!("taint value `{v}` is not a valid label value"));
        }
    }
    if !problems.is_empty() {
        diags.push(
            Diagnostic::new(
                Code::KueueLimitExceeded,
                format!(
                    "pool `{}` cannot be a Kueue ResourceFlavor: {}",
                    pool.name.value,
                    problems.join("; ")
                ),
            )
            .at(at, "pool")
            .help("label keys are `prefix/name` with a DNS prefix; names and values are at most 63 letters, digits, `-`, `_` or `.`"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_labels_follow_kubernetes_and_gcp_rules() {
        assert!(rfc1035("a100-research"));
        assert!(!rfc1035("A100"));
        assert!(!rfc1035("1a"));
        assert!(!rfc1035("a-"));
        assert!(!rfc1035(&"a".repeat(64)));
        assert!(label_key("nvidia.com/mig-1g.10gb"));
        assert!(label_key("acme.ai/gpu-pool"));
        assert!(label_key("pool"));
        assert!(!label_key("Acme.ai/pool"));
        assert!(!label_key("a/b/c"));
        assert!(!label_key("acme.ai/"));
        assert!(label_value(""));
        assert!(label_value("h100-mig"));
        assert!(!label_value("-x"));
        assert!(!label_value(&"x".repeat(64)));
    }

    #[test]
    fn capacity_block_lengths_snap_to_what_aws_sells() {
        assert_eq!(nearest_block_days(15.0), 14);
        assert_eq!(nearest_block_days(20.0), 21);
        assert_eq!(nearest_block_days(183.0), 182);
    }
}
