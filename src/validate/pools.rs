//! Cluster and node-pool checks: GPU models, purchase mix, MIG layouts, regions.

use crate::diag::{Code, Diagnostic, suggest};
use crate::gpu::catalog::{self, PlacementStatus};
use crate::gpu::mig::{self, NameError};
use crate::model::*;
use std::collections::HashMap;

/// Checks every cluster and its pools.
pub fn check_clusters(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    for cluster in repo.clusters.values() {
        let spec = &cluster.spec;
        if spec.provider.value.is_cloud() && spec.region.is_none() {
            diags.push(
                Diagnostic::new(
                    Code::MissingField,
                    format!(
                        "cluster `{}` runs on {} but names no region",
                        cluster.name(),
                        spec.provider.value.as_str()
                    ),
                )
                .at(spec.provider.span, "cloud provider")
                .help("add `region:`; prices and reservations are per region"),
            );
        }
        let mut names = HashMap::new();
        for pool in &spec.node_pools {
            if let Some(first) = names.insert(pool.name.value.as_str(), pool.name.span) {
                diags.push(
                    Diagnostic::new(
                        Code::DuplicateName,
                        format!(
                            "cluster `{}` has two pools named `{}`",
                            cluster.name(),
                            pool.name.value
                        ),
                    )
                    .at(pool.name.span, "second pool")
                    .related(first, "first pool")
                    .help("pool names are unique within a cluster"),
                );
            }
            check_pool(cluster, pool, diags);
        }
        check_selectors(cluster, diags);
    }
}

/// Two pools of a cluster whose `nodeLabels` can select the same node (no
/// label on which they want different values): the node's GPUs would count
/// in both, Kueue would admit either pool's work onto it, and a MIG layout
/// would be written onto nodes of the other pool.
fn check_selectors(cluster: &Document<ClusterSpec>, diags: &mut Vec<Diagnostic>) {
    let pools = &cluster.spec.node_pools;
    // One problem per pool, at the first pool before it that it shares
    // nodes with (thousands of pools with the same labels are thousands of
    // problems, not millions of pairs).
    for (i, a) in pools.iter().enumerate() {
        // Whatever their GPU models say: a selector aimed at another
        // model's nodes still reaches them (the model is not checked
        // against the nodes).
        if a.node_labels.is_empty() {
            continue;
        }
        let mut shared = pools[..i].iter().filter(|b| {
            !b.node_labels.is_empty()
                && crate::model::selectors_may_overlap(&a.node_labels, &b.node_labels)
        });
        let Some(b) = shared.next() else {
            continue;
        };
        let more = match shared.count() {
            0 => String::new(),
            n => format!(" (nor those of {n} more of its pools listed before it)"),
        };
        diags.push(
            Diagnostic::new(
                Code::NodePoolsShareNodes,
                format!(
                    "pools `{}` and `{}` of cluster `{}` can select the same nodes: no label of their nodeLabels tells them apart{more}",
                    a.name.value,
                    b.name.value,
                    cluster.name()
                ),
            )
            .at(a.name.span, "selects nodes of the other pool")
            .related(b.name.span, "the other pool")
            .help("give each pool a label value of its own (`acme.ai/gpu-pool: <pool>`) so that their nodeLabels select disjoint nodes"),
        );
    }
}

