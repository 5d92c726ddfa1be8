//! Settings of the usage history's refresh and freshness: the Config's
//! `usage` section (how `capops usage pull` queries Prometheus, when usage
//! counts as stale) and a Cluster's `prometheus` (where its metrics live).
//!
//! The queries are PromQL with one placeholder, `$cluster`, which becomes the
//! label matcher that selects the cluster in a shared Prometheus
//! (`cluster="prod-h100"`) or nothing for a Prometheus of its own. Each query's
//! value at time `t` describes the hour that ends at `t`; the result labels
//! each query must keep are listed on its field.

use super::Spanned;
use schemars::JsonSchema;
use serde::Deserialize;

/// `usage` of the Config.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UsageSettings {
    /// Usage whose last measured hour ended more than this many hours before `--at`
    /// is stale: `check` and `report` say so (`usage-stale`). Default 48.
    #[serde(default = "d_stale")]
    #[schemars(range(min = 1, max = 8760))]
    pub stale_after_hours: u32,
    /// Days of hourly history a forecast is fitted on (at least 35): that many days up
    /// to the end of the UTC day of the last measured hour. Older hours still count as
    /// measured (the lookback, charts, reservations' past hours, the history's length)
    /// and in the report's monthly history. Default: every hour.
    #[serde(default)]
    #[schemars(range(min = 35, max = 36500))]
    pub hourly_days: Option<u32>,
    /// Where and how `capops usage pull` reads the measurements.
    #[serde(default)]
    pub prometheus: PrometheusSettings,
    /// The GitHub accounts whose pull requests append measurements (the bot or
    /// GitHub App that runs `capops usage pull` on a schedule, as `login` or
    /// `app-slug[bot]`). Hours such an account appends, within what each team can
    /// hold, are data; hours anyone else appends are judged
    /// (`change.by_usage_puller`). Read from the base revision; a change to the
    /// list is a Config change. Default: none.
    #[serde(default)]
    pub pullers: Vec<Spanned<String>>,
}

impl Default for UsageSettings {
    fn default() -> Self {
        UsageSettings {
            stale_after_hours: d_stale(),
            hourly_days: None,
            prometheus: PrometheusSettings::default(),
            pullers: Vec::new(),
        }
    }
}

/// How `capops usage pull` talks to Prometheus.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PrometheusSettings {
    /// URL of a Prometheus (or any server with its HTTP API) holding the metrics of
    /// every cluster that names no URL of its own, told apart by `clusterLabel`.
    #[serde(default)]
    pub url: Option<Spanned<String>>,
    /// Label that names the cluster in a shared Prometheus (default `cluster`).
    #[serde(default = "d_cluster_label")]
    pub cluster_label: String,
    /// Environment variable holding a bearer token (default `CAPOPS_PROMETHEUS_TOKEN`);
    /// when it is unset no token is sent.
    #[serde(default = "d_token_env")]
    pub token_env: String,
    /// PEM file of a CA that signs the server's certificate, trusted besides the
    /// system's roots; relative paths are from the repository root.
    #[serde(default)]
    pub ca_file: Option<Spanned<String>>,
    /// Seconds one query may take before it is abandoned and retried (default 60).
    #[serde(default = "d_timeout")]
    #[schemars(range(min = 1, max = 3600))]
    pub timeout_seconds: u32,
    /// Hours per range query (default 168). Prometheus answers at most 11,000
    /// points per series; smaller chunks also bound the server's memory per query.
    #[serde(default = "d_chunk")]
    #[schemars(range(min = 1, max = 10000))]
    pub chunk_hours: u32,
    /// The PromQL queries, one per measurement.
    #[serde(default)]
    pub queries: Queries,
}

impl Default for PrometheusSettings {
    fn default() -> Self {
        PrometheusSettings {
            url: None,
            cluster_label: d_cluster_label(),
            token_env: d_token_env(),
            ca_file: None,
            timeout_seconds: d_timeout(),
            chunk_hours: d_chunk(),
            queries: Queries::default(),
        }
    }
}

/// The queries `capops usage pull` runs for each cluster.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Queries {
    /// GPUs requested by running pods in the hour, by `namespace`, `node` and
    /// `resource` (kube-state-metrics' resource name: `nvidia_com_gpu`, `nvidia_com_mig_1g_10gb`).
    #[serde(default = "d_allocated")]
    pub allocated: String,
    /// GPUs busy in the hour, by `namespace`, `node` and, for MIG instances, `profile`
    /// (then the value is in instances of that profile).
    #[serde(default = "d_used")]
    pub used: String,
    /// The cluster's nodes seen in the hour, with their labels as kube-state-metrics
    /// writes them (`node`, `label_<sanitized key>`).
    #[serde(default = "d_nodes")]
    pub nodes: String,
}

