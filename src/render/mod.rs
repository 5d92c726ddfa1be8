//! Rendering: what each cluster and cloud account should hold at `--at`, as
//! files that Argo CD, Flux or Terraform apply as they are.
//!
//! A team's quota in a cluster is the sum of its requests in force at `--at`
//! (a request on the main branch was approved when it merged). [`kube`]
//! turns that into ResourceQuotas, PriorityClasses, Kueue objects and the
//! GPU operator's MIG and time-slicing ConfigMaps, with the node labels the
//! sync step must set; [`cloud`] turns Reservations into Terraform JSON.
//! Every object comes from a template ([`templates`]; the repository may
//! override them), is checked ([`checks`] and [`verify`]), stamped with its
//! owner and sources, and written with sorted keys ([`yaml`]) so that
//! rendering twice gives the same bytes. Pure: no I/O, the time and the
//! revision are passed in.

pub mod cloud;
pub mod effects;
pub mod governed;
pub mod kube;
pub mod lint;
pub mod operator;
pub mod templates;
pub mod yaml;

use crate::diag::{Code, Diagnostic, Span};
use crate::model::*;
use serde_json::{Map, Value};
use templates::Templates;

/// The label every rendered object carries.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "capops");
/// Annotation: the capacity documents an object comes from (`Kind/name`, comma-separated).
pub const SOURCES: &str = "capops.dev/sources";
/// Annotation: the git revision of the capacity repository it was rendered from.
pub const REVISION: &str = "capops.dev/revision";
/// Markers of GitOps and release tools: (annotation or label, tool). An
/// object carrying one is that tool's: never forced, never pruned. Argo CD
/// tracks by annotation (`tracking-id`, with `installation-id` in
/// multi-instance setups) or, in its label method, by
/// `app.kubernetes.io/instance` (or the `instanceLabelKey` many set to
/// `argocd.argoproj.io/instance`); capops never renders either label.
pub const GITOPS_ANNOTATIONS: &[(&str, &str)] = &[
    ("argocd.argoproj.io/tracking-id", "Argo CD"),
    ("argocd.argoproj.io/installation-id", "Argo CD"),
    ("meta.helm.sh/release-name", "Helm"),
];
pub const GITOPS_LABELS: &[(&str, &str)] = &[
    ("kustomize.toolkit.fluxcd.io/name", "Flux"),
    ("helm.toolkit.fluxcd.io/name", "Flux"),
    ("argocd.argoproj.io/instance", "Argo CD"),
    (
        "app.kubernetes.io/instance",
        "Argo CD (label tracking) or Helm",
    ),
];

/// What to render.
#[derive(Clone, Debug)]
pub struct Options {
    pub at: Timestamp,
    /// The revision stamped on every object.
    pub revision: String,
    /// Only these clusters (and no cloud files).
    pub clusters: Option<std::collections::BTreeSet<String>>,
}

/// How a file is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Json,
}

/// One rendered file.
#[derive(Clone, Debug, PartialEq)]
pub struct File {
    /// Path under the output folder: `<cluster>/<kind>-<namespace>-<name>.yaml`,
    /// `cloud/<provider>/<name>.tf.json`, `node-labels/<cluster>.yaml`.
    pub path: String,
    pub value: Value,
    pub format: Format,
    /// Whether it is a Kubernetes object (as opposed to Terraform or a plan).
    pub kubernetes: bool,
}

impl File {
    /// The file's bytes: YAML with sorted keys, or indented JSON.
    pub fn text(&self) -> String {
        match self.format {
            Format::Yaml => yaml::to_string(&self.value),
            Format::Json => {
                let mut s =
                    serde_json::to_string_pretty(&yaml::sorted(&self.value)).unwrap_or_default();
                s.push('\n');
                s
            }
        }
    }
}

/// Everything rendered, and what was found on the way.
#[derive(Debug, Default)]
pub struct Rendered {
    pub files: Vec<File>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Rendered {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// All Kubernetes objects as one YAML stream (`--out -`).
    pub fn stream(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            match f.format {
                Format::Yaml => {
                    out.push_str(&format!("---\n# {}\n", f.path));
                    out.push_str(&f.text());
                }
                Format::Json => {
                    // Terraform JSON is JSON, which is YAML too.
                    out.push_str(&format!("---\n# {}\n", f.path));
                    out.push_str(&serde_json::to_string(&f.value).unwrap_or_default());
                    out.push('\n');
                }
            }
        }
        out
    }
}

