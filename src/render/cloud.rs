//! Cloud reservations as Terraform JSON: one root module per provider and
//! region, `cloud/<provider>/<region>/`, holding a file per Reservation and
//! `providers.tf.json` (`required_providers` with pinned major versions and
//! the `provider` block for the region).
//!
//! | Reservation type | Terraform |
//! | --- | --- |
//! | `aws-capacity-reservation` | `aws_ec2_capacity_reservation` (open, limited to the term's end) |
//! | `aws-capacity-block` | data `aws_ec2_capacity_block_offering` for the term, and `aws_ec2_capacity_block_reservation` |
//! | `gcp-reservation` | `google_compute_reservation` |
//! | `gcp-commitment` | `google_compute_reservation` and `google_compute_region_commitment` attached to it |
//! | `azure-capacity-reservation` | `azurerm_capacity_reservation_group` and `azurerm_capacity_reservation` |
//!
//! Reservations whose term has ended at `--at` are not rendered. Nor are
//! capacity reservations and commitments whose term has not started: their
//! resources have no start date, so applying one creates it, and bills it,
//! at once; they are rendered from the start of their term (capacity blocks,
//! bought ahead for a start date, are rendered as soon as they are asked
//! for). The
//! providers' own rules (capacity-block durations and sizes, zones, names)
//! are checked with validation (`validate::cloud`). A capacity block cannot
//! be cancelled, so its purchase ignores later changes of the offering id,
//! refuses to be replaced, and (when the Reservation names a zone) refuses
//! an offering in another zone.

use super::{File, Format, Job, Options};
use crate::model::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Terraform providers capops writes for, pinned to a major version:
/// (capops provider, Terraform provider name, source, version constraint).
pub const PROVIDERS: &[(&str, &str, &str, &str)] = &[
    ("aws", "aws", "hashicorp/aws", "~> 6.0"),
    ("gcp", "google", "hashicorp/google", "~> 7.0"),
    ("azure", "azurerm", "hashicorp/azurerm", "~> 4.0"),
];

/// Makes every string of a template context a literal for Terraform:
/// Terraform's JSON syntax reads `${...}` and `%{...}` in strings as
/// expressions and directives (`${file("/etc/hostname")}` would run on the
/// machine that plans), and `$${` / `%%{` as the characters themselves.
/// Values from documents are data, never code; the templates' own
/// references are written by the templates, after this.
pub fn literal(v: &mut Value) {
    match v {
        Value::String(s) if s.contains("${") || s.contains("%{") => {
            *s = s.replace("${", "$${").replace("%{", "%%{");
        }
        Value::Array(items) => items.iter_mut().for_each(literal),
        Value::Object(m) => m.values_mut().for_each(literal),
        _ => {}
    }
}

/// The `providers.tf.json` of one root module.
pub fn providers(folder: &str, region: &str) -> Value {
    let (_, name, source, version) = PROVIDERS
        .iter()
        .find(|p| p.0 == folder)
        .copied()
        .unwrap_or(("aws", "aws", "hashicorp/aws", "~> 6.0"));
    let provider = match name {
        // azurerm takes the subscription from ARM_SUBSCRIPTION_ID; locations are per resource.
        "azurerm" => json!({"features": {}}),
        _ => json!({"region": region}),
    };
    json!({
        "//": format!("managed by capops: the root module for {folder} {region}"),
        "terraform": {
            "required_version": ">= 1.5.0",
            "required_providers": {name: {"source": source, "version": version}},
        },
        "provider": {name: provider},
    })
}

/// A Terraform name: letters, digits and underscores.
pub fn terraform_id(name: &str) -> String {
    let mut id: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if id.starts_with(|c: char| c.is_ascii_digit()) {
        id.insert(0, '_');
    }
    id
}

