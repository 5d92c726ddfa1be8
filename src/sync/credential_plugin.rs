//! A kubeconfig user's credential plugin (`users[].user.exec`: `aws eks
//! get-token`, `gke-gcloud-auth-plugin`, `kubelogin`), run by capops itself
//! rather than by kube, so that it is bounded:
//!
//! - with a deadline ([`TIMEOUT`], five minutes when a person may be logging
//!   in at a terminal, `CAPOPS_CREDENTIAL_PLUGIN_TIMEOUT` seconds when set):
//!   a plugin that never answers (a login waiting for a browser in CI) would
//!   otherwise hang `plan`, `apply`, `drift` and `verify` for ever; past it the
//!   plugin is killed and the cluster is reported unreachable;
//! - once per user, however many clusters share it, and one at a time, so two
//!   logins never prompt on one terminal at once;
//! - interactive as client-go decides (`interactiveMode: Never` never,
//!   `IfAvailable` only when standard input is a terminal, `Always` needs
//!   one): stdin and stderr are the terminal's only then; otherwise the
//!   plugin's stderr is discarded;
//! - its output, which holds the credential, is never shown, and at most
//!   1 MiB of it is read;
//! - again when the credential it gave is within a minute of its
//!   `expirationTimestamp` (kube would refresh it the same way).
//!
//! The protocol is Kubernetes' `client.authentication.k8s.io` ExecCredential:
//! `KUBERNETES_EXEC_INFO` in the environment, an ExecCredential (JSON, or YAML
//! as some plugins print) on stdout with a token or a client certificate and key.

// An edge: it runs the user's credential plugin (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use kube::config::{AuthInfo, ExecConfig, ExecInteractiveMode};
use secrecy::{ExposeSecret, SecretString};
use std::collections::HashMap;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a plugin may take when nobody can be logging in.
pub const TIMEOUT: Duration = Duration::from_secs(60);
/// How long a plugin may take when it may prompt a person at the terminal.
pub const INTERACTIVE_TIMEOUT: Duration = Duration::from_secs(300);
/// The environment variable that sets both, in seconds.
pub const TIMEOUT_VARIABLE: &str = "CAPOPS_CREDENTIAL_PLUGIN_TIMEOUT";
/// A credential this close to its expiry is fetched again.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(60);
/// The most of a plugin's output read.
const MAX_OUTPUT: u64 = 1 << 20;

/// What a plugin issued: a bearer token, or a client certificate and key
/// (PEM), and when it expires. (Its `Debug` shows no secret.)
#[derive(Clone, Debug)]
pub struct Credential {
    pub token: Option<SecretString>,
    pub certificate: Option<(String, SecretString)>,
    pub expires: Option<jiff::Timestamp>,
}

impl Credential {
    /// Whether it must be fetched again at `now`.
    pub fn stale(&self, now: jiff::Timestamp) -> bool {
        stale(self.expires, now)
    }

    /// `info` with the plugin replaced by what it issued (kube reads a
    /// client certificate and key as base64 of their PEM).
    pub fn apply_to(&self, info: &mut AuthInfo) {
        use base64::Engine;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s.as_bytes());
        info.exec = None;
        if let Some(t) = &self.token {
            info.token = Some(t.clone());
        }
        if let Some((cert, key)) = &self.certificate {
            info.client_certificate = None;
            info.client_key = None;
            info.client_certificate_data = Some(b64(cert));
            info.client_key_data = Some(SecretString::from(b64(key.expose_secret())));
        }
    }
}

/// Whether a credential expiring at `expires` must be fetched again at `now`.
fn stale(expires: Option<jiff::Timestamp>, now: jiff::Timestamp) -> bool {
    expires.is_some_and(|e| {
        let margin = jiff::SignedDuration::try_from(REFRESH_MARGIN).unwrap_or_default();
        now.checked_add(margin).ok().is_none_or(|n| n >= e)
    })
}

/// A connection's client while its credential comes from a plugin: the
/// configuration without the credential, and the client built with the
/// credential last issued, rebuilt when that nears its expiry.
pub struct Renewing {
    base: kube::Config,
    exec: ExecConfig,
    plugins: std::sync::Arc<Plugins>,
    current: tokio::sync::Mutex<(kube::Client, Option<jiff::Timestamp>)>,
}

