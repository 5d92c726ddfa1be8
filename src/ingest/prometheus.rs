//! The Prometheus HTTP API client of `capops usage pull` (the I/O edge).
//!
//! Each query is one `POST /api/v1/query_range` (form-encoded, so long
//! queries do not meet URL length limits), step one hour, sent through the
//! hyper/rustls stack kube already brings. Every call has a timeout and is
//! tried at most [`ATTEMPTS`] times, with a short backoff, when the server
//! cannot be reached, times out, or answers 429 or 5xx; a query Prometheus
//! rejects (400) is not retried. A few queries run at once. The bearer token
//! is sent in the `Authorization` header and never appears in an error: errors
//! name the URL (credentials are refused in URLs) and the status.

use super::Metric;
use super::matrix::{self, Answer, Series};
use super::plan::{Query, redact};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Tries per query.
pub const ATTEMPTS: u32 = 3;
/// Queries in flight at once.
pub const CONCURRENCY: usize = 4;
/// The largest answer read (a larger one asks for smaller chunks).
pub const MAX_BODY_BYTES: usize = 512 << 20;
/// What an answer over [`MAX_BODY_BYTES`] is said to be.
const TOO_LARGE: &str = "the answer is larger than capops reads";

/// Why a pull could not read Prometheus.
#[derive(Debug, Error)]
pub enum FetchError {
    #[error("Prometheus at {url} did not answer: {reason} ({attempts} attempts)")]
    Unreachable {
        url: String,
        reason: String,
        attempts: u32,
    },
    #[error("Prometheus at {url} did not answer within {seconds} s ({attempts} attempts)")]
    Timeout {
        url: String,
        seconds: u64,
        attempts: u32,
    },
    #[error("Prometheus at {url} answered HTTP {status} to query `{metric}`: {message}")]
    Status {
        url: String,
        metric: &'static str,
        status: u16,
        message: String,
    },
    #[error("Prometheus at {url} rejected query `{metric}`: {message}")]
    BadQuery {
        url: String,
        metric: &'static str,
        message: String,
    },
    #[error("Prometheus at {url} sent an answer to query `{metric}` capops cannot read: {detail}")]
    BadAnswer {
        url: String,
        metric: &'static str,
        detail: String,
    },
    #[error("the CA file {path} holds no usable certificate: {detail}")]
    CaFile { path: String, detail: String },
    #[error("cannot start the HTTP client: {0}")]
    Client(String),
}

impl FetchError {
    /// A stable code for JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            FetchError::Unreachable { .. } => "prometheus-unreachable",
            FetchError::Timeout { .. } => "prometheus-timeout",
            FetchError::Status { .. } => "prometheus-status",
            FetchError::BadQuery { .. } => "prometheus-bad-query",
            FetchError::BadAnswer { .. } => "prometheus-bad-answer",
            FetchError::CaFile { .. } => "prometheus-ca-file",
            FetchError::Client(_) => "prometheus-client",
        }
    }

    /// Whether the fault is in capops' input (a query or a CA file) rather than outside.
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            FetchError::BadQuery { .. } | FetchError::CaFile { .. }
        )
    }

    /// What to do about it.
    pub fn help(&self) -> &'static str {
        match self {
            FetchError::Unreachable { .. } | FetchError::Timeout { .. } => {
                "check the URL and that Prometheus is up; nothing was written, run the pull again"
            }
            FetchError::Status {
                status: 401 | 403, ..
            } => {
                "the server wants a token: put it in the environment variable `usage.prometheus.tokenEnv` names (default CAPOPS_PROMETHEUS_TOKEN)"
            }
            FetchError::Status { status: 422, .. } => {
                "the query failed while running; lower `usage.prometheus.chunkHours` if it loads too many samples"
            }
            FetchError::BadAnswer { detail, .. } if detail.starts_with(TOO_LARGE) => {
                "lower `usage.prometheus.chunkHours` (docs/usage.md): each query then asks for fewer hours"
            }
            FetchError::Status { .. } | FetchError::BadAnswer { .. } => {
                "check that the URL points at the Prometheus HTTP API (the part before /api/v1)"
            }
            FetchError::BadQuery { .. } => {
                "fix the query in `usage.prometheus.queries` of capops.yaml (docs/usage.md lists what each must return)"
            }
            FetchError::CaFile { .. } => {
                "`usage.prometheus.caFile` must be a PEM file with at least one CERTIFICATE block"
            }
            FetchError::Client(_) => "this is a capops bug; please report it",
        }
    }
}

/// What the client needs besides the queries.
pub struct Options {
    /// Bearer token, sent when present.
    pub token: Option<String>,
    /// PEM bytes of extra trusted CAs, and the file they came from.
    pub ca: Option<(String, Vec<u8>)>,
    pub timeout: Duration,
}

