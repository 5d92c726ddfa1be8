//! What `plan`, `apply`, `drift` and `verify` share: loading and rendering
//! the repository in memory, the kubeconfig source from the flags and the
//! environment, connecting to each cluster, the progress bars (indicatif,
//! on a terminal only) and the async runtime the kube client needs.

use super::common::{Exit, Stop, load_valid, write_diagnostics};
use super::{Cli, Io};
use crate::diag::{Code, Diagnostic};
use crate::model::Timestamp;
use crate::model::{ClusterSpec, Document, Repo};
use crate::output::{Format, Paths};
use crate::render::{self, templates};
use crate::sync::client::{Conn, Source, normal_server};
use crate::sync::credential_plugin::Plugins;
use crate::sync::desired::{self, Desired};
use crate::sync::plan::ClusterError;
use crate::sync::run::Progress;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The flags every sync command takes.
#[derive(Debug, clap::Args)]
pub struct Common {
    /// The repository root (the folder holding capops.yaml).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Only this cluster.
    #[arg(long)]
    pub cluster: Option<String>,
    /// The moment whose desired state is synced: a date or an RFC 3339 time; default now.
    #[arg(long, value_parser = super::common::at_arg)]
    pub at: Option<Timestamp>,
    /// The kubeconfig to read (default: KUBECONFIG, then ~/.kube/config, then in-cluster).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Revision to stamp on objects instead of the one read from git.
    #[arg(long, value_parser = super::common::revision_arg)]
    pub revision: Option<String>,
    /// Clusters worked on at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub parallel: u16,
}

/// One cluster to sync.
pub struct Target {
    pub cluster: String,
    pub context: Option<String>,
    pub desired: Desired,
    pub spec: ClusterSpec,
}

impl Target {
    /// Connects to this Cluster through its context, held to its pinned
    /// API server.
    pub async fn connect(
        &self,
        kc: Option<&kube::config::Kubeconfig>,
        plugins: &Arc<Plugins>,
    ) -> Result<Conn, ClusterError> {
        let pin = self.spec.api_server.as_ref().map(|s| s.value.as_str());
        connect(kc, self.context.as_deref(), pin, plugins).await
    }
}

/// The repository rendered in memory, per cluster.
pub struct Loaded {
    pub repository: String,
    pub revision: String,
    pub at: String,
    pub targets: Vec<Target>,
    /// Every Cluster document's name and kubeContext, targets or not.
    pub contexts: Vec<(String, Option<String>)>,
}

/// Loads, validates and renders; on any error prints it and returns the exit code.
pub fn load(cli: &Cli, c: &Common, io: &mut Io<'_>) -> Result<Loaded, Stop> {
    let at = c.at.unwrap_or(io.now);
    let mut head = load_valid(cli, &c.path, "syncing", io)?;
    if let Some(name) = &c.cluster
        && !head.repo.clusters.contains_key(name)
    {
        writeln!(
            io.stderr,
            "error: --cluster `{name}` is not a cluster of the repository; {}",
            crate::diag::suggest(
                name,
                head.repo.clusters.keys().map(String::as_str),
                "clusters"
            )
        )?;
        return Err(Stop::Exit(Exit::Invalid));
    }
    let mut sources = std::mem::take(&mut head.sources);
    let mut diags = std::mem::take(&mut head.diagnostics);
    let overrides = super::render::read_templates(&c.path, &mut sources, &mut diags);
    let templates = templates::Templates::new(&overrides, &mut diags);
    let revision = match &c.revision {
        Some(r) => r.clone(),
        None => crate::load::git::revision_of(&c.path, &c.path.join("rendered")),
    };
    let opts = render::Options {
        at,
        revision: revision.clone(),
        clusters: c.cluster.clone().map(|c| [c].into()),
    };
    let mut rendered = render::render(&head.repo, &templates, &opts);
    diags.append(&mut rendered.diagnostics);
    crate::diag::normalize(&mut diags);
    if diags.iter().any(Diagnostic::is_error) || cli.format != Format::Json {
        write_diagnostics(cli, &diags, &sources, &Paths::new(&c.path), io)?;
    }
    if diags.iter().any(Diagnostic::is_error) {
        writeln!(
            io.stderr,
            "error: the repository does not render: nothing was sent to any cluster"
        )?;
        return Err(Stop::Exit(Exit::Invalid));
    }
    let repository = repository(&head.repo);
    let targets = head
        .repo
        .clusters
        .values()
        .filter(|cl| c.cluster.as_deref().is_none_or(|only| only == cl.name()))
        .map(|cl: &Document<ClusterSpec>| Target {
            cluster: cl.name().to_string(),
            context: cl.spec.kube_context.clone(),
            desired: desired::from_rendered(&rendered, cl.name(), &repository),
            spec: cl.spec.clone(),
        })
        .collect();
    let contexts = head
        .repo
        .clusters
        .values()
        .map(|cl| (cl.name().to_string(), cl.spec.kube_context.clone()))
        .collect();
    Ok(Loaded {
        repository,
        revision,
        at: at.to_string(),
        targets,
        contexts,
    })
}