/// One object to render: its template, context, where it goes, and where it comes from.
pub struct Job {
    pub template: &'static str,
    pub context: Value,
    /// The expected `apiVersion` and `kind` (Kubernetes objects only).
    pub expect: Option<(&'static str, &'static str)>,
    /// `Kind/name` of the documents it comes from.
    pub sources: Vec<String>,
    /// Where diagnostics about it point.
    pub span: Span,
    /// Folder under the output: a cluster name, or `cloud/<provider>`.
    pub folder: String,
    /// File name for non-Kubernetes output (Kubernetes names come from the object).
    pub file_name: Option<String>,
}

/// Renders the repository, after checking that the state it renders keeps
/// the invariants (its problems are among the diagnostics).
pub fn render(repo: &Repo, templates: &Templates, opts: &Options) -> Rendered {
    // No quota above a team's standing quota is ever written, and no pool
    // committed beyond what it has: the state must keep the invariants.
    let invariants =
        crate::validate::invariants::check(repo, &crate::capacity::Ledger::build(repo), opts.at);
    let mut out = objects(repo, templates, opts);
    out.diagnostics.extend(invariants);
    crate::diag::normalize(&mut out.diagnostics);
    out
}

/// The objects the repository renders to, without the invariant check (for
/// comparing two states, where [`render`] has judged or will judge each).
pub fn objects(repo: &Repo, templates: &Templates, opts: &Options) -> Rendered {
    let mut out = Rendered::default();
    let mut jobs = Vec::new();
    let index = kube::ByCluster::new(repo, opts.at);
    for cluster in repo.clusters.values() {
        if opts
            .clusters
            .as_ref()
            .is_some_and(|set| !set.contains(cluster.name()))
        {
            continue;
        }
        let plan = kube::cluster(repo, &index, cluster, &mut jobs, &mut out.diagnostics);
        if let Some(plan) = plan {
            out.files.push(plan);
        }
    }
    if opts.clusters.is_none() {
        cloud::reservations(repo, opts, &mut jobs, &mut out.files);
    }
    for job in jobs {
        match run(templates, &job, &opts.revision) {
            Ok(file) => out.files.push(file),
            Err(d) => out.diagnostics.extend(d),
        }
    }
    out.files.sort_by(|a, b| a.path.cmp(&b.path));
    // Two objects with the same file name would overwrite each other.
    for w in out.files.windows(2) {
        if w[0].path == w[1].path {
            out.diagnostics.push(Diagnostic::new(
                Code::TemplateOutputInvalid,
                format!("two objects render to {}", w[0].path),
            ));
        }
    }
    crate::diag::normalize(&mut out.diagnostics);
    out
}

