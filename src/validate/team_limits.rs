//! Diagnostics of a team's quota, borrowing and lending maps: a resource
//! written otherwise than the device plugin advertises it, or named twice
//! under two spellings, which the render would resolve to one entry and the
//! gate could read as another.

use crate::diag::{Code, Diagnostic};
use crate::gpu::resources;
use crate::model::{ClusterSpec, Document, Spanned};

/// `second` names the resource `resource` (as the device plugin advertises
/// it) that `first` already names, in cluster `cluster`.
pub(super) fn duplicate(
    first: &Spanned<String>,
    second: &Spanned<String>,
    resource: &str,
    cluster: &str,
) -> Diagnostic {
    Diagnostic::new(
        Code::DuplicateResource,
        format!(
            "`{}` and `{}` both name `{resource}` in cluster `{cluster}`: the render would use one and the gate could read the other",
            crate::diag::clip(&first.value),
            crate::diag::clip(&second.value),
        ),
    )
    .at(second.span, "the same resource again")
    .help(format!(
        "keep one entry, spelled `{resource}` as the device plugin advertises it"
    ))
}

/// `written` names the resource the device plugin advertises as `resource`
/// under another spelling (`nvidia.com/mig-1g.24gb+gfx`, a driver alias).
pub(super) fn spelled_otherwise(written: &Spanned<String>, resource: &str) -> Diagnostic {
    Diagnostic::new(
        Code::InvalidResourceName,
        format!(
            "`{}` is advertised by the device plugin as `{resource}`: quotas and limits are keyed by that name",
            crate::diag::clip(&written.value)
        ),
    )
    .at(written.span, "another spelling")
    .help(format!("write `{resource}`"))
}

/// The resource a team's limit key names in `cluster`: one some pool
/// advertises under this very name first; only a key no pool advertises is
/// read by another spelling (and must then be written so).
pub(super) fn advertised<'a>(
    cluster: &Document<ClusterSpec>,
    provided: &'a [resources::Provided],
    key: &Spanned<String>,
) -> Option<&'a resources::Provided> {
    provided
        .iter()
        .find(|p| p.resource == key.value)
        .or_else(|| {
            cluster
                .spec
                .node_pools
                .iter()
                .find_map(|pool| resources::find(provided, &key.value, pool))
        })
}