/// Refuses, before any cluster is contacted, when two Cluster documents
/// reach one API server (two contexts for one server, or two Clusters
/// without `kubeContext`, both the current context). Objects carry the
/// repository, not the Cluster, so planning either would prune the other's
/// objects. Every Cluster counts, not only `--cluster`'s: syncing one alone
/// would still prune the other's.
pub fn refuse_shared_servers(
    loaded: &Loaded,
    kc: Option<&kube::config::Kubeconfig>,
    io: &mut Io<'_>,
) -> Result<(), Stop> {
    let targets: Vec<&str> = loaded.targets.iter().map(|t| t.cluster.as_str()).collect();
    refuse_shared(&loaded.contexts, &targets, kc, io)
}

/// The same for any list of Clusters and their contexts (a plan file's).
pub fn refuse_shared(
    contexts: &[(String, Option<String>)],
    targets: &[&str],
    kc: Option<&kube::config::Kubeconfig>,
    io: &mut Io<'_>,
) -> Result<(), Stop> {
    // Each Cluster's server in one spelling, and the addresses its host
    // resolves to: two names for one server (a DNS name and its IP) share
    // an address.
    type Resolved<'a> = (
        &'a (String, Option<String>),
        String,
        Vec<std::net::SocketAddr>,
    );
    let resolved: Vec<Resolved<'_>> = contexts
        .iter()
        .filter_map(|c| {
            let server = crate::sync::client::server_of(kc, c.1.as_deref())?;
            let addrs = server
                .split_once("://")
                .map(|(_, rest)| rest.split('/').next().unwrap_or(""))
                .and_then(|authority| {
                    use std::net::ToSocketAddrs;
                    let authority = authority.replace(['[', ']'], "");
                    let (host, port) = authority.rsplit_once(':')?;
                    (host, port.parse::<u16>().ok()?).to_socket_addrs().ok()
                })
                .map(|a| a.collect())
                .unwrap_or_default();
            Some((c, server, addrs))
        })
        .collect();
    // Group: same spelling, or a shared address (union by the first seen).
    let mut group: Vec<usize> = (0..resolved.len()).collect();
    for i in 0..resolved.len() {
        for j in 0..i {
            let same = resolved[i].1 == resolved[j].1
                || resolved[i].2.iter().any(|a| resolved[j].2.contains(a));
            if same {
                group[i] = group[j];
                break;
            }
        }
    }
    let mut by_server: BTreeMap<String, Vec<&(String, Option<String>)>> = BTreeMap::new();
    for (i, (c, _, _)) in resolved.iter().enumerate() {
        by_server
            .entry(resolved[group[i]].1.clone())
            .or_default()
            .push(c);
    }
    let mut shared = false;
    for (server, clusters) in by_server.iter().filter(|(_, c)| c.len() > 1) {
        if !clusters.iter().any(|(n, _)| targets.contains(&n.as_str())) {
            continue;
        }
        shared = true;
        let list: Vec<String> = clusters
            .iter()
            .map(|(n, ctx)| match ctx {
                Some(ctx) => format!("`{n}` (context `{ctx}`)"),
                None => format!("`{n}` (no kubeContext: the current context)"),
            })
            .collect();
        writeln!(
            io.stderr,
            "error[{}]: the clusters {} all reach the API server {server}: syncing one would prune the others' objects, so nothing was sent to any cluster\n  help: give each Cluster a `kubeContext` of its own that reaches its own API server, or make them one Cluster with several node pools",
            Code::KubeContextShared.as_str(),
            list.join(", "),
        )?;
    }
    if shared {
        return Err(Stop::Exit(Exit::Invalid));
    }
    Ok(())
}