impl Renewing {
    /// For a configuration whose user has a plugin: runs it (or takes what
    /// it issued for another cluster) and writes the credential into
    /// `config`. `Ok(None)`: the user has no plugin, `config` is untouched.
    /// The client is made by the caller from `config`, then [`Renewing::start`].
    pub async fn credential(
        plugins: &std::sync::Arc<Plugins>,
        config: &mut kube::Config,
    ) -> Result<Option<(kube::Config, ExecConfig, Credential)>, PluginError> {
        if let Some(p) = &config.auth_info.auth_provider
            && ["gcp", "azure"]
                .iter()
                .any(|n| p.name.eq_ignore_ascii_case(n))
        {
            return Err(PluginError::ProviderRemoved {
                name: p.name.to_ascii_lowercase(),
            });
        }
        let Some(exec) = config.auth_info.exec.clone() else {
            return Ok(None);
        };
        let base = config.clone();
        let c = plugins.credential(&exec, jiff::Timestamp::now).await?;
        c.apply_to(&mut config.auth_info);
        Ok(Some((base, exec, c)))
    }

    pub fn start(
        plugins: std::sync::Arc<Plugins>,
        (base, exec, c): (kube::Config, ExecConfig, Credential),
        client: kube::Client,
    ) -> Renewing {
        Renewing {
            base,
            exec,
            plugins,
            current: tokio::sync::Mutex::new((client, c.expires)),
        }
    }

    /// The client to call with now: rebuilt with a fresh credential when
    /// the last one is near its expiry.
    pub async fn client(&self) -> Result<kube::Client, String> {
        let mut cur = self.current.lock().await;
        if stale(cur.1, jiff::Timestamp::now()) {
            let c = self
                .plugins
                .credential(&self.exec, jiff::Timestamp::now)
                .await
                .map_err(|e| e.to_string())?;
            let mut config = self.base.clone();
            c.apply_to(&mut config.auth_info);
            let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
            *cur = (client, c.expires);
        }
        Ok(cur.0.clone())
    }
}

/// Why a plugin gave no credential. Never holds its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginError {
    NoCommand,
    NotStarted {
        command: String,
        reason: String,
    },
    TimedOut {
        command: String,
        after: Duration,
    },
    Failed {
        command: String,
        status: String,
    },
    NeedsTerminal {
        command: String,
    },
    BadOutput {
        command: String,
        reason: String,
    },
    /// A legacy `auth-provider` Kubernetes 1.26 removed from client-go
    /// (kube would run its `cmd-path` with no deadline).
    ProviderRemoved {
        name: String,
    },
}

impl std::fmt::Display for PluginError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PluginError::NoCommand => {
                f.write_str("the user's credential plugin (`exec`) names no command")
            }
            PluginError::NotStarted { command, reason } => {
                write!(
                    f,
                    "cannot start the credential plugin `{command}`: {reason}"
                )
            }
            PluginError::TimedOut { command, after } => write!(
                f,
                "the credential plugin `{command}` gave no credential within {} s and was stopped",
                after.as_secs()
            ),
            PluginError::Failed { command, status } => {
                write!(f, "the credential plugin `{command}` failed ({status})")
            }
            PluginError::NeedsTerminal { command } => write!(
                f,
                "the credential plugin `{command}` has `interactiveMode: Always`, and standard input is not a terminal"
            ),
            PluginError::ProviderRemoved { name } => write!(
                f,
                "the user's `auth-provider: {name}` was removed from kubectl and client-go in Kubernetes 1.26, and capops does not run it either; use {} as a credential plugin (`exec`)",
                if name == "gcp" {
                    "gke-gcloud-auth-plugin"
                } else {
                    "kubelogin"
                }
            ),
            PluginError::BadOutput { command, reason } => write!(
                f,
                "the credential plugin `{command}` printed no usable ExecCredential: {reason}"
            ),
        }
    }
}

/// How plugins are run for one command: the deadline, whether a person
/// may be at the terminal, and what each user's plugin answered so far.
pub struct Plugins {
    timeout: Option<Duration>,
    terminal: bool,
    answers: tokio::sync::Mutex<HashMap<String, Answer>>,
}

/// A plugin's answer and when it was given.
type Answer = (Result<Credential, PluginError>, Instant);

/// A credential is not fetched again sooner than this after it was issued,
/// however near its expiry (one issued already expired would otherwise be
/// fetched before every call).
const MIN_REFETCH: Duration = Duration::from_secs(30);

