//! What a pull asks for: each cluster's Prometheus and label selector, the
//! hours it still needs, and the range queries (one per measurement and
//! chunk of hours) that fetch them.
//!
//! Hours are counted since the Unix epoch; a range `[start, end)` of hours is
//! fetched with evaluation times `start + 1 .. end` (each value describes the
//! hour that ends at its timestamp), step one hour, in chunks of at most
//! `chunkHours` points: Prometheus answers at most 11,000 points per series.
//! The number of queries is clusters × measurements × chunks, whatever the
//! number of teams: every query aggregates on the server.

use super::Metric;
use crate::model::Repo;
use crate::model::usage_settings::PrometheusSettings;
use thiserror::Error;

/// Hours pulled when neither the history nor the command line says where to start.
pub const DEFAULT_SINCE_HOURS: i64 = 90 * 24;
/// The most points Prometheus returns for one series of a range query.
pub const PROMETHEUS_MAX_POINTS: i64 = 11_000;

/// Why a pull cannot be planned (invalid input: exit 2).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlanError {
    #[error("cluster `{cluster}` has no Prometheus to read from")]
    NoUrl { cluster: String },
    #[error("`{name}` is not a Cluster of the repository")]
    UnknownCluster { name: String, known: Vec<String> },
    #[error("`{url}` is not a usable Prometheus URL: {reason}")]
    BadUrl { url: String, reason: String },
    #[error(
        "query `{metric}` has no `$cluster` placeholder, but the Prometheus at {url} serves several clusters"
    )]
    MissingPlaceholder { metric: &'static str, url: String },
    #[error("{flag} {from} is not before --to {to}: no hour to pull")]
    EmptyRange {
        flag: &'static str,
        from: String,
        to: String,
    },
}

impl PlanError {
    /// A stable code for JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            PlanError::NoUrl { .. } => "prometheus-url-missing",
            PlanError::UnknownCluster { .. } => "unknown-cluster",
            PlanError::BadUrl { .. } => "prometheus-url-invalid",
            PlanError::MissingPlaceholder { .. } => "query-without-cluster",
            PlanError::EmptyRange { .. } => "empty-range",
        }
    }

    /// What to do about it.
    pub fn help(&self) -> String {
        match self {
            PlanError::NoUrl { .. } => "pass --prometheus URL, or set `usage.prometheus.url` in capops.yaml or `prometheus.url` on the Cluster".into(),
            PlanError::UnknownCluster { name, known } => {
                crate::diag::suggest(name, known.iter().map(String::as_str), "clusters")
            }
            PlanError::BadUrl { .. } => "write it as http(s)://host[:port][/path]; put a token in the environment variable `usage.prometheus.tokenEnv` names, never in the URL".into(),
            PlanError::MissingPlaceholder { .. } => "add `$cluster` inside the selectors of the query's metrics, e.g. `metric{$cluster}`; it becomes the cluster's label matcher".into(),
            PlanError::EmptyRange { flag, .. } => {
                format!("{flag} must be before --to (or leave --to out: up to the last whole hour)")
            }
        }
    }
}

/// Where one cluster's metrics are read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub cluster: String,
    /// Base URL of the Prometheus HTTP API, as configured (no trailing slash).
    pub url: String,
    /// Label matcher that selects the cluster (`cluster="prod-h100"`), or empty.
    pub matcher: String,
}

/// The Prometheus of each cluster (all of them, or `only`), in name order.
/// `url_override` (`--prometheus`) replaces the Config's shared URL.
pub fn targets(
    repo: &Repo,
    settings: &PrometheusSettings,
    url_override: Option<&str>,
    only: Option<&str>,
) -> Result<Vec<Target>, PlanError> {
    if let Some(name) = only
        && !repo.clusters.contains_key(name)
    {
        return Err(PlanError::UnknownCluster {
            name: name.to_string(),
            known: repo.clusters.keys().cloned().collect(),
        });
    }
    let shared = url_override.or(settings.url.as_ref().map(|u| u.value.as_str()));
    let mut out = Vec::new();
    for (name, doc) in &repo.clusters {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let own = doc.spec.prometheus.as_ref();
        let own_url = own.and_then(|p| p.url.as_ref().map(|u| u.value.as_str()));
        let label_value = own.and_then(|p| p.cluster_label_value.as_deref());
        let (url, value) = match (own_url, shared) {
            (Some(u), _) => (u, label_value),
            (None, Some(u)) => (u, Some(label_value.unwrap_or(name))),
            (None, None) => {
                return Err(PlanError::NoUrl {
                    cluster: name.clone(),
                });
            }
        };
        check_url(url)?;
        let matcher = value
            .map(|v| format!("{}=\"{}\"", settings.cluster_label, escape(v)))
            .unwrap_or_default();
        out.push(Target {
            cluster: name.clone(),
            url: url.trim_end_matches('/').to_string(),
            matcher,
        });
    }
    Ok(out)
}