/// Runs one job: template, parse, verify, stamp.
fn run(templates: &Templates, job: &Job, revision: &str) -> Result<File, Vec<Diagnostic>> {
    let text = templates
        .render(job.template, &job.context)
        .map_err(|d| vec![point(d, job.span)])?;
    let invalid = |why: String| {
        let mut d = Diagnostic::new(
            Code::TemplateOutputInvalid,
            format!("template {} {why}", job.template),
        )
        .help("a template writes exactly one object of its kind");
        d = match templates.origin(job.template) {
            Some(f) => d
                .at(Span::file_start(f), "template")
                .related(job.span, "rendered for"),
            None => d.at(job.span, "rendered from here"),
        };
        vec![d]
    };
    let mut value: Value = if job.expect.is_some() {
        let parsed = crate::load::yaml::parse(&text, crate::diag::FileId(u32::MAX));
        if let Some(d) = parsed.diagnostics.first() {
            return Err(invalid(format!("wrote invalid YAML: {}", d.message)));
        }
        match parsed.documents.as_slice() {
            [one] => crate::load::json::to_json(one),
            docs => return Err(invalid(format!("wrote {} documents, not one", docs.len()))),
        }
    } else {
        serde_json::from_str(&text).map_err(|e| invalid(format!("wrote invalid JSON: {e}")))?
    };
    if !value.is_object() {
        return Err(invalid("wrote something other than a mapping".into()));
    }
    let path = match job.expect {
        Some((api, kind)) => {
            let mut problems = Vec::new();
            verify(&value, api, kind, &mut problems);
            if !problems.is_empty() {
                return Err(problems
                    .into_iter()
                    .map(|(code, msg)| {
                        let mut d = Diagnostic::new(code, format!("{kind} from {}: {msg}", job.template));
                        d = match templates.origin(job.template) {
                            Some(f) => d.at(Span::file_start(f), "template").related(job.span, "rendered for"),
                            None => d.at(job.span, "rendered from here"),
                        };
                        d.help(match code {
                            Code::QuotaKeyNotEnforced => "quota extended resources as `requests.<resource>` with whole numbers; `limits.` keys are accepted by Kubernetes and never enforced",
                            Code::ReservedLabel => "remove the label: Argo CD tracks Applications with it",
                            _ => "a template writes exactly one object of its kind with a metadata.name",
                        })
                    })
                    .collect());
            }
            govern(templates, job, &value)?;
            stamp(&mut value, &job.sources, revision);
            let meta = &value["metadata"];
            let name = meta["name"].as_str().unwrap_or_default();
            match meta.get("namespace").and_then(Value::as_str) {
                Some(ns) => format!(
                    "{}/{}-{ns}-{name}.yaml",
                    job.folder,
                    kind.to_ascii_lowercase()
                ),
                None => format!("{}/{}-{name}.yaml", job.folder, kind.to_ascii_lowercase()),
            }
        }
        None => {
            govern(templates, job, &value)?;
            format!(
                "{}/{}",
                job.folder,
                job.file_name.as_deref().unwrap_or("main.tf.json")
            )
        }
    };
    Ok(File {
        path,
        value,
        format: if job.expect.is_some() {
            Format::Yaml
        } else {
            Format::Json
        },
        kubernetes: job.expect.is_some(),
    })
}

fn point(d: Diagnostic, span: Span) -> Diagnostic {
    if d.primary.is_some() {
        d.related(span, "rendered for")
    } else {
        d.at(span, "rendered from here")
    }
}

/// Checks a rendered Kubernetes object: its kind and name, no reserved
/// labels, and ResourceQuota keys that Kubernetes enforces.
pub fn verify(value: &Value, api: &str, kind: &str, problems: &mut Vec<(Code, String)>) {
    let bad = |p: &mut Vec<(Code, String)>, m: String| p.push((Code::TemplateOutputInvalid, m));
    if value["apiVersion"] != api || value["kind"] != kind {
        bad(
            problems,
            format!(
                "apiVersion/kind is {}/{}, expected {api}/{kind}",
                value["apiVersion"], value["kind"]
            ),
        );
    }
    let name = value["metadata"]["name"].as_str().unwrap_or_default();
    if name.is_empty() || name.len() > 253 || name.contains('/') {
        bad(
            problems,
            format!("metadata.name `{name}` is missing or invalid"),
        );
    }
    // A marker of another tool would make sync take the object for that
    // tool's: never written or pruned again (and maybe pruned by it).
    for (field, what, markers) in [
        ("labels", "label", GITOPS_LABELS),
        ("annotations", "annotation", GITOPS_ANNOTATIONS),
    ] {
        if let Some(map) = value["metadata"][field].as_object() {
            for (m, tool) in markers {
                if map.contains_key(*m) {
                    problems.push((
                        Code::ReservedLabel,
                        format!("carries the {what} `{m}`, which marks an object as {tool}'s"),
                    ));
                }
            }
        }
    }
    if kind == "ResourceQuota"
        && let Some(hard) = value["spec"]["hard"].as_object()
    {
        for (k, v) in hard {
            if let Some(why) = unenforced_quota_key(k) {
                problems.push((Code::QuotaKeyNotEnforced, format!("`{k}` {why}")));
            }
            if k.starts_with("requests.nvidia.com/") {
                let whole = match v {
                    Value::String(s) => s.parse::<u64>().is_ok(),
                    Value::Number(n) => n.is_u64(),
                    _ => false,
                };
                if !whole {
                    problems.push((
                        Code::QuotaKeyNotEnforced,
                        format!("`{k}: {v}` is not a whole number of devices"),
                    ));
                }
            }
        }
    }
}

