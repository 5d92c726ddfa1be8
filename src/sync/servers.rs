//! The API server a kubeconfig context reaches, in one spelling, so that
//! two contexts (or a context and a plan) naming the same server in two
//! ways are known to be one.

use kube::config::Kubeconfig;

pub use crate::model::api_server::normal_server;

/// The API server a context reaches: its cluster's `server`, without a
/// trailing slash and lower-cased; `in-cluster` without a kubeconfig for
/// a Cluster that names no context (one that names a context reaches
/// nothing without a kubeconfig). `None` when the kubeconfig does not say
/// (connecting says why).
pub fn server_of(kubeconfig: Option<&Kubeconfig>, context: Option<&str>) -> Option<String> {
    let Some(kc) = kubeconfig else {
        return context.is_none().then(|| "in-cluster".into());
    };
    let name = context.or(kc.current_context.as_deref())?;
    let cluster = kc
        .contexts
        .iter()
        .find(|c| c.name == name)?
        .context
        .as_ref()?
        .cluster
        .clone();
    let server = kc
        .clusters
        .iter()
        .find(|c| c.name == cluster)?
        .cluster
        .as_ref()?
        .server
        .clone()?;
    Some(normal_server(&super::secrets::without_userinfo(&server)))
}
