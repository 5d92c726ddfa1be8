//! Meaning checks across documents: references, windows, resources,
//! namespaces, priority classes, reservations, prices and usage.
//!
//! Each `check_*` function reads the [`Repo`] and pushes diagnostics; none of
//! them stops the others.

use super::pools;
use crate::diag::{Code, Diagnostic, Span, suggest};
use crate::gpu::resources::{self, ResourceName};
use crate::model::priority::{HIGHEST_USER_PRIORITY, LOWEST_PRIORITY};
use crate::model::types::is_dns_label;
use crate::model::*;
use std::collections::{BTreeMap, HashMap};

/// Runs every meaning check.
pub fn run(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    pools::check_clusters(repo, diags);
    check_teams(repo, diags);
    check_requests(repo, diags);
    check_priority_classes(repo, diags);
    check_reservations(repo, diags);
    super::cloud::check_reservations(repo, diags);
    super::cloud::pools_match_their_prices(repo, diags);
    check_catalogs(repo, diags);
    super::usage_rows::check_usage(repo, diags);
    super::names::check_names(repo, diags);
    super::regions::check(repo, diags);
    super::usage_source::check(repo, diags);
    super::names::check_rendered_files(repo, diags);
    super::blank_text::check(repo, diags);
    super::config_currency::check(repo, diags);
}

/// How many names the "did you mean" searches of one validation may read,
/// counted as the problems found so far times the names of the kind: each
/// search compares the name with every one of its kind, so thousands of bad
/// references among thousands of names would take minutes. Past it, a
/// reference that names nothing gets no suggestion.
const SUGGESTION_READS: usize = 2_000_000;

/// Reports a reference to a `what` that does not exist.
fn unknown<'a>(
    code: Code,
    what: &str,
    name: &Spanned<String>,
    known: impl ExactSizeIterator<Item = &'a String>,
    plural: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let help = if (diags.len() + 1).saturating_mul(known.len()) <= SUGGESTION_READS {
        suggest(
            &name.value,
            known.map(String::as_str).collect::<Vec<_>>(),
            plural,
        )
    } else {
        format!(
            "name one of the repository's {plural} (too many problems here to look for the nearest name)"
        )
    };
    diags.push(
        Diagnostic::new(
            code,
            format!("{what} `{}` does not exist", crate::diag::clip(&name.value)),
        )
        .at(name.span, format!("no such {what}"))
        .help(help),
    );
}

/// Whether the repository holds a `kind` named `name` that did not check
/// (its own error says why; a reference to it is not another).
fn invalid(repo: &Repo, kind: Kind, name: &str) -> bool {
    repo.unread || repo.invalid.contains(&(kind, name.to_string()))
}

/// A cluster reference; returns the cluster when it resolves.
fn cluster_ref<'r>(
    repo: &'r Repo,
    name: &Spanned<String>,
    diags: &mut Vec<Diagnostic>,
) -> Option<&'r Document<ClusterSpec>> {
    let found = repo.clusters.get(&name.value);
    if found.is_none() && !invalid(repo, Kind::Cluster, &name.value) {
        unknown(
            Code::UnknownCluster,
            "Cluster",
            name,
            repo.clusters.keys(),
            "clusters",
            diags,
        );
    }
    found
}

/// A pool reference within a cluster; returns the pool when it resolves.
fn pool_ref<'r>(
    cluster: &'r Document<ClusterSpec>,
    name: &Spanned<String>,
    diags: &mut Vec<Diagnostic>,
) -> Option<&'r NodePool> {
    let found = cluster
        .spec
        .node_pools
        .iter()
        .find(|p| p.name.value.as_str() == name.value);
    if found.is_none() {
        let known: Vec<&str> = cluster
            .spec
            .node_pools
            .iter()
            .map(|p| p.name.value.as_str())
            .collect();
        diags.push(
            Diagnostic::new(
                Code::UnknownPool,
                format!(
                    "Cluster `{}` has no node pool `{}`",
                    cluster.name(),
                    crate::diag::clip(&name.value)
                ),
            )
            .at(name.span, "no such pool")
            .help(suggest(
                &name.value,
                known,
                &format!("pools of {}", cluster.name()),
            )),
        );
    }
    found
}