fn check_pool(cluster: &Document<ClusterSpec>, pool: &NodePool, diags: &mut Vec<Diagnostic>) {
    let gpus = u64::from(pool.nodes.value.0) * u64::from(pool.gpus_per_node.value.0);
    if gpus > crate::capacity::MAX_POOL_GPUS {
        diags.push(
            Diagnostic::new(
                Code::ValueOutOfRange,
                format!(
                    "pool `{}` would hold {gpus} GPUs ({} nodes of {}); a pool holds at most {}",
                    pool.name.value,
                    pool.nodes.value.0,
                    pool.gpus_per_node.value.0,
                    crate::capacity::MAX_POOL_GPUS
                ),
            )
            .at(pool.nodes.span, "nodes times gpusPerNode is too many")
            .help("check `nodes` and `gpusPerNode`; split a fleet this size into several pools"),
        );
    }
    if let Some(mix) = &pool.purchase {
        let sum = mix.value.reserved.0 + mix.value.on_demand.0 + mix.value.spot.0;
        if sum != pool.nodes.value.0 {
            diags.push(
                Diagnostic::new(
                    Code::PurchaseMixMismatch,
                    format!(
                        "pool `{}` has {} nodes but its purchase mix adds up to {} ({} reserved + {} on-demand + {} spot)",
                        pool.name.value,
                        pool.nodes.value.0,
                        sum,
                        mix.value.reserved.0,
                        mix.value.on_demand.0,
                        mix.value.spot.0
                    ),
                )
                .at(mix.span, "purchase mix")
                .related(pool.nodes.span, "node count")
                .help("make reserved + onDemand + spot equal `nodes`"),
            );
        }
    }
    spot_by_label(pool, diags);
    labels_capops_sets(pool, diags);
    let Some(model) = catalog::model(&pool.gpu_model.value) else {
        diags.push(
            Diagnostic::new(
                Code::UnknownGpuModel,
                format!("GPU model `{}` is not in the catalog", pool.gpu_model.value),
            )
            .at(pool.gpu_model.span, "unknown model")
            .help(suggest(
                &catalog::normalize(&pool.gpu_model.value),
                catalog::all_names(),
                "models",
            )),
        );
        return;
    };
    let Some(layout) = &pool.mig else { return };
    let Some(mig_model) = &model.mig else {
        let first = layout.layout.span;
        diags.push(
            Diagnostic::new(
                Code::MigNotSupported,
                format!(
                    "{} has no MIG, but pool `{}` gives a MIG layout",
                    model.display, pool.name.value
                ),
            )
            .at(first, "MIG layout")
            .related(pool.gpu_model.span, "GPU model")
            .help("remove `mig:` or use a MIG-capable model (A100, A30, H100, H200, GH200, H20, B200, GB200, B300, GB300, RTX PRO 6000)"),
        );
        return;
    };
    if layout.layout.value.is_empty() {
        diags.push(
            Diagnostic::new(
                Code::MigLayoutEmpty,
                format!(
                    "pool `{}` has a MIG layout with no profile: its GPUs would provide nothing",
                    pool.name.value
                ),
            )
            .at(layout.layout.span, "empty layout")
            .help("list the profiles each GPU is split into (`1g.10gb: 7`), or remove `mig:` to use whole GPUs"),
        );
        return;
    }
    let mut resolved = Vec::new();
    let mut named: Vec<(&str, &str, crate::diag::Span)> = Vec::new();
    for (name, count) in &layout.layout.value {
        match mig::resolve(mig_model, &name.value) {
            Ok(r) => {
                let spelled = mig::spelling(&name.value);
                if spelled != name.value {
                    diags.push(
                        Diagnostic::new(
                            Code::MigProfileSpelling,
                            format!(
                                "`{}` is not how the device plugin and mig-parted name the profile: they read `{spelled}`",
                                name.value
                            ),
                        )
                        .at(name.span, "not the device plugin's spelling")
                        .help(format!("write `{spelled}`")),
                    );
                    continue;
                }
                if let Some((other, _, other_span)) =
                    named.iter().find(|(_, p, _)| *p == r.profile.name)
                {
                    // Shown at the spelling written second, whichever sorts first.
                    let (second, first) = if other_span.start > name.span.start {
                        (*other_span, name.span)
                    } else {
                        (name.span, *other_span)
                    };
                    diags.push(
                        Diagnostic::new(
                            Code::MigProfileSpelling,
                            format!(
                                "`{}` and `{other}` both name {}'s profile `{}`",
                                name.value, model.display, r.profile.name
                            ),
                        )
                        .at(second, "the same profile again")
                        .related(first, "first named here")
                        .help("write the profile once, as the node's driver names it, with the instances added up"),
                    );
                    continue;
                }
                named.push((name.value.as_str(), r.profile.name, name.span));
                if r.alias {
                    diags.push(
                        Diagnostic::new(
                            Code::MigProfileAlias,
                            format!(
                                "`{}` is read as {}'s profile `{}` (drivers name it differently)",
                                name.value, model.display, r.profile.name
                            ),
                        )
                        .at(name.span, format!("alias of {}", r.profile.name))
                        .help("capops renders the name as written (MIG configs, quotas, Kueue), which must match what the node's driver reports"),
                    );
                }
                resolved.push((r.profile, count.value.0));
            }
            Err(err) => {
                let profiles: Vec<&str> = mig_model.profiles.iter().map(|p| p.name).collect();
                let why = match err {
                    NameError::Malformed => "is not a MIG profile name".to_string(),
                    NameError::ComputeInstance => {
                        "is a compute-instance profile; layouts list GPU-instance profiles"
                            .to_string()
                    }
                    NameError::Unknown => format!("is not a profile of {}", model.display),
                };
                diags.push(
                    Diagnostic::new(Code::MigUnknownProfile, format!("`{}` {why}", name.value))
                        .at(name.span, "unknown profile")
                        .help(suggest(
                            &name.value,
                            profiles,
                            &format!("profiles of {}", model.id),
                        )),
                );
            }
        }
    }
    if resolved.len() != layout.layout.value.len() {
        return;
    }
    if cluster.spec.mig_strategy.value == MigStrategy::Single && resolved.len() > 1 {
        let first = layout.layout.span;
        diags.push(
            Diagnostic::new(
                Code::MigSingleStrategyMixed,
                format!(
                    "cluster `{}` uses the single MIG strategy, but pool `{}` mixes {} profiles",
                    cluster.name(),
                    pool.name.value,
                    resolved.len()
                ),
            )
            .at(first, "several profiles")
            .related(cluster.spec.mig_strategy.span, "strategy")
            .help("under the single strategy every GPU has one profile type; use `migStrategy: mixed` or one profile"),
        );
    }
    match mig::place(mig_model, &resolved) {
        Ok(_) => {
            if mig_model.placement_status == PlacementStatus::Inferred {
                let first = layout.layout.span;
                diags.push(
                    Diagnostic::new(
                        Code::MigPlacementInferred,
                        format!(
                            "MIG placements for {} are inferred from the A100/H100 family, not observed on this GPU",
                            model.display
                        ),
                    )
                    .at(first, "checked with inferred placements")
                    .help(format!(
                        "confirm with `nvidia-smi mig -lgipp` on a node; source: {}",
                        mig_model.source
                    )),
                );
            }
        }
        Err(err) => {
            let nearest = mig::nearest_fits(mig_model, &resolved, 3);
            let mut help = String::from(match err {
                mig::FitError::MediaEngines { .. } => {
                    "an instance with all the media engines (`+me.all`) shares its GPU only with `-me` instances"
                }
                _ => "a GPU's instances must sit on separate memory slices",
            });
            if !nearest.is_empty() {
                let options: Vec<String> = nearest.iter().map(|l| mig::describe(l)).collect();
                help = format!(
                    "{help}; layouts that fit with the fewest instances removed: {}",
                    options.join("; ")
                );
            }
            let first = layout.layout.span;
            diags.push(
                Diagnostic::new(
                    Code::MigLayoutDoesNotFit,
                    format!(
                        "MIG layout {} does not fit on one {}: {err}",
                        mig::describe(&resolved),
                        model.display
                    ),
                )
                .at(first, "layout")
                .help(help),
            );
        }
    }
}

