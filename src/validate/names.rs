//! Names that become file paths or object names: what the cluster, the cloud
//! and the file system accept, checked at validation so that a pull request
//! sees the problem (not `capops render`, which would write with them).
//!
//! Document names, pool names and namespaces are DNS labels by their schema
//! and checks; this module covers the rest: the Config's render settings,
//! the form of a region or zone (which name Terraform folders; how each
//! provider writes them is `regions.rs`'s), and the GitHub logins and teams
//! that leads and approvers are matched by.

use crate::diag::{Code, Diagnostic};
use crate::model::types::is_dns_label;
use crate::model::*;

/// A DNS-1123 subdomain: dot-separated DNS labels, at most 253 characters.
pub fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// A cloud region or zone: lowercase letters, digits and `-`, at most 63
/// characters (`us-east-1`, `us-central1-a`, `eastus`, Azure's zone `1`).
pub fn is_region(s: &str) -> bool {
    is_dns_label(s)
}

/// One plain folder name: no separators, not `.` or `..`, not hidden.
pub fn is_folder_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && !s.starts_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// A GitHub login (a leading `@` allowed): 1-39 letters, digits and single
/// inner hyphens; `_` too, which enterprise managed users' logins carry.
pub fn is_github_login(s: &str) -> bool {
    let s = s.strip_prefix('@').unwrap_or(s);
    !s.is_empty()
        && s.len() <= 39
        && !s.starts_with(['-', '_'])
        && !s.ends_with('-')
        && !s.contains("--")
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

/// A GitHub account that can open pull requests: a login, or a GitHub App's
/// bot account (`app-slug[bot]`).
pub fn is_github_actor(s: &str) -> bool {
    is_github_login(s.strip_suffix("[bot]").unwrap_or(s))
}

/// A GitHub team: `org/team-slug` (a leading `@` allowed).
pub fn is_github_team(s: &str) -> bool {
    let s = s.strip_prefix('@').unwrap_or(s);
    match s.split_once('/') {
        Some((org, slug)) => {
            is_github_login(org)
                && !slug.is_empty()
                && slug.len() <= 100
                && slug
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        None => false,
    }
}

fn bad_approver(name: &Spanned<String>, what: &str, teams_allowed: bool) -> Diagnostic {
    Diagnostic::new(
        Code::ApproverInvalid,
        format!("`{}` is not a GitHub {what}", name.value.escape_debug()),
    )
    .at(name.span, "not a GitHub identity")
    .help(if teams_allowed {
        "write a login (`alice`, `@alice`) or a team as `org/team-slug`"
    } else {
        "write a GitHub login (`alice`, `@alice`)"
    })
}

pub(super) fn bad(name: &Spanned<String>, what: &str, form: &str) -> Diagnostic {
    Diagnostic::new(
        Code::NameInvalid,
        format!("`{}` is not a valid {what}", name.value),
    )
    .at(name.span, "invalid name")
    .help(format!("write {form}"))
}

/// Checks every name that becomes a path or an object name.
pub fn check_names(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    if let Some(config) = &repo.config {
        // Amounts print it after every number, in tables and comments.
        let currency = &config.spec.currency;
        if currency.len() != 3 || !currency.bytes().all(|b| b.is_ascii_uppercase()) {
            diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!(
                        "the currency `{}` is not an ISO 4217 code",
                        currency.escape_debug()
                    ),
                )
                .at(config.origin.kind_span, "in this Config")
                .help("write three capital letters, such as USD, EUR or JPY"),
            );
        }
        // A pattern is matched against paths relative to the repository
        // root: one that is empty, absolute or climbs out matches nothing.
        for p in &config.spec.ignore {
            let v = p.value.as_str();
            let why = if v.trim().is_empty() {
                Some("is empty")
            } else if v.starts_with('/') {
                Some("is absolute")
            } else if v.split('/').any(|seg| seg == "..") {
                Some("climbs out of the repository with `..`")
            } else {
                None
            };
            if let Some(why) = why {
                diags.push(
                    Diagnostic::new(
                        Code::InvalidValue,
                        format!(
                            "the ignore pattern `{}` {why}: it can match no file",
                            v.escape_debug()
                        ),
                    )
                    .at(p.span, "matches nothing")
                    .help("write patterns relative to the repository root: `drafts/`, `**/*.draft.yaml`"),
                );
            }
        }
        let r = &config.spec.render;
        if !is_dns_label(&r.gpu_operator_namespace.value) {
            diags.push(bad(
                &r.gpu_operator_namespace,
                "namespace for the GPU operator",
                "a DNS label: lowercase letters, digits and `-`, at most 63 characters",
            ));
        }
        // Workloads name it in the label `kueue.x-k8s.io/queue-name`, whose
        // value is at most 63 characters.
        if !is_dns_subdomain(&r.local_queue.value) || r.local_queue.value.len() > 63 {
            diags.push(bad(
                &r.local_queue,
                "LocalQueue name",
                "a DNS-1123 subdomain of at most 63 characters (workloads name it in a label): lowercase letters, digits, `-` and `.`",
            ));
        }
        if !is_folder_name(&r.output_folder.value) {
            diags.push(bad(
                &r.output_folder,
                "output folder",
                "one folder name of letters, digits, `-`, `_` and `.`, inside the repository (no `/`, no `..`)",
            ));
        } else if let Some(why) = output_folder_clash(&r.output_folder.value, config_ignore(repo)) {
            diags.push(
                Diagnostic::new(
                    Code::NameInvalid,
                    format!("the output folder `{}` {why}", r.output_folder.value),
                )
                .at(r.output_folder.span, "capops render writes here")
                .help("use `rendered` (the default), or a folder of its own that the Config's `ignore` lists (`ignore: [\"out/\"]`)"),
            );
        }
    }
    if let Some(config) = &repo.config {
        for (name, role) in &config.spec.roles {
            if crate::model::config::LEAD_ROLES.contains(&name.value.as_str()) {
                diags.push(
                    Diagnostic::new(
                        Code::RoleReserved,
                        format!(
                            "the Config defines the role `{}`, which capops fills from each Team's `leads`",
                            name.value
                        ),
                    )
                    .at(name.span, "a role capops fills itself")
                    .help("add the people to the `leads` of the Teams they lead; to let someone approve for every team, give the role another name (`platform-leads`) and ask for it in a tier or rule"),
                );
            }
            for t in &role.teams {
                if !is_github_team(&t.value) {
                    diags.push(bad_approver(t, "team (`org/team-slug`)", true));
                }
            }
            for u in &role.users {
                if !is_github_login(&u.value) {
                    diags.push(bad_approver(u, "login", false));
                }
            }
        }
        for p in &config.spec.usage.pullers {
            if !is_github_actor(&p.value) {
                diags.push(
                    Diagnostic::new(
                        Code::ApproverInvalid,
                        format!("`{}` is not a GitHub account", p.value.escape_debug()),
                    )
                    .at(p.span, "not a login or `app-slug[bot]`")
                    .help("write the login of the account that opens usage pull requests (`capops-usage[bot]`, `usage-bot`)"),
                );
            } else if p
                .value
                .trim_start_matches('@')
                .eq_ignore_ascii_case("github-actions[bot]")
            {
                diags.push(
                    Diagnostic::new(
                        Code::UsagePullerShared,
                        "`github-actions[bot]` opens pull requests for every workflow of the repository, not only `capops usage pull`".to_string(),
                    )
                    .at(p.span, "shared by every workflow")
                    .help("open usage pull requests with a GitHub App of their own (actions/create-github-app-token) and list `app-slug[bot]`; pull requests opened with GITHUB_TOKEN also start no workflow, so no check would run"),
                );
            }
        }
    }
    for t in repo.teams.values() {
        for lead in &t.spec.leads {
            if !is_github_login(&lead.value) && !is_github_team(&lead.value) {
                diags.push(bad_approver(lead, "login or team", true));
            }
        }
    }
    // Two Cluster documents applied to one cluster: each would prune the
    // other's objects there (capops owns what carries its label).
    let mut contexts: std::collections::BTreeMap<&str, &str> = Default::default();
    for c in repo.clusters.values() {
        let Some(ctx) = c.spec.kube_context.as_deref() else {
            continue;
        };
        if let Some(first) = contexts.insert(ctx, c.name()) {
            diags.push(
                Diagnostic::new(
                    Code::KubeContextShared,
                    format!(
                        "Cluster `{}` has the kubeContext `{}` of Cluster `{first}`",
                        c.name(),
                        ctx.escape_debug()
                    ),
                )
                .at(c.metadata.name.span, "applied to the same cluster as another")
                .help("give each Cluster document the context of its own cluster; one cluster is one Cluster document (sync would prune one's objects for the other)"),
            );
        }
    }
    // Two Clusters pinned to one API server, in any spelling of it.
    let mut servers: std::collections::BTreeMap<String, &str> = Default::default();
    for c in repo.clusters.values() {
        let Some(pin) = c.spec.api_server.as_ref() else {
            continue;
        };
        // A port must be one (the schema's form lets any digits through).
        let authority = pin
            .value
            .split_once("://")
            .map_or("", |(_, r)| r.split('/').next().unwrap_or(""));
        let port = authority
            .rsplit_once(':')
            .map(|(_, p)| p)
            .filter(|_| !authority.ends_with(']'));
        if port.is_some_and(|p| !matches!(p.parse::<u16>(), Ok(n) if n > 0)) {
            diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!(
                        "`spec.apiServer` has the port `{}`, which is not 1 to 65535",
                        port.unwrap_or_default()
                    ),
                )
                .at(pin.span, "not a port")
                .help("write the API server's port as `kubectl config view --minify` shows it"),
            );
            continue;
        }
        let server = crate::model::api_server::normal_server(&pin.value);
        if let Some(first) = servers.insert(server, c.name()) {
            diags.push(
                Diagnostic::new(
                    Code::KubeContextShared,
                    format!(
                        "Cluster `{}` pins the apiServer of Cluster `{first}`",
                        c.name(),
                    ),
                )
                .at(pin.span, "the API server of another Cluster")
                .help("one cluster is one Cluster document: pin each to its own API server (sync would prune one's objects for the other)"),
            );
        }
    }
    // Folders and files of the render that are not a cluster's or a
    // reservation's own: a cluster or reservation of that name would be
    // written over them.
    for c in repo.clusters.values() {
        if RESERVED_FOLDERS.contains(&c.name()) {
            diags.push(
                Diagnostic::new(
                    Code::NameInvalid,
                    format!(
                        "a cluster cannot be named `{}`: capops render writes the node-label plans of every cluster there",
                        c.name(),
                    ),
                )
                .at(c.metadata.name.span, "a folder of the render")
                .help("rename the cluster"),
            );
        }
    }
    for r in repo.reservations.values() {
        if RESERVED_TERRAFORM_FILES.contains(&r.name()) {
            diags.push(
                Diagnostic::new(
                    Code::NameInvalid,
                    format!(
                        "a reservation cannot be named `{}`: capops render writes {}.tf.json in each region's Terraform module",
                        r.name(),
                        r.name()
                    ),
                )
                .at(r.metadata.name.span, "a file of the render")
                .help("rename the reservation"),
            );
        }
    }
}