fn check_window(window: &Window, what: &str, diags: &mut Vec<Diagnostic>) {
    if window.end.value <= window.start.value {
        diags.push(
            Diagnostic::new(
                Code::WindowInverted,
                format!(
                    "{what} ends ({}) before or when it starts ({})",
                    window.end.value, window.start.value
                ),
            )
            .at(window.end.span, "end")
            .related(window.start.span, "start")
            .help("the end is exclusive and must come after the start; check the order of the two dates"),
        );
    }
    // A window under an hour is judged from `at` on: short_windows.rs.
}

/// Checks a resource name; returns the parsed name when it is one capops governs.
fn resource_name(name: &Spanned<String>, diags: &mut Vec<Diagnostic>) -> Option<ResourceName> {
    match resources::parse(&name.value) {
        Ok(r) => Some(r),
        Err(bad) => {
            diags.push(
                Diagnostic::new(Code::InvalidResourceName, bad.reason)
                    .at(name.span, "not a governed resource")
                    .help(bad.help),
            );
            None
        }
    }
}

fn check_teams(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    // (cluster, namespace) -> first team span
    let mut namespaces: HashMap<(String, String), (String, Span)> = HashMap::new();
    let operator = repo
        .config_spec()
        .render
        .gpu_operator_namespace
        .value
        .clone();
    for team in repo.teams.values() {
        for (cluster_name, presence) in &team.spec.clusters {
            let cluster = cluster_ref(repo, cluster_name, diags);
            let ns = &presence.namespace;
            if let Some(owner) = super::names::reserved_namespace(&ns.value, &operator) {
                diags.push(
                    Diagnostic::new(
                        Code::InvalidNamespace,
                        format!("namespace `{}` belongs to {owner}, not to a team", ns.value),
                    )
                    .at(ns.span, "reserved namespace")
                    .help("give the team a namespace of its own"),
                );
            }
            if !is_dns_label(&ns.value) {
                diags.push(
                    Diagnostic::new(
                        Code::InvalidNamespace,
                        format!("namespace `{}` is not a valid DNS label", ns.value),
                    )
                    .at(ns.span, "invalid namespace")
                    .help("namespaces are at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"),
                );
            }
            let key = (cluster_name.value.clone(), ns.value.clone());
            match namespaces.get(&key) {
                Some((other, first)) if other != team.name() => diags.push(
                    Diagnostic::new(
                        Code::DuplicateNamespace,
                        format!(
                            "Teams `{other}` and `{}` both use namespace `{}` in cluster `{}`",
                            team.name(),
                            ns.value,
                            cluster_name.value
                        ),
                    )
                    .at(ns.span, "second team")
                    .related(*first, "first team")
                    .help("give each team its own namespace: quotas are per namespace"),
                ),
                Some(_) => {}
                None => {
                    namespaces.insert(key, (team.name().to_string(), ns.span));
                }
            }
            let provided: Vec<resources::Provided> = cluster
                .map(|c| {
                    c.spec
                        .node_pools
                        .iter()
                        .flat_map(|p| resources::provided(p, c.spec.mig_strategy.value))
                        .collect()
                })
                .unwrap_or_default();
            for limits in [
                &presence.quota,
                &presence.borrowing_limit,
                &presence.lending_limit,
            ] {
                // resource the pools provide -> the key that names it first
                let mut named: BTreeMap<&str, &Spanned<String>> = BTreeMap::new();
                for resource in limits.keys() {
                    if resource_name(resource, diags).is_none() {
                        continue;
                    }
                    let Some(cluster) = cluster else { continue };
                    let found = super::team_limits::advertised(cluster, &provided, resource);
                    if let Some(p) = found.filter(|p| p.resource != resource.value) {
                        // The render writes the device plugin's name; a
                        // limit under another spelling is read as that one
                        // here and nowhere else, so it must be written so.
                        diags.push(super::team_limits::spelled_otherwise(resource, &p.resource));
                    }
                    if let Some(p) = found {
                        match named.get(p.resource.as_str()) {
                            Some(first) => diags.push(super::team_limits::duplicate(
                                first,
                                resource,
                                &p.resource,
                                cluster.name(),
                            )),
                            None => {
                                named.insert(p.resource.as_str(), resource);
                            }
                        }
                    }
                    let in_some_pool = found.is_some();
                    if !in_some_pool {
                        diags.push(not_provided(
                            &resource.value,
                            resource.span,
                            cluster.name(),
                            None,
                            &provided,
                        ));
                    }
                }
            }
        }
    }
}

