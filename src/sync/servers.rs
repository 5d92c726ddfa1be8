//! The API server a kubeconfig context reaches, in one spelling, so that
//! two contexts (or a context and a plan) naming the same server in two
//! ways are known to be one.

use kube::config::Kubeconfig;

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

/// A server URL in one spelling: scheme and host in lower case, an IP
/// address in its canonical form (an IPv4-mapped IPv6 address as IPv4,
/// `localhost` as 127.0.0.1), the port written out (443 for https, 80 for
/// http, leading zeros dropped), no trailing slash.
pub fn normal_server(url: &str) -> String {
    let lower = url.trim().trim_end_matches('/').to_ascii_lowercase();
    let Some((scheme, rest)) = lower.split_once("://") else {
        return lower;
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((h, p)) => (h.to_string(), p.strip_prefix(':').map(str::to_string)),
            None => (v6.to_string(), None),
        },
        None => match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p.to_string())),
            None => (authority.to_string(), None),
        },
    };
    let port = port
        .and_then(|p| p.parse::<u16>().ok())
        .unwrap_or(if scheme == "http" { 80 } else { 443 });
    let host = match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => format!("[{v6}]"),
        },
        Ok(ip) => ip.to_string(),
        Err(_) if host == "localhost" => "127.0.0.1".into(),
        Err(_) => host,
    };
    format!("{scheme}://{host}:{port}{path}")
}