/// The capacity repository's name: its Config's name.
pub fn repository(repo: &Repo) -> String {
    repo.config
        .as_ref()
        .map(|c| c.name().to_string())
        .unwrap_or_else(|| "capops".into())
}

/// Where kubeconfigs come from, from the flag and the environment.
pub fn source(c: &Common, io: &Io<'_>) -> Source {
    Source {
        kubeconfig: c.kubeconfig.clone(),
        env_kubeconfig: (io.env)("KUBECONFIG"),
        home: (io.env)("HOME").map(PathBuf::from),
        in_cluster: (io.env)("KUBERNETES_SERVICE_HOST").is_some(),
    }
}

/// Reads the kubeconfig; on failure prints why and returns exit 2.
pub fn kubeconfig(c: &Common, io: &mut Io<'_>) -> Result<Option<kube::config::Kubeconfig>, Stop> {
    match crate::sync::client::load(&source(c, io)) {
        Ok(k) => Ok(k),
        Err(e) => {
            writeln!(io.stderr, "error[{}]: {e}\n  help: {}", e.code(), e.help())?;
            Err(Stop::Exit(Exit::Invalid))
        }
    }
}

/// How credential plugins run for this command: the deadline from
/// `CAPOPS_CREDENTIAL_PLUGIN_TIMEOUT` (whole seconds), and whether a person
/// may answer a login prompt (standard input is a terminal).
pub fn plugins(io: &mut Io<'_>) -> Result<Arc<Plugins>, Stop> {
    use crate::sync::credential_plugin::TIMEOUT_VARIABLE;
    use std::io::IsTerminal;
    let timeout = match (io.env)(TIMEOUT_VARIABLE) {
        None => None,
        Some(v) => match v.trim().parse::<u64>() {
            Ok(s) if (1..=86_400).contains(&s) => Some(std::time::Duration::from_secs(s)),
            _ => {
                writeln!(
                    io.stderr,
                    "error[kubeconfig-invalid]: {TIMEOUT_VARIABLE} is `{}`, not a number of seconds\n  help: give whole seconds from 1 to 86400, or unset it (60 s; 300 s when a login may prompt at the terminal)",
                    crate::output::escape::terminal_line(&v)
                )?;
                return Err(Stop::Exit(Exit::Invalid));
            }
        },
    };
    Ok(Arc::new(Plugins::new(
        timeout,
        std::io::stdin().is_terminal(),
    )))
}

/// Connects to a cluster, or says why not: also when the Cluster pins
/// its API server (`apiServer`) and the context reaches another, before
/// anything is read from or sent to it.
pub async fn connect(
    kc: Option<&kube::config::Kubeconfig>,
    context: Option<&str>,
    pin: Option<&str>,
    plugins: &Arc<Plugins>,
) -> Result<Conn, ClusterError> {
    // The kubeconfig says which server the context reaches: a pin it
    // contradicts is refused before a credential plugin runs (it may log
    // in to the wrong cluster, or prompt). The connection is checked
    // again below (in-cluster, or a server kube resolves otherwise).
    if let (Some(pin), Some(kc)) = (pin, kc)
        && let Some(server) = crate::sync::client::server_of(Some(kc), context)
        && normal_server(pin) != server
    {
        return Err(mismatch(context, &server, pin));
    }
    let conn = Conn::connect(kc, context, plugins)
        .await
        .map_err(|e| ClusterError {
            code: match e.code() {
                "kube-context-missing" => Code::KubeContextMissing,
                _ => Code::KubeconfigInvalid,
            }
            .as_str()
            .to_string(),
            message: e.to_string(),
            help: Some(e.help()),
        })?;
    match pin {
        Some(pin) if normal_server(pin) != normal_server(&conn.server) => {
            Err(mismatch(context, &conn.server, pin))
        }
        _ => Ok(conn),
    }
}