/// Counters of one pull, for the summary and the benchmark.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Traffic {
    pub queries: usize,
    pub retries: usize,
    pub bytes: usize,
    pub seconds: f64,
    pub warnings: Vec<String>,
}

/// One query's answer, with what it cost.
#[derive(Default)]
struct Answered {
    series: Vec<Series>,
    bytes: usize,
    retries: usize,
    warnings: Vec<String>,
}

type HttpsClient = hyper_util::client::legacy::Client<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    Full<Bytes>,
>;

struct Client {
    http: HttpsClient,
    token: Option<String>,
    timeout: Duration,
}

fn tls_config(ca: Option<&(String, Vec<u8>)>) -> Result<rustls::ClientConfig, FetchError> {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    if let Some((path, pem)) = ca {
        let ca_error = |detail: String| FetchError::CaFile {
            path: path.clone(),
            detail,
        };
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| ca_error(e.to_string()))?;
            roots.add(cert).map_err(|e| ca_error(e.to_string()))?;
            added += 1;
        }
        if added == 0 {
            return Err(ca_error("no CERTIFICATE block".into()));
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| FetchError::Client(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

impl Client {
    fn new(options: &Options) -> Result<Client, FetchError> {
        let tls = tls_config(options.ca.as_ref())?;
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .build();
        let http =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build(connector);
        Ok(Client {
            http,
            token: options.token.clone(),
            timeout: options.timeout,
        })
    }

    /// One range query, with retries; what the server says (its errors,
    /// warnings, the start of an answer that does not read) never shows the
    /// token, which a server or proxy may quote back.
    async fn query_range(&self, q: &Query) -> Result<Answered, FetchError> {
        let secrets: Vec<String> = self.token.iter().cloned().collect();
        let hide = |t: String| crate::output::redact::scrub_text(&secrets, &t);
        match self.query_range_as_said(q).await {
            Ok(mut a) => {
                a.warnings = a.warnings.into_iter().map(hide).collect();
                Ok(a)
            }
            Err(FetchError::Unreachable {
                url,
                reason,
                attempts,
            }) => Err(FetchError::Unreachable {
                url,
                reason: hide(reason),
                attempts,
            }),
            Err(FetchError::Status {
                url,
                metric,
                status,
                message,
            }) => Err(FetchError::Status {
                url,
                metric,
                status,
                message: hide(message),
            }),
            Err(FetchError::BadQuery {
                url,
                metric,
                message,
            }) => Err(FetchError::BadQuery {
                url,
                metric,
                message: hide(message),
            }),
            Err(FetchError::BadAnswer {
                url,
                metric,
                detail,
            }) => Err(FetchError::BadAnswer {
                url,
                metric,
                detail: hide(detail),
            }),
            Err(other) => Err(other),
        }
    }

    async fn query_range_as_said(&self, q: &Query) -> Result<Answered, FetchError> {
        let url = redact(&q.url);
        let endpoint = format!("{}/api/v1/query_range", q.url);
        let body = form(&[
            ("query", &q.promql),
            ("start", &q.start_seconds().to_string()),
            ("end", &q.end_seconds().to_string()),
            ("step", "3600"),
        ]);
        let mut last_reason = String::new();
        let mut timed_out = false;
        for attempt in 1..=ATTEMPTS {
            if attempt > 1 {
                tokio::time::sleep(Duration::from_millis(250 << (attempt - 2))).await;
            }
            let mut req = hyper::Request::post(&endpoint)
                .header("content-type", "application/x-www-form-urlencoded")
                .header("accept", "application/json")
                .header("user-agent", concat!("capops/", env!("CARGO_PKG_VERSION")));
            if let Some(t) = &self.token {
                req = req.header("authorization", format!("Bearer {t}"));
            }
            let req = req
                .body(Full::new(Bytes::from(body.clone())))
                .map_err(|e| FetchError::Client(e.to_string()))?;
            let sent = tokio::time::timeout(self.timeout, async {
                let resp = self.http.request(req).await.map_err(|e| describe(&e))?;
                let status = resp.status().as_u16();
                let bytes = Limited::new(resp.into_body(), MAX_BODY_BYTES)
                    .collect()
                    .await
                    .map_err(|e| {
                        if e.is::<http_body_util::LengthLimitError>() {
                            TOO_LARGE.to_string()
                        } else {
                            format!("reading the answer failed: {e}")
                        }
                    })?
                    .to_bytes();
                Ok::<_, String>((status, bytes))
            })
            .await;
            let (status, bytes) = match sent {
                Err(_) => {
                    timed_out = true;
                    continue;
                }
                // Too large: asked again it would be as large.
                Ok(Err(reason)) if reason == TOO_LARGE => {
                    return Err(FetchError::BadAnswer {
                        url,
                        metric: q.metric.as_str(),
                        detail: format!(
                            "{TOO_LARGE} ({} MiB): lower `usage.prometheus.chunkHours` so each query asks for fewer hours",
                            MAX_BODY_BYTES >> 20
                        ),
                    });
                }
                Ok(Err(reason)) => {
                    timed_out = false;
                    last_reason = reason;
                    continue;
                }
                Ok(Ok(x)) => x,
            };
            if status == 429 || status >= 500 {
                timed_out = false;
                last_reason = format!("HTTP {status}");
                if attempt < ATTEMPTS {
                    continue;
                }
            }
            let parsed = matrix::parse(&bytes);
            return match (status, parsed) {
                (200, Ok(Answer::Matrix { series, warnings })) => Ok(Answered {
                    series,
                    bytes: bytes.len(),
                    retries: (attempt - 1) as usize,
                    warnings,
                }),
                (400, Ok(Answer::Error { message, .. })) => Err(FetchError::BadQuery {
                    url,
                    metric: q.metric.as_str(),
                    message,
                }),
                (
                    _,
                    Ok(Answer::Error {
                        error_type,
                        message,
                    }),
                ) => Err(FetchError::Status {
                    url,
                    metric: q.metric.as_str(),
                    status,
                    message: format!("{error_type}: {message}"),
                }),
                (200, Err(detail)) => Err(FetchError::BadAnswer {
                    url,
                    metric: q.metric.as_str(),
                    detail,
                }),
                (_, _) => Err(FetchError::Status {
                    url,
                    metric: q.metric.as_str(),
                    status,
                    message: String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
                        .trim()
                        .to_string(),
                }),
            };
        }
        Err(if timed_out {
            FetchError::Timeout {
                url,
                seconds: self.timeout.as_secs(),
                attempts: ATTEMPTS,
            }
        } else {
            FetchError::Unreachable {
                url,
                reason: last_reason,
                attempts: ATTEMPTS,
            }
        })
    }
}

/// The cause of a client error, innermost first (hyper's own text is generic).
fn describe(e: &hyper_util::client::legacy::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        parts.push(s.to_string());
        source = s.source();
    }
    parts.dedup();
    parts.join(": ")
}

/// `application/x-www-form-urlencoded`.
fn form(fields: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        encode(&mut out, k);
        out.push('=');
        encode(&mut out, v);
    }
    out
}