/// Name of the ResourceQuota capops renders in each team namespace
/// (`capops-gpu-<class>` for a priority class's own quota).
pub const QUOTA_NAME: &str = "capops-gpu";

/// With `render.priorityClassQuotas`, each team namespace gets a quota per
/// priority class, rendered to `resourcequota-<namespace>-<name>.yaml`: two
/// namespaces of a cluster must not make one file name (`ml` with class
/// `x-capops-gpu` and `ml-capops-gpu-x`). Every class the repository defines
/// counts, not only those requests use now, so a later request cannot make
/// render fail.
pub fn check_rendered_files(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    if !repo.config_spec().render.priority_class_quotas {
        return;
    }
    let mut names = vec![QUOTA_NAME.to_string()];
    names.extend(
        repo.priority_classes
            .keys()
            .map(|class| format!("{QUOTA_NAME}-{class}")),
    );
    // (cluster, file stem) -> (namespace, quota, span) of the first.
    let mut seen: std::collections::HashMap<(&str, String), (&str, &str, crate::diag::Span)> =
        Default::default();
    for team in repo.teams.values() {
        for (cluster, presence) in &team.spec.clusters {
            let ns = &presence.namespace;
            for name in &names {
                let key = (cluster.value.as_str(), format!("{}-{name}", ns.value));
                match seen.get(&key) {
                    Some((first_ns, _, _)) if *first_ns == ns.value => {}
                    Some((first_ns, first_name, first_span)) => diags.push(
                        Diagnostic::new(
                            Code::RenderedFileClash,
                            format!(
                                "in cluster `{}`, the quota `{name}` of namespace `{}` and the quota `{first_name}` of namespace `{first_ns}` would both be rendered to resourcequota-{}.yaml",
                                cluster.value, ns.value, key.1
                            ),
                        )
                        .at(ns.span, "this namespace")
                        .related(*first_span, "the other namespace")
                        .help("rename one of the namespaces or the priority class: with render.priorityClassQuotas each namespace gets `capops-gpu-<class>` for every priority class"),
                    ),
                    None => {
                        seen.insert(key, (ns.value.as_str(), name.as_str(), ns.span));
                    }
                }
            }
        }
    }
}