/// The refusal of a context that reaches `server` for a Cluster pinned to `pin`.
fn mismatch(context: Option<&str>, server: &str, pin: &str) -> ClusterError {
    ClusterError {
        code: Code::ApiServerMismatch.as_str().to_string(),
        message: format!(
            "the context `{}` reaches {}, but the Cluster's apiServer is {}: nothing was read from or sent to it",
            context.unwrap_or("(current)"),
            crate::sync::secrets::without_userinfo(server),
            crate::sync::secrets::without_userinfo(pin),
        ),
        help: Some(
            "point the kubeconfig context at the Cluster's own API server (`kubectl config view --minify`), or, if the cluster moved, change the Cluster's apiServer in a reviewed pull request".into(),
        ),
    }
}

/// A runtime for the kube client; the core stays synchronous.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// A progress bar per cluster on a terminal.
pub struct Bars {
    multi: indicatif::MultiProgress,
    bars: Mutex<BTreeMap<String, indicatif::ProgressBar>>,
}

impl Bars {
    /// Bars drawn to stderr when it is a terminal and the output is for
    /// people; hidden otherwise.
    pub fn new(visible: bool) -> Bars {
        let target = if visible {
            indicatif::ProgressDrawTarget::stderr()
        } else {
            indicatif::ProgressDrawTarget::hidden()
        };
        Bars {
            multi: indicatif::MultiProgress::with_draw_target(target),
            bars: Mutex::new(BTreeMap::new()),
        }
    }

    fn bar(&self, cluster: &str) -> indicatif::ProgressBar {
        let mut bars = self.bars.lock().unwrap_or_else(|e| e.into_inner());
        bars.entry(cluster.to_string())
            .or_insert_with(|| {
                let b = self.multi.add(indicatif::ProgressBar::new(0));
                b.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{prefix:>20} {bar:30} {pos}/{len} {msg}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                b.set_prefix(cluster.to_string());
                b
            })
            .clone()
    }
}

impl Progress for Bars {
    fn start(&self, cluster: &str, message: &str) {
        self.bar(cluster).set_message(message.to_string());
    }
    fn message(&self, cluster: &str, message: &str) {
        self.bar(cluster).set_message(message.to_string());
    }
    fn length(&self, cluster: &str, total: u64) {
        let b = self.bar(cluster);
        b.set_position(0);
        b.set_length(total);
    }
    fn advance(&self, cluster: &str) {
        self.bar(cluster).inc(1);
    }
    fn finish(&self, cluster: &str, message: &str) {
        self.bar(cluster).finish_with_message(message.to_string());
    }
}

/// Asks like Terraform; only `yes` goes on.
pub fn confirm(
    input: &mut dyn std::io::BufRead,
    output: &mut dyn std::io::Write,
) -> std::io::Result<bool> {
    write!(
        output,
        "\nDo you want to perform these actions?\n  capops will apply the changes above. Only 'yes' will be accepted.\n\n  Enter a value: "
    )?;
    output.flush()?;
    let mut line = String::new();
    input.read_line(&mut line)?;
    Ok(line.trim() == "yes")
}

/// Writes a file atomically; on failure prints why.
pub fn write_file(io: &mut Io<'_>, path: &Path, text: &str) -> std::io::Result<bool> {
    match super::common::write_atomically(path, text.as_bytes()) {
        Ok(()) => Ok(true),
        Err(e) => {
            writeln!(io.stderr, "error: cannot write {}: {e}", path.display())?;
            Ok(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_yes_confirms() {
        for (answer, expected) in [
            ("yes\n", true),
            ("y\n", false),
            ("\n", false),
            ("", false),
            ("  yes  \n", true),
        ] {
            let mut out = Vec::new();
            let ok = confirm(&mut std::io::Cursor::new(answer), &mut out).unwrap();
            assert_eq!(ok, expected, "{answer:?}");
            assert!(
                String::from_utf8(out)
                    .unwrap()
                    .contains("Only 'yes' will be accepted")
            );
        }
    }
}
