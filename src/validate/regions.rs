//! Cloud regions and zones: their form (they name Terraform folders), that
//! a region is written the way its provider writes regions, and that a
//! zone is one of its region's.
//!
//! A region that is not one of its provider's shapes (`us-east2` on AWS) is
//! blamed itself, once, with the region its zones point at where they agree
//! on one; its zones are then not judged against it (each would otherwise be
//! an error of its own, blaming the zones for the region's typo). So is a
//! region of the right form that none of a cluster's zones is in, where two
//! or more of them agree on another.

use super::names::{bad, is_region};
use crate::diag::{Code, Diagnostic};
use crate::model::*;

const REGION_FORM: &str = "a region or zone as the cloud writes it: lowercase letters, digits and `-` (`us-east-1`, `us-central1-a`)";

/// Regions and zones of every cluster and reservation.
pub fn check(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    for c in repo.clusters.values() {
        let zones: Vec<&Spanned<String>> = c
            .spec
            .node_pools
            .iter()
            .filter_map(|p| p.zone.as_ref())
            .collect();
        let region = c
            .spec
            .region
            .as_ref()
            .filter(|r| region_ok(c.spec.provider.value, r, &zones, diags));
        for zone in zones {
            check_zone(c.spec.provider.value, region, zone, "cluster", diags);
        }
    }
    for r in repo.reservations.values() {
        // A type of another provider's is its own error (`check_reservations`):
        // which of the two is wrong is not known, so neither judges the
        // region's shape or the zone.
        if r.spec.kind.value.provider() != r.spec.provider.value {
            if !is_region(&r.spec.region.value) {
                diags.push(bad(&r.spec.region, "region", REGION_FORM));
            }
            continue;
        }
        let zone = r.spec.zone.as_ref();
        let zones: Vec<&Spanned<String>> = zone.into_iter().collect();
        let region = Some(&r.spec.region)
            .filter(|region| region_ok(r.spec.provider.value, region, &zones, diags));
        if let Some(zone) = zone {
            check_zone(r.spec.provider.value, region, zone, "reservation", diags);
        }
    }
}

/// Whether `region` can judge its zones: of the right form, and written as
/// its provider writes regions. Otherwise its diagnostic is pushed.
fn region_ok(
    provider: Provider,
    region: &Spanned<String>,
    zones: &[&Spanned<String>],
    diags: &mut Vec<Diagnostic>,
) -> bool {
    if !is_region(&region.value) {
        diags.push(bad(region, "region", REGION_FORM));
        return false;
    }
    let Some(shape) = region_shape(provider, &region.value) else {
        return region_of_its_zones(provider, region, zones, diags);
    };
    // The region the zones name, where they all name the same one.
    let implied: Vec<String> = zones
        .iter()
        .filter_map(|z| zone_region(provider, &z.value))
        .filter(|r| region_shape(provider, r).is_none())
        .collect();
    let hint = match implied.first() {
        Some(first) if implied.len() == zones.len() && implied.iter().all(|r| r == first) => {
            let mut names: Vec<&str> = zones.iter().map(|z| z.value.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            let more = if names.len() > 3 { ", ..." } else { "" };
            names.truncate(3);
            format!(
                "; its zones (`{}`{more}) are in `{first}`",
                names.join("`, `")
            )
        }
        _ => String::new(),
    };
    diags.push(
        Diagnostic::new(
            Code::NameInvalid,
            format!(
                "`{}` is not how {} writes a region{hint}",
                region.value,
                provider_name(provider)
            ),
        )
        .at(region.span, "not a region name")
        .help(format!("write the region as {shape}")),
    );
    false
}

/// A region of its provider's form that none of its zones is in, where two
/// or more zones agree on another region (`us-central2` with
/// `us-central1-a` and `us-central1-b`): the region is what is wrong, said
/// once at the region, not once at every zone.
fn region_of_its_zones(
    provider: Provider,
    region: &Spanned<String>,
    zones: &[&Spanned<String>],
    diags: &mut Vec<Diagnostic>,
) -> bool {
    let implied: Vec<String> = zones
        .iter()
        .filter_map(|z| zone_region(provider, &z.value))
        .collect();
    let agree = zones.len() >= 2
        && implied.len() == zones.len()
        && implied
            .iter()
            .all(|r| *r == implied[0] && *r != region.value)
        && zones
            .iter()
            .all(|z| zone_outside(provider, &region.value, &z.value).is_some());
    if !agree {
        return true;
    }
    let mut names: Vec<&str> = zones.iter().map(|z| z.value.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let more = if names.len() > 3 { ", ..." } else { "" };
    names.truncate(3);
    diags.push(
        Diagnostic::new(
            Code::NameInvalid,
            format!(
                "`{}` is not the region of its zones: `{}`{more} are in `{}`",
                region.value,
                names.join("`, `"),
                implied[0]
            ),
        )
        .at(region.span, "none of its zones is here")
        .help(format!(
            "write the region its zones are in (`{}`), or correct the zones",
            implied[0]
        )),
    );
    false
}

fn provider_name(p: Provider) -> &'static str {
    match p {
        Provider::Aws => "AWS",
        Provider::Gcp => "Google Cloud",
        Provider::Azure => "Azure",
        Provider::Onprem => "on premises",
    }
}

/// Why `region` is not of its provider's shape: AWS words and a number
/// joined by `-` (`us-east-1`, `us-gov-west-1`, `eusc-de-east-1`), Google
/// Cloud words ending in a number (`us-central1`, `northamerica-northeast2`,
/// `u-france-east1`), Azure one word of letters and digits (`eastus`,
/// `westeurope`, `eastus2euap`). Loose on purpose: a new region of any
/// provider's naming passes; what fails is a region missing the number or
/// the `-` before it (`us-east2`, `us-central`, `useast1`). On-premises
/// regions are free.
fn region_shape(provider: Provider, region: &str) -> Option<&'static str> {
    let parts: Vec<&str> = region.split('-').collect();
    let word = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase());
    let number = |s: &str| !s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit());
    match provider {
        Provider::Aws => {
            let ok = parts.len() >= 3
                && parts[..parts.len() - 1].iter().all(|p| word(p))
                && number(parts[parts.len() - 1]);
            (!ok).then_some(
                "AWS writes it: area, direction and number, joined by `-` (`us-east-1`, `eu-central-2`, `us-gov-west-1`)",
            )
        }
        Provider::Gcp => {
            let last = parts[parts.len() - 1];
            let digits = last.trim_start_matches(|c: char| c.is_ascii_lowercase());
            let ok = parts.len() >= 2
                && parts[..parts.len() - 1].iter().all(|p| word(p))
                && digits.len() < last.len()
                && number(digits);
            (!ok).then_some(
                "Google Cloud writes it: area, `-`, direction and number (`us-central1`, `europe-west4`)",
            )
        }
        Provider::Azure => {
            let ok = region.starts_with(|c: char| c.is_ascii_lowercase())
                && region
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
            (!ok).then_some("Azure writes it: one word of lowercase letters and digits (`eastus`, `westeurope`)")
        }
        Provider::Onprem => None,
    }
}

