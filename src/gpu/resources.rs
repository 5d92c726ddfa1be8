//! Kubernetes extended-resource names for GPUs, and what a pool provides.
//!
//! capops governs `nvidia.com/gpu` and the mixed-strategy MIG resources
//! `nvidia.com/mig-<profile>`. A pool provides whole GPUs (possibly
//! time-sliced), or MIG instances named after its layout's profiles (mixed
//! strategy), or MIG instances advertised as `nvidia.com/gpu` (single strategy).

use super::catalog::{self, MigProfile};
use super::mig;
use crate::model::{MigStrategy, NodePool};

/// The whole-GPU resource.
pub const GPU: &str = "nvidia.com/gpu";
/// Prefix of mixed-strategy MIG resources.
pub const MIG_PREFIX: &str = "nvidia.com/mig-";

/// A resource name, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceName {
    Gpu,
    /// A MIG profile name as written in the resource (`1g.10gb+me` for `mig-1g.10gb.me`).
    Mig(String),
}

/// Why a resource name is not one capops can quota, with what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadResource {
    pub reason: String,
    pub help: String,
}

/// Parses a resource name as written in a request or a quota.
pub fn parse(name: &str) -> Result<ResourceName, BadResource> {
    if name == GPU {
        return Ok(ResourceName::Gpu);
    }
    for prefix in ["requests.", "limits."] {
        if let Some(rest) = name.strip_prefix(prefix) {
            let extra = if prefix == "limits." {
                " (Kubernetes accepts `limits.` quota keys for extended resources and silently ignores them)"
            } else {
                ""
            };
            return Err(BadResource {
                reason: format!("`{name}` carries the quota prefix `{prefix}`"),
                help: format!(
                    "write the resource itself, `{rest}`; capops renders it as the quota key `requests.{rest}`{extra}"
                ),
            });
        }
    }
    if let Some(profile) = name.strip_prefix(MIG_PREFIX) {
        let mut parts = profile.split('.');
        let (Some(g), Some(gb)) = (parts.next(), parts.next()) else {
            return Err(bad_mig(name));
        };
        let attrs: Vec<&str> = parts.collect();
        let written = if attrs.is_empty() {
            format!("{g}.{gb}")
        } else {
            format!("{g}.{gb}+{}", attrs.join("."))
        };
        if mig::parse_name(&written).is_none() {
            return Err(bad_mig(name));
        }
        return Ok(ResourceName::Mig(written));
    }
    if name == "nvidia.com/gpu.shared" {
        return Err(BadResource {
            reason: "`nvidia.com/gpu.shared` is the renamed time-sliced resource".into(),
            help: "capops renders time-slicing without renaming: ask for `nvidia.com/gpu` on the time-sliced pool".into(),
        });
    }
    Err(BadResource {
        reason: format!("`{name}` is not a GPU resource capops governs"),
        help: format!(
            "use `{GPU}` or `{MIG_PREFIX}<profile>` (for example `nvidia.com/mig-1g.10gb`)"
        ),
    })
}

fn bad_mig(name: &str) -> BadResource {
    // The profile's own spelling (`1g.24gb+me.all`) where the device plugin
    // writes `.` for `+`: say which name to write.
    let dotted = name.replace('+', ".");
    let help = if dotted != name && parse(&dotted).is_ok() {
        format!("write `{dotted}`: the device plugin names a profile's attributes with `.` for `+`")
    } else {
        "MIG resources are named `nvidia.com/mig-<g>g.<gb>gb`, with attributes after a `.` (`nvidia.com/mig-1g.10gb`, `nvidia.com/mig-1g.24gb.me.all`)".into()
    };
    BadResource {
        reason: format!("`{name}` is not a well-formed MIG resource name"),
        help,
    }
}

/// A resource a pool provides.
#[derive(Debug, Clone, PartialEq)]
pub struct Provided {
    /// The resource name (`nvidia.com/gpu`, `nvidia.com/mig-1g.10gb`).
    pub resource: String,
    /// The MIG profile behind it, if any.
    pub profile: Option<&'static MigProfile>,
    /// Units per physical GPU (MIG instances, or time-slicing replicas).
    pub per_gpu: u32,
    /// Fraction of a GPU one unit is worth: its MIG compute slices over
    /// those the pool's layout uses (at most the model's), or 1 / replicas.
    pub gpu_equivalent: f64,
}