/// A top-level folder of the render that belongs to no cluster and holds
/// files named like a cluster's (`node-labels/<cluster>.yaml`). (`cloud/`
/// holds only folders, `cloud/<provider>/<region>/`, so a cluster may be
/// named `cloud`.)
pub const RESERVED_FOLDERS: [&str; 1] = ["node-labels"];

/// Files of each Terraform module that belong to no reservation
/// (`<name>.tf.json`).
pub const RESERVED_TERRAFORM_FILES: [&str; 2] = ["providers", "variables"];

fn config_ignore(repo: &Repo) -> Vec<String> {
    repo.config
        .as_ref()
        .map(|c| c.spec.ignore.iter().map(|p| p.value.clone()).collect())
        .unwrap_or_default()
}

/// Why a folder cannot take rendered files: it holds what capops reads
/// (usage, templates, policy tests), or capops would read the YAML it
/// renders there as documents of the repository.
fn output_folder_clash(folder: &str, ignore: Vec<String>) -> Option<&'static str> {
    match folder {
        "rendered" => None,
        "usage" | "templates" | "tests" => {
            Some("holds files capops reads (usage history, templates, policy tests)")
        }
        f if crate::load::files::ignored(&format!("{f}/x.yaml"), &ignore) => None,
        _ => Some(
            "is read as documents: the files rendered there would be loaded as documents of the repository (and documents there overwritten)",
        ),
    }
}