impl Default for Queries {
    fn default() -> Self {
        Queries {
            allocated: d_allocated(),
            used: d_used(),
            nodes: d_nodes(),
        }
    }
}

/// A Cluster's `prometheus`: where `capops usage pull` reads its metrics.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClusterPrometheus {
    /// URL of this cluster's own Prometheus (default: the Config's `usage.prometheus.url`).
    #[serde(default)]
    pub url: Option<Spanned<String>>,
    /// Value of the Config's `usage.prometheus.clusterLabel` that selects this cluster.
    /// Default: the Cluster's name on a shared Prometheus; no selector on its own `url`.
    #[serde(default)]
    pub cluster_label_value: Option<String>,
}

fn d_stale() -> u32 {
    48
}
fn d_cluster_label() -> String {
    "cluster".into()
}
fn d_token_env() -> String {
    "CAPOPS_PROMETHEUS_TOKEN".into()
}
fn d_timeout() -> u32 {
    60
}
fn d_chunk() -> u32 {
    168
}

/// Both label conventions of pod metrics: `exported_namespace`/`exported_pod`
/// (scraped with `honor_labels: false`) win over `namespace`/`pod` when present.
macro_rules! pod_labels {
    ($e:literal) => {
        concat!(
            r#"label_replace(label_replace("#,
            $e,
            r#", "namespace", "$1", "exported_namespace", "(.+)"), "pod", "$1", "exported_pod", "(.+)")"#
        )
    };
}

/// Requests of running pods, sampled every 5 minutes and averaged over the hour
/// (a pod that ran half the hour counts half).
pub const DEFAULT_ALLOCATED: &str = concat!(
    "sum_over_time((sum by (namespace, node, resource) (\n  ",
    pod_labels!(
        r#"kube_pod_container_resource_requests{resource=~"nvidia_com_gpu|nvidia_com_mig_.+", $cluster}"#
    ),
    "\n  * on (namespace, pod) group_left ()\n  max by (namespace, pod) (",
    pod_labels!(r#"kube_pod_status_phase{phase="Running", $cluster} == 1"#),
    ")\n))[59m59s:5m]) / 12"
);

/// DCGM activity per GPU (graphics engine active where the GPU reports it, else
/// the coarser GPU utilization), sampled every 5 minutes and averaged over the hour.
pub const DEFAULT_USED: &str = concat!(
    "sum_over_time((sum by (namespace, node, profile) (\n  ",
    r#"label_replace(label_replace("#,
    pod_labels!(
        r#"DCGM_FI_PROF_GR_ENGINE_ACTIVE{$cluster} or DCGM_FI_DEV_GPU_UTIL{$cluster} / 100"#
    ),
    r#", "node", "$1", "Hostname", "(.+)"), "profile", "$1", "GPU_I_PROFILE", "(.+)")"#,
    "\n))[59m59s:5m]) / 12"
);

/// Nodes and their labels at any moment of the hour.
pub const DEFAULT_NODES: &str = "last_over_time(kube_node_labels{$cluster}[59m59s])";

fn d_allocated() -> String {
    DEFAULT_ALLOCATED.into()
}
fn d_used() -> String {
    DEFAULT_USED.into()
}
fn d_nodes() -> String {
    DEFAULT_NODES.into()
}

/// What makes `url` unusable as a Prometheus URL, by its text alone:
/// another scheme than http(s), no host, credentials, a query or a
/// fragment (`None`: usable, as far as its text goes).
pub fn url_problem(url: &str) -> Option<&'static str> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Some("it names no scheme (write http:// or https://)");
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Some("the scheme must be http or https");
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Some("credentials in the URL are not accepted");
    }
    if authority.is_empty() {
        return Some("it names no host");
    }
    if url.contains('?') || url.contains('#') {
        return Some("it must not carry a query or fragment");
    }
    // The port, when written: 1 to 65535 (99999 reads as an outage later).
    let port = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((_, after)) => after.strip_prefix(':'),
            None => return Some("its IPv6 address has no closing `]`"),
        },
        None => authority.rsplit_once(':').map(|(_, p)| p),
    };
    if let Some(p) = port
        && !(p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>().is_ok_and(|n| n > 0))
    {
        return Some("its port must be a number from 1 to 65535");
    }
    None
}

/// A URL safe to print: anything before an `@` in the authority is dropped,
/// and so is the query (`?token=...`) and the fragment: a credential may
/// sit in either.
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, after) = rest.split_at(end);
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let path_end = after.find(['?', '#']).unwrap_or(after.len());
    let (path, tail) = after.split_at(path_end);
    let query = if tail.starts_with('?') {
        "?<redacted>"
    } else {
        ""
    };
    let sep = if scheme.is_empty() { "" } else { "://" };
    format!("{scheme}{sep}{host}{path}{query}")
}