/// The compute slices a MIG pool's layout shares out, at most the model's.
///
/// The instances of a layout share out their GPU: one is worth its compute
/// slices over those the layout uses, so that a GPU's instances add up to
/// the GPU. A layout that leaves slices unused (four `1g.20gb` on a 7-slice
/// H100, bound by memory) makes each instance a quarter of a GPU, not a
/// seventh. A layout over the model's slices is impossible (reported by
/// validation) and is not allowed to make instances cheaper. `None` for a
/// pool without a MIG layout on a MIG-capable model.
pub fn mig_share(pool: &NodePool) -> Option<u32> {
    let model = catalog::model(&pool.gpu_model.value)?.mig.as_ref()?;
    let layout = pool.mig.as_ref()?;
    let used: u32 = layout
        .layout
        .value
        .iter()
        .filter_map(|(name, count)| {
            let r = mig::resolve(model, &name.value).ok()?;
            Some(r.profile.compute_slices.saturating_mul(count.value.0))
        })
        .fold(0u32, u32::saturating_add);
    Some(used.clamp(1, model.compute_slices.max(1)))
}

/// What a pool provides, given its cluster's MIG strategy. Unknown models or
/// profiles provide nothing (they are reported elsewhere).
pub fn provided(pool: &NodePool, strategy: MigStrategy) -> Vec<Provided> {
    let replicas = pool
        .time_slicing
        .as_ref()
        .map(|t| t.replicas.value.max(1))
        .unwrap_or(1);
    let model = catalog::model(&pool.gpu_model.value);
    let mig_model = model.and_then(|m| m.mig.as_ref());
    match (&pool.mig, mig_model) {
        (Some(layout), Some(mig_model)) => {
            let share = mig_share(pool).unwrap_or(mig_model.compute_slices).max(1);
            let mut out: Vec<Provided> = Vec::new();
            for (name, count) in &layout.layout.value {
                let Ok(resolved) = mig::resolve(mig_model, &name.value) else {
                    continue;
                };
                let p = resolved.profile;
                let per_gpu = count.value.0 * replicas;
                let eq = p.compute_slices as f64 / share as f64 / replicas as f64;
                let resource = match strategy {
                    // As the device plugin names it: a layout that spells a
                    // profile otherwise is its own error (mig-profile-spelling),
                    // and the teams' keys are checked against the real name.
                    MigStrategy::Mixed => mig::resource_name(&mig::spelling(&name.value)),
                    MigStrategy::Single => GPU.to_string(),
                };
                match out.iter_mut().find(|o| o.resource == resource) {
                    Some(o) => o.per_gpu += per_gpu,
                    None => out.push(Provided {
                        resource,
                        profile: Some(p),
                        per_gpu,
                        gpu_equivalent: eq,
                    }),
                }
            }
            out
        }
        _ => vec![Provided {
            resource: GPU.to_string(),
            profile: None,
            per_gpu: replicas,
            gpu_equivalent: 1.0 / replicas as f64,
        }],
    }
}

/// Whether `requested` (a resource name as written) matches what a pool
/// provides, comparing MIG profiles by their canonical names so that driver
/// aliases (`7g.79gb`, `7g.80gb`) match.
pub fn find<'a>(
    provided: &'a [Provided],
    requested: &str,
    pool: &NodePool,
) -> Option<&'a Provided> {
    if let Some(p) = provided.iter().find(|p| p.resource == requested) {
        return Some(p);
    }
    let Ok(ResourceName::Mig(written)) = parse(requested) else {
        return None;
    };
    let mig_model = catalog::model(&pool.gpu_model.value)?.mig.as_ref()?;
    let wanted = mig::resolve(mig_model, &written).ok()?.profile;
    provided.iter().find(|p| {
        p.profile.is_some_and(|q| std::ptr::eq(q, wanted)) && p.resource.starts_with(MIG_PREFIX)
    })
}