fn not_provided(
    resource: &str,
    span: Span,
    cluster: &str,
    pool: Option<&str>,
    provided: &[resources::Provided],
) -> Diagnostic {
    let mut names: Vec<&str> = provided.iter().map(|p| p.resource.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let where_ = match pool {
        Some(p) => format!("pool `{p}` of cluster `{cluster}`"),
        None => format!("no pool of cluster `{cluster}`"),
    };
    let message = match pool {
        Some(_) => format!("{where_} does not provide `{resource}`"),
        None => format!("{where_} provides `{resource}`"),
    };
    Diagnostic::new(Code::ResourceNotInPool, message)
        .at(span, "not provided here")
        .help(suggest(resource, names, "resources there"))
}

fn check_requests(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    let config = repo.config_spec();
    for req in repo.requests.values() {
        let spec = &req.spec;
        if !repo.teams.contains_key(&spec.team.value)
            && !invalid(repo, Kind::Team, &spec.team.value)
        {
            unknown(
                Code::UnknownTeam,
                "Team",
                &spec.team,
                repo.teams.keys(),
                "teams",
                diags,
            );
        }
        if let Some(class) = &spec.priority_class {
            priority_ref(repo, class, diags);
        }
        if let Some(window) = &spec.window {
            check_window(window, "the request's window", diags);
        }
        for resource in spec.resources.keys() {
            resource_name(resource, diags);
        }
        let Some(cluster) = cluster_ref(repo, &spec.cluster, diags) else {
            continue;
        };
        if let Some(team) = repo.teams.get(&spec.team.value)
            && !team.spec.clusters.contains_key(spec.cluster.value.as_str())
        {
            diags.push(
                Diagnostic::new(
                    Code::TeamNotInCluster,
                    format!(
                        "Team `{}` has no namespace in cluster `{}`",
                        team.name(),
                        cluster.name()
                    ),
                )
                .at(spec.cluster.span, "team not set up here")
                .related(team.name_span(), "team defined here")
                .help(format!(
                    "add `{}` with a namespace under the team's `spec.clusters`",
                    cluster.name()
                )),
            );
        }
        let Some(pool) = pool_ref(cluster, &spec.pool, diags) else {
            continue;
        };
        let provided = resources::provided(pool, cluster.spec.mig_strategy.value);
        for resource in spec.resources.keys() {
            if resources::parse(&resource.value).is_err() {
                continue;
            }
            if resources::find(&provided, &resource.value, pool).is_none() {
                diags.push(not_provided(
                    &resource.value,
                    resource.span,
                    cluster.name(),
                    Some(pool.name.value.as_str()),
                    &provided,
                ));
            }
        }
    }
    if let Some(default) = &config.defaults.priority_class {
        priority_ref(repo, default, diags);
    }
}

fn priority_ref(repo: &Repo, name: &Spanned<String>, diags: &mut Vec<Diagnostic>) {
    if !repo.priority_classes.contains_key(&name.value)
        && !invalid(repo, Kind::PriorityClass, &name.value)
    {
        unknown(
            Code::UnknownPriorityClass,
            "PriorityClass",
            name,
            repo.priority_classes.keys(),
            "priority classes",
            diags,
        );
    }
}

fn check_priority_classes(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    let mut defaults: Vec<(&str, Span)> = Vec::new();
    for class in repo.priority_classes.values() {
        let value = &class.spec.value;
        if value.value > HIGHEST_USER_PRIORITY || value.value < LOWEST_PRIORITY {
            diags.push(
                Diagnostic::new(
                    Code::PriorityValueOutOfRange,
                    format!(
                        "priority {} is outside {}..={} allowed for user-defined classes",
                        value.value, LOWEST_PRIORITY, HIGHEST_USER_PRIORITY
                    ),
                )
                .at(value.span, "out of range")
                .help(match value.value > HIGHEST_USER_PRIORITY {
                    true => "Kubernetes reserves values above 1000000000 for system classes",
                    false => "a PriorityClass value is a 32-bit integer, at least -2147483648",
                }),
            );
        }
        if class.name().starts_with("system-") {
            diags.push(
                Diagnostic::new(
                    Code::PriorityReservedPrefix,
                    format!(
                        "priority class name `{}` uses the reserved `system-` prefix",
                        class.name()
                    ),
                )
                .at(class.name_span(), "reserved prefix")
                .help("Kubernetes rejects user classes named `system-*`; choose another name"),
            );
        }
        if let Some(d) = &class.spec.global_default
            && d.value
        {
            defaults.push((class.name(), d.span));
        }
    }
    if defaults.len() > 1 {
        let (first, first_span) = defaults[0];
        for (name, span) in &defaults[1..] {
            diags.push(
                Diagnostic::new(
                    Code::MultipleGlobalDefault,
                    format!("`{name}` and `{first}` are both the global default priority class"),
                )
                .at(*span, "second global default")
                .related(first_span, "first global default")
                .help("Kubernetes allows one global default; set `globalDefault: false` on all but one"),
            );
        }
    }
}

fn check_reservations(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    for res in repo.reservations.values() {
        let spec = &res.spec;
        check_window(&spec.term, "the reservation's term", diags);
        let type_provider = spec.kind.value.provider();
        if type_provider != spec.provider.value {
            diags.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!(
                        "the type `{}` is one of `{}`'s, but the provider is `{}`",
                        spec.kind.value.as_str(),
                        type_provider.as_str(),
                        spec.provider.value.as_str()
                    ),
                )
                .at(spec.kind.span, "type of another provider")
                .related(spec.provider.span, "provider")
                .help("make the type and the provider agree"),
            );
        }
        let Some(cluster) = cluster_ref(repo, &spec.covers.cluster, diags) else {
            continue;
        };
        let Some(pool) = pool_ref(cluster, &spec.covers.pool, diags) else {
            continue;
        };
        let mismatches = spec.mismatches(&cluster.spec, pool);
        if !mismatches.is_empty() {
            diags.push(
                Diagnostic::new(
                    Code::ReservationPoolMismatch,
                    format!(
                        "reservation `{}` may not serve pool `{}`: {}",
                        res.name(),
                        pool.name.value,
                        mismatches.join("; ")
                    ),
                )
                .at(spec.covers.pool.span, "covered pool")
                .help("a reservation only serves instances of its own type, region, zone and provider"),
            );
        }
    }
}