/// The region a zone names, as its provider writes zones (AWS `us-east-1a`
/// in `us-east-1`; Google Cloud `us-central1-a` in `us-central1`). Azure's
/// zones (`1`) name none.
fn zone_region(provider: Provider, zone: &str) -> Option<String> {
    match provider {
        Provider::Aws => zone
            .strip_suffix(|c: char| c.is_ascii_lowercase())
            .filter(|r| r.ends_with(|c: char| c.is_ascii_digit()))
            .map(str::to_string),
        Provider::Gcp => zone
            .rsplit_once('-')
            .filter(|(_, z)| z.len() == 1)
            .map(|(r, _)| r.to_string()),
        Provider::Azure | Provider::Onprem => None,
    }
}

/// A zone's form, and that it is one of `region`'s (where the region is known
/// and can judge it) as `provider` names zones.
fn check_zone(
    provider: Provider,
    region: Option<&Spanned<String>>,
    zone: &Spanned<String>,
    whose: &str,
    diags: &mut Vec<Diagnostic>,
) {
    if !is_region(&zone.value) {
        diags.push(bad(
            zone,
            "zone",
            "a zone as the cloud writes it: lowercase letters, digits and `-` (`us-east-1a`, `us-central1-a`)",
        ));
        return;
    }
    let Some(region) = region else {
        return;
    };
    if let Some(form) = zone_outside(provider, &region.value, &zone.value) {
        diags.push(
            Diagnostic::new(
                Code::NameInvalid,
                format!(
                    "zone `{}` is not a zone of region `{}`",
                    zone.value, region.value
                ),
            )
            .at(zone.span, format!("not in the {whose}'s region"))
            .related(region.span, "the region")
            .help(form),
        );
    }
}

/// Why a zone is not one of the region's, as the provider names zones: AWS
/// `us-east-1a` (and Local Zones `us-west-2-lax-1a`), Google Cloud
/// `us-central1-a`, Azure `1`, `2` or `3`.
fn zone_outside(provider: Provider, region: &str, zone: &str) -> Option<&'static str> {
    match provider {
        Provider::Aws if !(zone.len() > region.len() && zone.starts_with(region)) => {
            Some("an AWS zone is its region followed by a letter: `us-east-1a` in `us-east-1`")
        }
        Provider::Gcp
            if !zone
                .strip_prefix(region)
                .is_some_and(|z| z.len() > 1 && z.starts_with('-')) =>
        {
            Some(
                "a Google Cloud zone is its region, `-` and a letter: `us-central1-a` in `us-central1`",
            )
        }
        Provider::Azure if !matches!(zone, "1" | "2" | "3") => {
            Some("an Azure availability zone is `1`, `2` or `3`")
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "regions_tests.rs"]
mod tests;