/// Why a ResourceQuota key for an extended resource would never be
/// enforced, or None when it would be.
pub fn unenforced_quota_key(key: &str) -> Option<&'static str> {
    if !key.contains('/') || key.starts_with("count/") {
        return None;
    }
    if key.starts_with("limits.") {
        return Some(
            "is accepted by Kubernetes and never enforced: extended resources are quota'd only as `requests.`",
        );
    }
    if key.starts_with("requests.") || key.contains(".deviceclass.resource.k8s.io/") {
        return None;
    }
    Some("has no `requests.` prefix: Kubernetes accepts it and never charges it")
}

/// Adds the ownership label and the source and revision annotations.
fn stamp(value: &mut Value, sources: &[String], revision: &str) {
    let meta = value
        .as_object_mut()
        .expect("checked to be a mapping")
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    let labels = meta
        .entry("labels")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(l) = labels.as_object_mut() {
        l.insert(MANAGED_BY.0.into(), MANAGED_BY.1.into());
    }
    let annotations = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(a) = annotations.as_object_mut() {
        a.insert(SOURCES.into(), sources_value(sources).into());
        a.insert(REVISION.into(), revision.into());
    }
}

/// Longest `capops.dev/sources` value: Kubernetes allows 256 KiB of
/// annotations per object in all, and the rest is other tools'.
pub const MAX_SOURCES_BYTES: usize = 16 * 1024;

/// The documents an object comes from, comma-separated; past
/// [`MAX_SOURCES_BYTES`], as many as fit and then how many more there are.
fn sources_value(sources: &[String]) -> String {
    let all = sources.join(",");
    if all.len() <= MAX_SOURCES_BYTES {
        return all;
    }
    let mut out = String::new();
    for (i, s) in sources.iter().enumerate() {
        let tail = format!(",… and {} more", sources.len() - i);
        if out.len() + 1 + s.len() + tail.len() + 24 > MAX_SOURCES_BYTES {
            let tail = if out.is_empty() {
                match sources.len() {
                    1 => "… 1 document".to_string(),
                    n => format!("… {n} documents"),
                }
            } else {
                tail
            };
            out.push_str(&tail);
            return out;
        }
        if !out.is_empty() {
            out.push(',');
        }
        out.push_str(s);
    }
    out
}

/// The tags (AWS, Azure) stamped on cloud resources.
pub fn cloud_tags(sources: &[String], revision: &str) -> Value {
    serde_json::json!({
        "managed-by": "capops",
        "capops-sources": sources.join(","),
        "capops-revision": revision,
    })
}

/// Holds an override to the built-in template: it may restyle an object and
/// add labels, annotations or tags; it may not change what the object governs.
fn govern(templates: &Templates, job: &Job, value: &Value) -> Result<(), Vec<Diagnostic>> {
    let Some(file) = templates.origin(job.template) else {
        return Ok(());
    };
    let builtin = templates
        .render_builtin(job.template, &job.context)
        .map_err(|d| vec![point(d, job.span)])?;
    let expected: Value = if job.expect.is_some() {
        let parsed = crate::load::yaml::parse(&builtin, crate::diag::FileId(u32::MAX));
        parsed
            .documents
            .first()
            .map(crate::load::json::to_json)
            .unwrap_or(Value::Null)
    } else {
        serde_json::from_str(&builtin).unwrap_or(Value::Null)
    };
    let changed = governed::differences(&expected, value, job.expect.is_some());
    if changed.is_empty() {
        return Ok(());
    }
    Err(vec![
        Diagnostic::new(
            Code::TemplateChangesGoverned,
            format!(
                "template {} changes what the object governs at {}",
                job.template,
                changed.join(", ")
            ),
        )
        .at(Span::file_start(file), "template")
        .related(job.span, "rendered for")
        .help("an override may change layout, labels, annotations and tags only; quotas, names, priorities, Kueue and MIG settings and every Terraform argument come from the documents"),
    ])
}

#[cfg(test)]
mod tests;