fn check_catalogs(repo: &Repo, diags: &mut Vec<Diagnostic>) {
    let mut seen: BTreeMap<(Provider, String, String), Span> = BTreeMap::new();
    for catalog in repo.catalogs.values() {
        for entry in &catalog.spec.prices {
            let key = (
                entry.provider.value,
                entry.region.value.clone(),
                entry.instance_type.value.clone(),
            );
            if let Some(first) = seen.get(&key) {
                diags.push(
                    Diagnostic::new(
                        Code::DuplicatePrice,
                        format!(
                            "{} {} in {} is priced twice",
                            entry.provider.value.as_str(),
                            entry.instance_type.value,
                            entry.region.value
                        ),
                    )
                    .at(entry.instance_type.span, "second price")
                    .related(*first, "first price")
                    .help("keep one price per provider, region and instance type"),
                );
            } else {
                seen.insert(key, entry.instance_type.span);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_its_budget_a_bad_reference_gets_no_search() {
        let teams: Vec<String> = (0..5).map(|i| format!("team-{i}")).collect();
        let name = Spanned::new("team-1x".to_string(), Default::default());
        let mut diags = Vec::new();
        unknown(
            Code::UnknownTeam,
            "Team",
            &name,
            teams.iter(),
            "teams",
            &mut diags,
        );
        assert_eq!(diags[0].help.as_deref(), Some("did you mean `team-1`?"));
        diags.resize_with(SUGGESTION_READS / 5, || {
            Diagnostic::new(Code::UnknownTeam, "x")
        });
        unknown(
            Code::UnknownTeam,
            "Team",
            &name,
            teams.iter(),
            "teams",
            &mut diags,
        );
        let help = diags.last().unwrap().help.as_deref().unwrap();
        assert!(
            help.starts_with("name one of the repository's teams"),
            "{help}"
        );
    }
}
