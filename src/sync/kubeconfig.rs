//! Where the kubeconfig comes from (`--kubeconfig`, `KUBECONFIG`, the home
//! folder, the in-cluster service account), how it is read and merged like
//! kubectl does (every file checked first, its text never shown), and why a
//! cluster could not be reached or used.

// An edge: it reads the kubeconfig (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use kube::config::Kubeconfig;
use std::path::PathBuf;

/// Where kubeconfigs come from: `--kubeconfig`, `KUBECONFIG` (a list
/// separated by `:`), `$HOME/.kube/config`, else the in-cluster service account.
#[derive(Clone, Debug, Default)]
pub struct Source {
    pub kubeconfig: Option<PathBuf>,
    pub env_kubeconfig: Option<String>,
    pub home: Option<PathBuf>,
    pub in_cluster: bool,
}

/// Why a cluster could not be reached or used.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error(
        "no kubeconfig: --kubeconfig is not given, KUBECONFIG is unset, ~/.kube/config does not exist and capops is not running in a cluster"
    )]
    NoKubeconfig,
    #[error("cannot read the kubeconfig {path}: {reason}")]
    Kubeconfig { path: String, reason: String },
    #[error("the kubeconfig has no context `{context}`")]
    NoContext { context: String },
    #[error("cannot use context `{context}` of the kubeconfig: {reason}")]
    BadContext { context: String, reason: String },
}

impl ConnectError {
    /// Stable code.
    pub fn code(&self) -> &'static str {
        match self {
            ConnectError::NoKubeconfig | ConnectError::Kubeconfig { .. } => "kubeconfig-invalid",
            ConnectError::NoContext { .. } | ConnectError::BadContext { .. } => {
                "kube-context-missing"
            }
        }
    }

    pub fn help(&self) -> String {
        match self {
            ConnectError::NoContext { .. } => "set the Cluster's `kubeContext` to a context of the kubeconfig (`kubectl config get-contexts`), or pass --kubeconfig".into(),
            ConnectError::Kubeconfig { .. } => "fix the file where the message says (`kubectl config view` reads the same), or pass --kubeconfig FILE / set KUBECONFIG to another".into(),
            ConnectError::BadContext { reason, .. } => {
                let r = reason.to_ascii_lowercase();
                if r.contains("gave no credential within") {
                    format!("the credential plugin may be waiting for a login or a network: log in first (run it by hand), or give it longer with {}=SECONDS", crate::sync::credential_plugin::TIMEOUT_VARIABLE)
                } else if r.contains("interactivemode: always") {
                    "run capops at a terminal, or set the user's `interactiveMode` to `IfAvailable` or `Never` if the plugin can log in without one".into()
                } else if r.contains("auth-provider: azure") {
                    "replace the user's `auth-provider` by kubelogin's `exec` entry (`kubelogin convert-kubeconfig` writes it)".into()
                } else if r.contains("auth-provider") {
                    "replace the user's `auth-provider` by the `exec` entry the plugin's install prints (`gke-gcloud-auth-plugin`: `gcloud container clusters get-credentials` writes it)".into()
                } else if r.contains("credential plugin") || r.contains("exec") {
                    "run the user's credential plugin (its `exec` command in the kubeconfig) by hand to see why it fails; capops does not show its output, which may hold credentials".into()
                } else if r.contains("proxy") {
                    "capops does not connect through a kubeconfig's `proxy-url`: reach the API server directly (a VPN or an SSH tunnel), or remove `proxy-url` from the cluster entry".into()
                } else if r.contains("cluster") {
                    "make the context's `cluster` name a cluster entry of the kubeconfig (`kubectl config view`)".into()
                } else {
                    "fix the context in the kubeconfig (`kubectl config view`), or pass --kubeconfig FILE / set KUBECONFIG to another".into()
                }
            }
            ConnectError::NoKubeconfig => "pass --kubeconfig FILE or set KUBECONFIG".into(),
        }
    }
}

/// The kubeconfig the source names, merged like kubectl does.
pub fn load(source: &Source) -> Result<Option<Kubeconfig>, ConnectError> {
    let mut paths: Vec<PathBuf> = Vec::new();
    if let Some(p) = &source.kubeconfig {
        paths.push(p.clone());
    } else if let Some(list) = source.env_kubeconfig.as_deref().filter(|s| !s.is_empty()) {
        paths.extend(list.split(':').filter(|s| !s.is_empty()).map(PathBuf::from));
    } else if let Some(home) = &source.home {
        let p = home.join(".kube/config");
        if p.is_file() {
            paths.push(p);
        }
    }
    if paths.is_empty() {
        return if source.in_cluster {
            Ok(None)
        } else {
            Err(ConnectError::NoKubeconfig)
        };
    }
    let mut merged: Option<Kubeconfig> = None;
    for p in &paths {
        // A FIFO, socket or device would block the read forever (or never end).
        if std::fs::metadata(p).is_ok_and(|m| !m.is_file()) {
            return Err(ConnectError::Kubeconfig {
                path: p.display().to_string(),
                reason: "it is not a regular file (a folder, FIFO, socket or device)".into(),
            });
        }
        // What is wrong and where, never the text (it may hold a token).
        // An empty file among several is merged as nothing, as kubectl does.
        match super::kubeconfig_check::precheck(p) {
            Ok(()) => {}
            Err(reason) if reason == super::kubeconfig_check::EMPTY && paths.len() > 1 => continue,
            Err(reason) => {
                return Err(ConnectError::Kubeconfig {
                    path: p.display().to_string(),
                    reason,
                });
            }
        }
        let kc = Kubeconfig::read_from(p).map_err(|e| ConnectError::Kubeconfig {
            path: p.display().to_string(),
            reason: match e {
                kube::config::KubeconfigError::ReadConfig(io, _) => io.to_string(),
                other => super::kubeconfig_check::kube_refusal(&other.to_string()),
            },
        })?;
        if let Some(reason) = super::kubeconfig_check::duplicate_problem(&kc) {
            return Err(ConnectError::Kubeconfig {
                path: p.display().to_string(),
                reason,
            });
        }
        merged = Some(match merged {
            None => kc,
            Some(m) => m.merge(kc).map_err(|e| ConnectError::Kubeconfig {
                path: p.display().to_string(),
                reason: e.to_string(),
            })?,
        });
    }
    if let Some(kc) = &merged
        && let Some(reason) = super::kubeconfig_check::referenced_file_problem(kc)
            .or_else(|| super::kubeconfig_check::token_problem(kc))
    {
        return Err(ConnectError::Kubeconfig {
            path: paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(":"),
            reason,
        });
    }
    match merged {
        // Every file of the list empty.
        None => Err(ConnectError::Kubeconfig {
            path: paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(":"),
            reason: super::kubeconfig_check::EMPTY.into(),
        }),
        some => Ok(some),
    }
}