/// Adds a job per Reservation in force or to come at `--at`.
pub fn reservations(repo: &Repo, opts: &Options, jobs: &mut Vec<Job>, files: &mut Vec<File>) {
    let mut modules: BTreeSet<(&str, String)> = BTreeSet::new();
    for r in repo.reservations.values() {
        let s = &r.spec;
        let kind = s.kind.value;
        let starts_on_apply = kind != ReservationType::AwsCapacityBlock;
        if s.term.end.value <= opts.at || (starts_on_apply && s.term.start.value > opts.at) {
            continue;
        }
        let (template, folder) = match kind {
            ReservationType::AwsCapacityReservation => {
                ("terraform/aws-capacity-reservation.tf.json.j2", "aws")
            }
            ReservationType::AwsCapacityBlock => ("terraform/aws-capacity-block.tf.json.j2", "aws"),
            ReservationType::GcpReservation | ReservationType::GcpCommitment => {
                ("terraform/gcp-reservation.tf.json.j2", "gcp")
            }
            ReservationType::AzureCapacityReservation => {
                ("terraform/azure-capacity-reservation.tf.json.j2", "azure")
            }
        };
        let region = s.region.value.clone();
        modules.insert((folder, region.clone()));
        let pool = repo.clusters.get(&s.covers.cluster.value).and_then(|c| {
            c.spec
                .node_pools
                .iter()
                .find(|p| p.name.value.as_str() == s.covers.pool.value)
        });
        let gpus_per_instance = pool.map(|p| p.gpus_per_node.value.0).unwrap_or(0);
        // Validation refuses a commitment whose machine series capops cannot
        // name (`gcp-commitment-unsupported`), so it is never rendered.
        let commitment = crate::gpu::gcp::commitment(
            &s.instance_type.value,
            pool.and_then(|p| crate::gpu::catalog::model(&p.gpu_model.value))
                .map(|m| m.id),
        )
        .ok();
        let n1 = crate::gpu::gcp::n1_gpus(&s.instance_type.value);
        let plan = match (kind, s.commitment_plan.as_ref().map(|p| p.value)) {
            (ReservationType::GcpCommitment, Some(CommitmentPlan::ThirtySixMonth)) => {
                Some("THIRTY_SIX_MONTH")
            }
            (ReservationType::GcpCommitment, _) => Some("TWELVE_MONTH"),
            _ => None,
        };
        let hours = (s.term.end.value.as_second() - s.term.start.value.as_second()) / 3600;
        let sources = vec![format!("Reservation/{}", r.name())];
        // Never the revision: a Compute Engine reservation's and a
        // commitment's description cannot change in place (the provider
        // replaces the resource, and a commitment cannot be deleted), so a
        // description that moved with every merge would have Terraform
        // release the reservation and buy the commitment again. The
        // revision goes in tags, which AWS and Azure update in place.
        let description = format!("managed by capops from {}", sources.join(","));
        let mut context = json!({
                "id": terraform_id(r.name()),
                "reservation": {
                    "name": r.name(),
                    "type": kind.as_str(),
                    "instance_type": s.instance_type.value,
                    "count": s.count.value.0,
                    "zone": s.zone.as_ref().map(|z| z.value.clone()),
                    "region": s.region.value,
                    "start": s.term.start.value.to_string(),
                    "end": s.term.end.value.to_string(),
                    "hours": hours,
                    "plan": plan,
                    "commitment_type": commitment.and_then(|c| c.commitment_type),
                    "machine_type": n1.map_or(s.instance_type.value.as_str(), |(m, _)| m),
                    "guest_accelerator": n1.map(|(_, a)| {
                        json!({"type": a, "count": gpus_per_instance})
                    }),
                    "accelerator_type": commitment.map(|c| c.accelerator),
                    "accelerators": s.count.value.0 * gpus_per_instance,
                    "cluster": s.covers.cluster.value,
                    "pool": s.covers.pool.value,
                },
                "tags": super::cloud_tags(&sources, &opts.revision),
                "description": description,
        });
        literal(&mut context);
        jobs.push(Job {
            template,
            context,
            expect: None,
            sources,
            span: r.name_span(),
            folder: format!("cloud/{folder}/{region}"),
            file_name: Some(format!("{}.tf.json", r.name())),
        });
    }
    for (folder, region) in &modules {
        files.push(File {
            path: format!("cloud/{folder}/{region}/providers.tf.json"),
            value: providers(folder, region),
            format: Format::Json,
            kubernetes: false,
        });
    }
    for (_, region) in modules.iter().filter(|(f, _)| *f == "azure") {
        files.push(File {
            path: format!("cloud/azure/{region}/variables.tf.json"),
            value: json!({
                "variable": {
                    "azure_resource_group_name": {
                        "type": "string",
                        "description": "Resource group that holds the capacity reservation groups capops renders",
                    }
                }
            }),
            format: Format::Json,
            kubernetes: false,
        });
    }
}
