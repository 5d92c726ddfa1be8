//! Where `capops usage pull` reads from, checked where it is written: a
//! Prometheus URL with credentials in it would be committed to the
//! repository (and pass every pull request's check until the next pull
//! refused it), and a CA file outside the repository reads whatever the
//! machine running the pull holds.

use crate::diag::{Code, Diagnostic};
use crate::model::{Repo, Spanned};

/// Checks the Config's `usage.prometheus` and each Cluster's `prometheus`.
pub fn check(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    if let Some(config) = &repo.config {
        let p = &config.spec.usage.prometheus;
        if let Some(url) = &p.url {
            check_url(url, "usage.prometheus.url", diags);
        }
        if let Some(ca) = &p.ca_file {
            check_ca_file(ca, diags);
        }
    }
    for c in repo.clusters.values() {
        if let Some(url) = c.spec.prometheus.as_ref().and_then(|p| p.url.as_ref()) {
            check_url(url, "prometheus.url", diags);
        }
    }
}

fn check_url(url: &Spanned<String>, field: &str, diags: &mut Vec<Diagnostic>) {
    use crate::model::usage_settings::{redact_url, url_problem};
    if let Some(reason) = url_problem(&url.value) {
        let shown = redact_url(&url.value);
        diags.push(
            Diagnostic::new(
                Code::PrometheusUrlInvalid,
                format!("`{field}` `{shown}` is not a usable Prometheus URL: {reason}"),
            )
            .at(url.span, "not usable")
            .help("write it as http(s)://host[:port][/path]; a token goes in the environment variable `usage.prometheus.tokenEnv` names, never in the repository"),
        );
    }
}

/// Whether a path names a file inside the repository: relative, not
/// through `..`, no drive or UNC prefix, not blank.
pub fn inside_repository(p: &str) -> bool {
    let path = std::path::Path::new(p);
    !(path.is_absolute()
        || p.starts_with('\\')
        || p.contains(':')
        || p.trim().is_empty()
        || path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir)))
}

fn check_ca_file(ca: &Spanned<String>, diags: &mut Vec<Diagnostic>) {
    if !inside_repository(&ca.value) {
        diags.push(
            Diagnostic::new(
                Code::PrometheusUrlInvalid,
                format!(
                    "`usage.prometheus.caFile` `{}` is not a path inside the repository",
                    ca.value.escape_debug()
                ),
            )
            .at(ca.span, "outside the repository")
            .help("commit the CA's PEM file to the repository and name it relative to its root, as `certs/prometheus-ca.pem`"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Span;

    fn s(v: &str) -> Spanned<String> {
        Spanned::new(v.to_string(), Span::default())
    }

    #[test]
    fn credentials_and_paths_outside_the_repository_are_refused() {
        let mut d = Vec::new();
        check_url(
            &s("http://u:secretpw@127.0.0.1:9"),
            "usage.prometheus.url",
            &mut d,
        );
        assert_eq!(d.len(), 1);
        assert!(!d[0].message.contains("secretpw"), "{}", d[0].message);
        assert!(d[0].message.contains("credentials"), "{}", d[0].message);
        check_url(
            &s("https://prometheus.example:9090/prom"),
            "prometheus.url",
            &mut d,
        );
        assert_eq!(d.len(), 1);
        for bad in [
            "/etc/shadow",
            "../ca.pem",
            "certs/../../ca.pem",
            "C:\\ca.pem",
            " ",
        ] {
            let mut d = Vec::new();
            check_ca_file(&s(bad), &mut d);
            assert_eq!(d.len(), 1, "{bad}");
        }
        let mut d = Vec::new();
        check_ca_file(&s("certs/prometheus-ca.pem"), &mut d);
        assert!(d.is_empty());
    }
}
