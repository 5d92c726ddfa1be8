//! Where `capops usage pull` reads from, checked where it is written: a
//! Prometheus URL with credentials in it would be committed to the
//! repository (and pass every pull request's check until the next pull
//! refused it).

use crate::diag::{Code, Diagnostic};
use crate::model::{Repo, Spanned};

/// Checks the Config's `usage.prometheus` and each Cluster's `prometheus`.
pub fn check(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    if let Some(config) = &repo.config {
        let p = &config.spec.usage.prometheus;
        if let Some(url) = &p.url {
            check_url(url, "usage.prometheus.url", diags);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Span;

    fn s(v: &str) -> Spanned<String> {
        Spanned::new(v.to_string(), Span::default())
    }

    #[test]
    fn credentials_in_the_url_are_refused_and_never_shown() {
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
            "http://127.0.0.1:99999",
            "http://h:0",
            "http://h:9x",
            "http://[::1:9090",
        ] {
            check_url(&s(bad), "prometheus.url", &mut d);
        }
        assert_eq!(d.len(), 5);
        assert!(d[1].message.contains("port"), "{}", d[1].message);
        check_url(&s("http://[::1]:9090"), "prometheus.url", &mut d);
        check_url(&s("http://h/"), "prometheus.url", &mut d);
        assert_eq!(d.len(), 5);
    }
}