fn encode(out: &mut String, s: &str) {
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
}

/// One query's answer.
pub struct Fetched {
    pub cluster: String,
    pub metric: Metric,
    pub series: Vec<Series>,
}

/// Runs every query (a few at a time) and returns the answers in query order.
/// The first failure stops the pull: nothing is written from a partial answer.
pub fn fetch_all(
    queries: &[Query],
    options: &Options,
) -> Result<(Vec<Fetched>, Traffic), FetchError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| FetchError::Client(e.to_string()))?;
    let started = Instant::now();
    let client = Arc::new(Client::new(options)?);
    let result = runtime.block_on(async {
        let gate = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
        let mut set = tokio::task::JoinSet::new();
        for (i, q) in queries.iter().cloned().enumerate() {
            let client = client.clone();
            let gate = gate.clone();
            set.spawn(async move {
                let _permit = gate.acquire_owned().await;
                (i, client.query_range(&q).await)
            });
        }
        let mut answers: Vec<Option<Answered>> = (0..queries.len()).map(|_| None).collect();
        while let Some(joined) = set.join_next().await {
            let (i, r) = joined.map_err(|e| FetchError::Client(e.to_string()))?;
            match r {
                Ok(a) => answers[i] = Some(a),
                Err(e) => {
                    set.abort_all();
                    return Err(e);
                }
            }
        }
        Ok(answers)
    });
    let answers = result?;
    let mut traffic = Traffic {
        queries: queries.len(),
        ..Traffic::default()
    };
    let mut out = Vec::with_capacity(queries.len());
    for (q, a) in queries.iter().zip(answers) {
        let Answered {
            series,
            bytes,
            retries,
            warnings,
        } = a.unwrap_or_default();
        traffic.bytes += bytes;
        traffic.retries += retries;
        for w in warnings {
            if !traffic.warnings.contains(&w) {
                traffic.warnings.push(w);
            }
        }
        out.push(Fetched {
            cluster: q.cluster.clone(),
            metric: q.metric,
            series,
        });
    }
    traffic.seconds = started.elapsed().as_secs_f64();
    Ok((out, traffic))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_are_percent_encoded() {
        assert_eq!(
            form(&[("query", r#"sum(m{a="b c"}) / 12"#), ("step", "3600")]),
            "query=sum%28m%7Ba%3D%22b+c%22%7D%29+%2F+12&step=3600"
        );
    }
}