/// Who a namespace a team cannot have belongs to: Kubernetes (the `kube-`
/// prefix) or the GPU operator (its namespace, from the Config).
pub fn reserved_namespace(namespace: &str, operator: &str) -> Option<&'static str> {
    if namespace == operator {
        Some("the GPU operator (the Config's render.gpuOperatorNamespace)")
    } else if namespace.starts_with("kube-") {
        Some("Kubernetes (the kube- prefix is reserved)")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_become_paths_are_plain() {
        assert!(is_folder_name("rendered"));
        assert!(is_folder_name("out.v2"));
        assert!(!is_folder_name("../../tmp/x"));
        assert!(!is_folder_name(".."));
        assert!(!is_folder_name("a/b"));
        assert!(!is_folder_name(".git"));
        assert!(is_region("us-east-1"));
        assert!(is_region("eastus"));
        assert!(is_region("1"));
        assert!(!is_region("../x"));
        assert!(!is_region("US-EAST-1"));
        assert!(is_dns_subdomain("gpu.queue"));
        assert!(is_github_login("alice"));
        assert!(is_github_login("@erin-vp"));
        assert!(is_github_login("alice_acme"));
        assert!(!is_github_login("a|b"));
        assert!(!is_github_login("-a"));
        assert!(!is_github_login("a--b"));
        assert!(!is_github_login("<img src=x>"));
        assert!(!is_github_login(&"a".repeat(40)));
        assert!(is_github_team("acme-ai/capacity-review"));
        assert!(is_github_team("@acme/leads"));
        assert!(!is_github_team("acme/"));
        assert!(!is_github_team("acme/a b"));
        assert!(!is_github_team("a/b/c"));
        assert!(!is_dns_subdomain("Gpu"));
        assert!(is_github_actor("capops-usage[bot]"));
        assert!(is_github_actor("usage-bot"));
        assert!(!is_github_actor("[bot]"));
        assert!(!is_github_actor("a[bot][bot]"));
        assert!(!is_github_actor("a [bot]"));
    }

    fn config_with_pullers(pullers: &str) -> Vec<Diagnostic> {
        let text = format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {{name: x}}\nspec:\n  usage:\n    pullers:\n{pullers}"
        );
        let loaded = crate::load::load(
            vec![crate::load::Input {
                path: "capops.yaml".into(),
                content: crate::load::Content::Bytes(text.into_bytes()),
            }],
            None,
        );
        assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
        let repo = crate::load::base::assemble(loaded.docs);
        let mut diags = Vec::new();
        check_names(&repo, &mut diags);
        diags
    }

    fn repo_of(text: &str) -> Repo {
        let loaded = crate::load::load(
            vec![crate::load::Input {
                path: "repo.yaml".into(),
                content: crate::load::Content::Bytes(text.as_bytes().to_vec()),
            }],
            None,
        );
        assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
        crate::load::base::assemble(loaded.docs)
    }

    fn clashes(per_class: bool, classes: &[&str], namespaces: &[&str]) -> Vec<Diagnostic> {
        let mut text = format!(
            "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata: {{name: c}}\nspec:\n  render: {{priorityClassQuotas: {per_class}}}\n"
        );
        for class in classes {
            text.push_str(&format!(
                "---\napiVersion: capops.dev/v1alpha1\nkind: PriorityClass\nmetadata: {{name: {class}}}\nspec: {{value: 100}}\n"
            ));
        }
        for (i, ns) in namespaces.iter().enumerate() {
            text.push_str(&format!(
                "---\napiVersion: capops.dev/v1alpha1\nkind: Team\nmetadata: {{name: t{i}}}\nspec:\n  costCenter: CC-1\n  leads: [lead]\n  clusters:\n    c1: {{namespace: {ns}, quota: {{nvidia.com/gpu: 1}}}}\n"
            ));
        }
        let mut diags = Vec::new();
        check_rendered_files(&repo_of(&text), &mut diags);
        diags
    }

    #[test]
    fn quotas_of_two_namespaces_never_share_a_file() {
        // `ml` + `capops-gpu-x-capops-gpu` = `ml-capops-gpu-x` + `capops-gpu`.
        let d = clashes(true, &["x-capops-gpu"], &["ml", "ml-capops-gpu-x"]);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].code, Code::RenderedFileClash);
        assert!(d[0].is_error());
        assert!(
            d[0].message
                .contains("resourcequota-ml-capops-gpu-x-capops-gpu.yaml"),
            "{}",
            d[0].message
        );
        // Two class quotas: `a` + `capops-gpu-b-capops-gpu-c` and
        // `a-capops-gpu-b` + `capops-gpu-c`.
        let d = clashes(true, &["b-capops-gpu-c", "c"], &["a", "a-capops-gpu-b"]);
        assert_eq!(d.len(), 1, "{d:?}");
        // Without per-class quotas, or with namespaces that do not continue
        // each other, nothing clashes.
        assert!(clashes(false, &["x-capops-gpu"], &["ml", "ml-capops-gpu-x"]).is_empty());
        assert!(clashes(true, &["x-capops-gpu"], &["ml", "ml-capops-gpu-y"]).is_empty());
    }

    #[test]
    fn usage_pullers_are_github_accounts_of_their_own() {
        assert!(config_with_pullers("      - capops-usage[bot]\n      - usage-bot\n").is_empty());
        let d = config_with_pullers("      - \"<b>bot</b>\"\n");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, Code::ApproverInvalid);
        assert!(d[0].is_error());
        let d = config_with_pullers("      - github-actions[bot]\n");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].code, Code::UsagePullerShared);
        assert!(!d[0].is_error());
    }
}