/// Whether a team's quota, borrowing or lending key names the resource a
/// pool advertises: the same name, or the same MIG profile spelled another
/// way (`mig-1g.010gb` is `mig-1g.10gb`). Never by a profile name's memory
/// tolerance ([`find`] reads `mig-1g.5gb` on an A30 as its `mig-1g.6gb`): a
/// team's map is keyed by resource across the cluster's pools, so a key
/// limits only the resource it names.
pub fn names_resource(key: &str, advertised: &str) -> bool {
    if key == advertised {
        return true;
    }
    match (parse(key), parse(advertised)) {
        (Ok(ResourceName::Mig(a)), Ok(ResourceName::Mig(b))) => {
            mig::spelling(&a) == mig::spelling(&b)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn team_keys_name_one_resource() {
        assert!(names_resource("nvidia.com/gpu", "nvidia.com/gpu"));
        assert!(names_resource(
            "nvidia.com/mig-1g.010gb",
            "nvidia.com/mig-1g.10gb"
        ));
        assert!(!names_resource(
            "nvidia.com/mig-1g.5gb",
            "nvidia.com/mig-1g.6gb"
        ));
        assert!(!names_resource(
            "nvidia.com/mig-1g.10gb",
            "nvidia.com/mig-1g.10gb.me"
        ));
        assert!(!names_resource("nvidia.com/gpu", "nvidia.com/mig-1g.10gb"));
    }

    #[test]
    fn a_plus_in_a_mig_resource_says_to_write_a_dot() {
        let bad = parse("nvidia.com/mig-1g.24gb+me.all").unwrap_err();
        assert!(
            bad.help.contains("`nvidia.com/mig-1g.24gb.me.all`"),
            "{}",
            bad.help
        );
        let bad = parse("nvidia.com/mig-1g").unwrap_err();
        assert!(bad.help.contains("attributes after a `.`"), "{}", bad.help);
    }

    #[test]
    fn parses_resource_names() {
        assert_eq!(parse("nvidia.com/gpu"), Ok(ResourceName::Gpu));
        assert_eq!(
            parse("nvidia.com/mig-1g.10gb"),
            Ok(ResourceName::Mig("1g.10gb".into()))
        );
        assert_eq!(
            parse("nvidia.com/mig-1g.10gb.me"),
            Ok(ResourceName::Mig("1g.10gb+me".into()))
        );
        let e = parse("limits.nvidia.com/gpu").unwrap_err();
        assert!(e.help.contains("silently ignores"), "{}", e.help);
        assert!(
            parse("requests.nvidia.com/gpu")
                .unwrap_err()
                .help
                .contains("`nvidia.com/gpu`")
        );
        assert!(parse("nvidia.com/mig-big").is_err());
        assert!(parse("amd.com/gpu").is_err());
        assert!(parse("nvidia.com/gpu.shared").is_err());
    }

    fn mig_pool(layout: &str) -> NodePool {
        let pool = format!(
            "    - name: p\n      gpuModel: h100-80gb-sxm\n      gpusPerNode: 8\n      nodes: 2\n      mig: {{layout: {layout}}}\n"
        );
        crate::gpu::inventory::tests::pool(&pool).1
    }

    /// A GPU's instances add up to the GPU: a layout that leaves compute
    /// slices unused makes each instance worth more than its slices over 7.
    #[test]
    fn mig_instances_share_out_their_gpu() {
        let eq = |layout: &str| -> Vec<(String, f64)> {
            provided(&mig_pool(layout), MigStrategy::Mixed)
                .into_iter()
                .map(|p| (p.resource, p.gpu_equivalent))
                .collect()
        };
        // Seven slices used: a slice is a seventh.
        assert_eq!(
            eq("{3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}"),
            vec![
                ("nvidia.com/mig-1g.10gb".to_string(), 1.0 / 7.0),
                ("nvidia.com/mig-2g.20gb".to_string(), 2.0 / 7.0),
                ("nvidia.com/mig-3g.40gb".to_string(), 3.0 / 7.0),
            ]
        );
        // Four 1g.20gb use all the memory and four of seven slices: a quarter each.
        assert_eq!(
            eq("{1g.20gb: 4}"),
            vec![("nvidia.com/mig-1g.20gb".to_string(), 0.25)]
        );
        // Two 3g.40gb: half a GPU each, not three sevenths.
        assert_eq!(
            eq("{3g.40gb: 2}"),
            vec![("nvidia.com/mig-3g.40gb".to_string(), 0.5)]
        );
        // Whatever the layout, a GPU's units are worth one GPU.
        for layout in [
            "{1g.20gb: 4}",
            "{2g.20gb: 3}",
            "{1g.10gb: 3, 2g.20gb: 1}",
            "{7g.80gb: 1}",
        ] {
            let total: f64 = provided(&mig_pool(layout), MigStrategy::Mixed)
                .iter()
                .map(|p| p.per_gpu as f64 * p.gpu_equivalent)
                .sum();
            assert!((total - 1.0).abs() < 1e-12, "{layout}: {total}");
        }
    }
}