/// Accepts `http(s)://authority[/path]` without credentials, query or fragment.
pub fn check_url(url: &str) -> Result<(), PlanError> {
    let bad = |reason: &str| PlanError::BadUrl {
        url: redact(url),
        reason: reason.into(),
    };
    if let Some((scheme, _)) = url.split_once("://")
        && !scheme.eq_ignore_ascii_case("http")
        && !scheme.eq_ignore_ascii_case("https")
    {
        return Err(bad("the scheme must be http or https"));
    }
    if let Some(reason) = crate::model::usage_settings::url_problem(url) {
        return Err(bad(reason));
    }
    let uri: hyper::Uri = url.parse().map_err(|_| bad("it does not parse as a URL"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        _ => return Err(bad("the scheme must be http or https")),
    }
    let Some(authority) = uri.authority() else {
        return Err(bad("it names no host"));
    };
    if authority.as_str().contains('@') {
        return Err(bad("credentials in the URL are not accepted"));
    }
    if uri.query().is_some() || url.contains('#') {
        return Err(bad("it must not carry a query or fragment"));
    }
    Ok(())
}

pub use crate::model::usage_settings::redact_url as redact;

/// Escapes a PromQL double-quoted string.
fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"")
}

/// A query template with `$cluster` replaced by the target's matcher.
pub fn expand(template: &str, matcher: &str) -> String {
    template.replace("$cluster", matcher)
}

/// How the hours to pull are chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Range {
    /// First hour wanted (`--from`), if given.
    pub from: Option<i64>,
    /// Hours back from `to` (`--since`), if given.
    pub since: Option<i64>,
    /// First hour after the pull (`--to`, default the current hour, which is not complete).
    pub to: i64,
    /// Rewrite committed hours from this one on (`--rewrite-from`).
    pub rewrite_from: Option<i64>,
}

/// Hours `[start, end)` a cluster needs, given its last committed hour; None
/// when it is up to date. Without `--rewrite-from` it starts after the last
/// committed hour, so committed hours are never fetched again.
pub fn window(range: &Range, last_committed: Option<i64>) -> Option<(i64, i64)> {
    let start = match range.rewrite_from {
        Some(r) => r,
        None => {
            let lower = range.from.or(range.since.map(|s| range.to - s));
            match (lower, last_committed) {
                (Some(l), Some(last)) => l.max(last + 1),
                (Some(l), None) => l,
                (None, Some(last)) => last + 1,
                (None, None) => range.to - DEFAULT_SINCE_HOURS,
            }
        }
    };
    (start < range.to).then_some((start, range.to))
}

/// Splits `[start, end)` into chunks of at most `max` hours.
pub fn chunks(start: i64, end: i64, max: u32) -> Vec<(i64, i64)> {
    let max = i64::from(max.max(1)).min(PROMETHEUS_MAX_POINTS - 1);
    let mut out = Vec::new();
    let mut s = start;
    while s < end {
        let e = (s + max).min(end);
        out.push((s, e));
        s = e;
    }
    out
}

/// One range query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    pub cluster: String,
    pub metric: Metric,
    /// Hours `[start, end)` it covers.
    pub hours: (i64, i64),
    pub url: String,
    pub promql: String,
}

impl Query {
    /// First evaluation time, in seconds.
    pub fn start_seconds(&self) -> i64 {
        (self.hours.0 + 1) * 3600
    }
    /// Last evaluation time, in seconds (inclusive).
    pub fn end_seconds(&self) -> i64 {
        self.hours.1 * 3600
    }
    /// Points per series: one per hour.
    pub fn points(&self) -> i64 {
        self.hours.1 - self.hours.0
    }
}