impl Plugins {
    /// `timeout` overrides both deadlines; `terminal`: standard input is one.
    pub fn new(timeout: Option<Duration>, terminal: bool) -> Plugins {
        Plugins {
            timeout,
            terminal,
            answers: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The credential for `exec`: the one issued before while it is fresh,
    /// else the plugin's answer (one plugin runs at a time). A plugin that
    /// failed or gave no answer in time is not run again in this command:
    /// every cluster of its user gets the same failure at once.
    pub async fn credential(
        &self,
        exec: &ExecConfig,
        now: impl Fn() -> jiff::Timestamp,
    ) -> Result<Credential, PluginError> {
        // The whole configuration (cluster information included) is the key:
        // two users running one command with other arguments are two logins.
        let key = format!("{exec:?}");
        let mut answers = self.answers.lock().await;
        match answers.get(&key) {
            Some((Err(e), _)) => return Err(e.clone()),
            Some((Ok(c), when)) if !c.stale(now()) || when.elapsed() < MIN_REFETCH => {
                return Ok(c.clone());
            }
            _ => {}
        }
        let (exec2, timeout, terminal) = (exec.clone(), self.timeout, self.terminal);
        let answer = tokio::task::spawn_blocking(move || run(&exec2, timeout, terminal))
            .await
            .unwrap_or_else(|e| {
                Err(PluginError::NotStarted {
                    command: exec.command.clone().unwrap_or_default(),
                    reason: e.to_string(),
                })
            });
        answers.insert(key, (answer.clone(), Instant::now()));
        answer
    }
}

/// Whether the plugin may prompt: client-go's rule.
fn interactive(exec: &ExecConfig, terminal: bool, command: &str) -> Result<bool, PluginError> {
    match exec.interactive_mode {
        Some(ExecInteractiveMode::Never) => Ok(false),
        Some(ExecInteractiveMode::Always) if !terminal => Err(PluginError::NeedsTerminal {
            command: command.to_string(),
        }),
        _ => Ok(terminal),
    }
}

/// Runs the plugin once, killing it at the deadline.
pub fn run(
    exec: &ExecConfig,
    timeout: Option<Duration>,
    terminal: bool,
) -> Result<Credential, PluginError> {
    let command = exec.command.clone().ok_or(PluginError::NoCommand)?;
    let interactive = interactive(exec, terminal, &command)?;
    let deadline = timeout.unwrap_or(if interactive {
        INTERACTIVE_TIMEOUT
    } else {
        TIMEOUT
    });
    let mut cmd = Command::new(&command);
    cmd.args(exec.args.iter().flatten());
    for vars in exec.env.iter().flatten() {
        if let (Some(n), Some(v)) = (vars.get("name"), vars.get("value")) {
            cmd.env(n, v);
        }
    }
    let mut spec = serde_json::json!({ "interactive": interactive });
    if exec.provide_cluster_info
        && let Some(c) = &exec.cluster
    {
        spec["cluster"] = serde_json::to_value(c).unwrap_or_default();
    }
    let info = serde_json::json!({
        "apiVersion": exec.api_version,
        "kind": "ExecCredential",
        "spec": spec,
    });
    cmd.env("KUBERNETES_EXEC_INFO", info.to_string());
    for v in exec.drop_env.iter().flatten() {
        cmd.env_remove(v);
    }
    cmd.stdout(Stdio::piped());
    if interactive {
        cmd.stdin(Stdio::inherit()).stderr(Stdio::inherit());
    } else {
        // Its own process group, so what it starts is stopped with it (an
        // interactive one stays in the terminal's group: it reads from it).
        use std::os::unix::process::CommandExt;
        cmd.stdin(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
    }
    let mut child = cmd.spawn().map_err(|e| PluginError::NotStarted {
        command: command.clone(),
        reason: e.to_string(),
    })?;
    let grouped = !interactive;
    // Stops the plugin and, when it has its own group, all it started.
    let stop = |child: &mut std::process::Child| {
        if grouped && let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: kill(2) on the plugin's own process group (its pid).
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = child.kill();
        let _ = child.wait();
    };
    // Read on a thread into a shared buffer: a plugin that leaves a child
    // holding its stdout open would otherwise keep the read from ending.
    let stdout = child.stdout.take();
    let buffer = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    {
        let buffer = buffer.clone();
        std::thread::spawn(move || {
            if let Some(mut s) = stdout {
                let mut chunk = [0u8; 64 << 10];
                while let Ok(n) = s.read(&mut chunk) {
                    let mut b = buffer.lock().unwrap_or_else(|p| p.into_inner());
                    if n == 0 || b.len() as u64 > MAX_OUTPUT {
                        break;
                    }
                    b.extend_from_slice(&chunk[..n]);
                }
            }
            let _ = tx.send(());
        });
    }
    let start = Instant::now();
    let timed_out = || PluginError::TimedOut {
        command: command.clone(),
        after: deadline,
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() >= deadline => {
                stop(&mut child);
                return Err(timed_out());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                stop(&mut child);
                return Err(PluginError::NotStarted {
                    command: command.clone(),
                    reason: e.to_string(),
                });
            }
        }
    };
    // It has exited: its output is what it wrote. A moment for the last of
    // it to be read; past that, whatever it left running holds the pipe
    // open and is stopped (its group), and what was read is the answer.
    if rx.recv_timeout(Duration::from_millis(500)).is_err() {
        stop(&mut child);
        let _ = rx.recv_timeout(Duration::from_millis(500));
    }
    if !status.success() {
        return Err(PluginError::Failed {
            command,
            status: status.to_string(),
        });
    }
    let out = std::mem::take(&mut *buffer.lock().unwrap_or_else(|p| p.into_inner()));
    if out.len() as u64 > MAX_OUTPUT {
        return Err(PluginError::BadOutput {
            command,
            reason: format!("it printed more than {} KiB", MAX_OUTPUT >> 10),
        });
    }
    parse(&out, exec.api_version.as_deref())
        .map_err(|reason| PluginError::BadOutput { command, reason })
}

/// An ExecCredential's status. The reason never quotes the output.
pub fn parse(out: &[u8], api_version: Option<&str>) -> Result<Credential, String> {
    let text = std::str::from_utf8(out).map_err(|_| "its output is not UTF-8".to_string())?;
    if text.trim().is_empty() {
        return Err("its output is empty".into());
    }
    let parsed = crate::load::yaml::parse(text, crate::diag::FileId(0));
    if !parsed.diagnostics.is_empty() {
        return Err("its output is not JSON (nor YAML)".into());
    }
    let doc = match parsed.documents.as_slice() {
        [one] => crate::load::json::to_json(one),
        [] => return Err("its output is empty".into()),
        _ => return Err("its output holds more than one document".into()),
    };
    if let (Some(want), Some(got)) = (api_version, doc["apiVersion"].as_str())
        && want != got
    {
        return Err(format!(
            "the kubeconfig asks for apiVersion {want}, the plugin answered {got}"
        ));
    }
    let status = doc
        .get("status")
        .filter(|s| s.is_object())
        .ok_or("it has no `status`")?;
    let text_of = |k: &str| {
        status
            .get(k)
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
    };
    // A token goes into an HTTP header: a line break or a control
    // character there would be a header of its own (kube would panic).
    let token = match text_of("token") {
        Some(t) if !super::kubeconfig_check::header_safe(t) => {
            return Err(
                "its token holds a line break, a control character or a character that is not ASCII, which no HTTP header can carry".into(),
            );
        }
        t => t.map(|t| SecretString::from(t.to_string())),
    };
    let certificate =
        match (text_of("clientCertificateData"), text_of("clientKeyData")) {
            (Some(c), Some(k)) => Some((c.to_string(), SecretString::from(k.to_string()))),
            (None, None) => None,
            _ => return Err(
                "it gives a client certificate without its key, or a key without its certificate"
                    .into(),
            ),
        };
    if token.is_none() && certificate.is_none() {
        return Err("its status has neither a token nor a client certificate and key".into());
    }
    let expires = match status.get("expirationTimestamp") {
        None | Some(serde_json::Value::Null) => None,
        Some(v) => Some(
            v.as_str()
                .and_then(|s| s.parse::<jiff::Timestamp>().ok())
                .ok_or("its `expirationTimestamp` is not an RFC 3339 time")?,
        ),
    };
    Ok(Credential {
        token,
        certificate,
        expires,
    })
}

#[cfg(test)]
#[path = "credential_plugin_tests.rs"]
mod tests;