/// A pool may not select its nodes by a label capops sets on them: `apply`
/// would overwrite the value the selector (and the ResourceFlavor) names, and
/// the pool would select no node.
fn labels_capops_sets(pool: &NodePool, diags: &mut Vec<Diagnostic>) {
    use crate::gpu::{DEVICE_PLUGIN_CONFIG_LABEL, MIG_CONFIG_LABEL};
    let set: &[&str] = match (&pool.mig, &pool.time_slicing) {
        (Some(_), _) => &[MIG_CONFIG_LABEL, DEVICE_PLUGIN_CONFIG_LABEL],
        (None, Some(_)) => &[DEVICE_PLUGIN_CONFIG_LABEL],
        (None, None) => &[],
    };
    for key in set.iter().filter(|k| pool.node_labels.contains_key(**k)) {
        diags.push(
            Diagnostic::new(
                Code::InvalidValue,
                format!(
                    "pool `{}` selects its nodes by `{key}`, which capops sets on them (to the config it renders for the pool)",
                    pool.name.value
                ),
            )
            .at(pool.name.span, "selects by a label capops rewrites")
            .help(format!(
                "select the pool's nodes by a label of your own (`acme.ai/gpu-pool: {}`) and leave `{key}` to capops",
                pool.name.value
            )),
        );
    }
}

/// A pool whose `nodeLabels` or taints mark spot capacity (a provider's or
/// autoscaler's capacity-type label) must say so in its purchase mix: its
/// price and the rules for spot read the mix.
fn spot_by_label(pool: &NodePool, diags: &mut Vec<Diagnostic>) {
    let Some(marker) = crate::model::spot_marker(pool) else {
        return;
    };
    let (reserved, on_demand) = pool.purchase.as_ref().map_or((0, pool.nodes.value.0), |m| {
        (m.value.reserved.0, m.value.on_demand.0)
    });
    if reserved + on_demand == 0 {
        return;
    }
    let mut d = Diagnostic::new(
        Code::PurchaseMixMismatch,
        format!(
            "pool `{}` selects or tolerates spot nodes (`{marker}` in its nodeLabels or taints), but its purchase mix has {reserved} reserved and {on_demand} on-demand nodes",
            pool.name.value
        ),
    )
    .at(pool.name.span, "every node this pool selects is spot")
    .help("state the nodes as spot (`purchase: {spot: <nodes>}`), or drop the capacity-type label or taint");
    if let Some(mix) = &pool.purchase {
        d = d.related(mix.span, "purchase mix");
    }
    diags.push(d);
}