/// The queries for one cluster's hours: every measurement for every chunk.
pub fn queries(
    target: &Target,
    hours: (i64, i64),
    settings: &PrometheusSettings,
) -> Result<Vec<Query>, PlanError> {
    let mut out = Vec::new();
    for metric in Metric::ALL {
        let template = match metric {
            Metric::Allocated => &settings.queries.allocated,
            Metric::Used => &settings.queries.used,
            Metric::Nodes => &settings.queries.nodes,
        };
        if !target.matcher.is_empty() && !template.contains("$cluster") {
            return Err(PlanError::MissingPlaceholder {
                metric: metric.as_str(),
                url: redact(&target.url),
            });
        }
        let promql = expand(template, &target.matcher);
        for chunk in chunks(hours.0, hours.1, settings.chunk_hours) {
            out.push(Query {
                cluster: target.cluster.clone(),
                metric,
                hours: chunk,
                url: target.url.clone(),
                promql: promql.clone(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_start_after_the_last_committed_hour() {
        let r = Range {
            to: 1000,
            ..Range::default()
        };
        assert_eq!(window(&r, None), Some((1000 - 2160, 1000)));
        assert_eq!(window(&r, Some(990)), Some((991, 1000)));
        assert_eq!(window(&r, Some(999)), None);
        let since = Range {
            since: Some(24),
            ..r
        };
        assert_eq!(window(&since, Some(900)), Some((976, 1000)));
        assert_eq!(window(&since, Some(980)), Some((981, 1000)));
        let rewrite = Range {
            rewrite_from: Some(950),
            ..r
        };
        assert_eq!(window(&rewrite, Some(999)), Some((950, 1000)));
        let from = Range {
            from: Some(10),
            ..r
        };
        assert_eq!(window(&from, None), Some((10, 1000)));
    }

    #[test]
    fn chunks_stay_below_the_point_limit() {
        assert_eq!(chunks(0, 10, 4), vec![(0, 4), (4, 8), (8, 10)]);
        assert_eq!(chunks(5, 5, 4), vec![]);
        let big = chunks(0, 30_000, 10_000);
        assert_eq!(big.len(), 3);
        assert!(big.iter().all(|(s, e)| e - s < PROMETHEUS_MAX_POINTS));
        // A chunk of exactly the limit would be one point too many.
        assert!(
            chunks(0, 22_000, u32::MAX)
                .iter()
                .all(|(s, e)| e - s <= 10_999)
        );
    }

    #[test]
    fn query_times_describe_the_hour_that_ends_at_them() {
        let q = Query {
            cluster: "c".into(),
            metric: Metric::Used,
            hours: (10, 13),
            url: String::new(),
            promql: String::new(),
        };
        assert_eq!(
            (q.start_seconds(), q.end_seconds(), q.points()),
            (11 * 3600, 13 * 3600, 3)
        );
    }

    #[test]
    fn urls_are_checked_and_redacted() {
        assert!(check_url("http://127.0.0.1:9090").is_ok());
        assert!(check_url("https://prom.example.com/prometheus/").is_ok());
        assert!(check_url("ftp://x").is_err());
        // Said as what it is: a URL of another scheme, not an unparsable one.
        let e = check_url("file:///etc/passwd").unwrap_err();
        assert!(
            e.to_string().contains("the scheme must be http or https"),
            "{e}"
        );
        assert!(check_url("https://user:secret@x").is_err());
        assert!(check_url("http://x/?a=b").is_err());
        assert_eq!(redact("https://user:secret@x:9/p"), "https://x:9/p");
        let e = check_url("https://user:secret@x").unwrap_err();
        assert!(!e.to_string().contains("secret"), "{e}");
    }

    #[test]
    fn the_placeholder_becomes_an_escaped_matcher() {
        assert_eq!(
            expand(r#"m{a="b", $cluster}"#, r#"cluster="x\"y""#),
            r#"m{a="b", cluster="x\"y"}"#
        );
        assert_eq!(escape(r#"a"b\c"#), r#"a\"b\\c"#);
    }
}
