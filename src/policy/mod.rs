//! The approval policy: which tier a change lands in, who must approve it,
//! and which rules deny or warn.
//!
//! [`check`] is the whole evaluation of a repository (or of a change against
//! its base): it picks the policy that judges (the base's, or the built-in
//! pack from `policies/default.yaml`), compiles it ([`compile`]), builds the
//! facts of each subject ([`facts`]) and evaluates them ([`eval`]). It is a
//! pure function of its inputs and the time it is given.

pub mod approvals;
pub mod case;
pub mod change;
pub mod compile;
pub mod eval;
pub mod facts;
pub mod judge;
pub mod lint;
pub mod measure;
pub mod roles;
pub mod running;
pub mod selectors;
pub mod standing;
pub mod stranding;
pub mod testing;
pub mod typecheck;
pub mod world;

use crate::capacity::Ledger;
use crate::diag::{Code, Diagnostic, Span};
use crate::model::*;
use change::{Change, ChangeKind, Changed};
use rayon::prelude::*;

/// The default policy pack, embedded.
pub const DEFAULT_PACK: &str = include_str!("../../policies/default.yaml");
/// The path the default pack is shown under.
pub const DEFAULT_PACK_PATH: &str = "policies/default.yaml";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    Approved,
    NeedsApproval,
    Denied,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Approved => "approved",
            Outcome::NeedsApproval => "needs-approval",
            Outcome::Denied => "denied",
        }
    }
}

/// Approvals needed from one role.
#[derive(Clone, Debug, PartialEq)]
pub struct Approval {
    pub role: roles::Role,
    pub count: u32,
    /// GitHub teams (`org/slug`) whose members act in the role.
    pub teams: Vec<String>,
    /// GitHub users who act in the role.
    pub users: Vec<String>,
    /// Why: `tier director` or `rule reservations-need-capacity-review`.
    pub from: String,
}

/// A rule that fired.
#[derive(Clone, Debug)]
pub struct Finding {
    pub rule: String,
    pub effect: Effect,
    pub message: String,
    /// The rule's name in the policy.
    pub rule_span: Span,
}

/// One condition evaluated, for `explain`.
#[derive(Clone, Debug)]
pub struct TraceStep {
    /// `tier` or `rule`.
    pub kind: &'static str,
    pub name: String,
    pub condition: String,
    pub result: Result<bool, String>,
    /// Fact paths read and their values.
    pub reads: Vec<(String, String)>,
    pub effect: String,
}

/// The policy's verdict on one subject.
#[derive(Clone, Debug)]
pub struct Decision {
    pub outcome: Outcome,
    pub tier: Option<String>,
    pub approvals: Vec<Approval>,
    pub missing_fields: Vec<&'static str>,
    pub findings: Vec<Finding>,
    pub trace: Vec<TraceStep>,
    pub facts: facts::Kept,
    /// A condition or message could not be evaluated.
    pub error: bool,
}

/// A subject and its decision.
#[derive(Clone, Debug)]
pub struct Evaluated {
    pub subject: Subject,
    pub name: String,
    pub change: ChangeKind,
    pub fields: Vec<String>,
    /// Where the document is (its name in the head, or in the base when removed).
    pub location: Option<Span>,
    pub decision: Decision,
}

/// Where the policy came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicySource {
    BuiltIn,
    Repository { names: Vec<String> },
}

/// Everything a check reads.
pub struct CheckInput<'a> {
    /// The proposed state (the working tree), validated.
    pub head: &'a Repo,
    /// The base revision's documents, when checking a change.
    pub base: Option<&'a Repo>,
    /// Files of the head identical in the base: their documents are unchanged
    /// (and the base may leave out its copies of them).
    pub same_files: &'a std::collections::HashSet<crate::diag::FileId>,
    pub at: Timestamp,
    /// The built-in pack, parsed, used when the judging revision has no policy.
    pub default_pack: &'a Document<PolicySpec>,
    /// Record every condition evaluated with the facts it read (for `explain`
    /// and the comment's details); off, tiers stop at the first that holds.
    pub trace: bool,
    /// The world the change is judged in ([`world::judging`]) and its costs,
    /// usage and forecasts at `at`, when the caller has built them (to show
    /// them too); built here otherwise.
    pub world: Option<&'a Repo>,
    pub analysis: Option<&'a crate::cost::Analysis<'a>>,
    /// GPU-equivalents each team gained in the 30 days before the base, from
    /// the base's git history (empty when there is none).
    pub recent_growth: &'a std::collections::BTreeMap<String, f64>,
    /// Quota and cluster growth in the same 30 days (empty without history).
    pub platform_growth: &'a world::PlatformGrowth,
    /// How the template overrides changed, when they did.
    pub templates: Option<&'a facts::TemplateDelta>,
    /// What the change does to the rendered objects and files.
    pub effects: &'a facts::EffectFacts,
    /// Who opened the pull request (`check --github`: the pull request's
    /// author; `check --author`), when known.
    pub author: Option<&'a str>,
    /// Who else wrote or pushed the change's commits (`check --github`): logins, and a
    /// note for a commit linked to no account or pushers that could not be read.
    pub co_authors: &'a [String],
    /// Files the base Config names (its CA file) that the change edits:
    /// the Config is changed in its `usage` ([`crate::load::base::Base`]).
    pub config_files_changed: &'a [String],
}

/// The result of a check.
pub struct CheckResult {
    pub evaluated: Vec<Evaluated>,
    pub changes: Vec<Changed>,
    pub diagnostics: Vec<Diagnostic>,
    pub policy: PolicySource,
}

/// Parses the built-in default pack into `sources` (shown as `capops:policies/default.yaml`).
pub fn default_pack(sources: &mut crate::diag::SourceMap) -> Option<Document<PolicySpec>> {
    let input = crate::load::Input {
        path: DEFAULT_PACK_PATH.to_string(),
        content: crate::load::Content::Bytes(DEFAULT_PACK.as_bytes().to_vec()),
    };
    let taken = std::mem::take(sources);
    let loaded = crate::load::load_with(taken, vec![input], crate::diag::SourceKind::BuiltIn, None);
    *sources = loaded.sources;
    loaded.docs.into_iter().find_map(|d| match d {
        crate::load::TypedDoc::ApprovalPolicy(p) => Some(p),
        _ => None,
    })
}

/// The world a check judges in: the base's judging documents with the
/// head's commitments, or the head itself without a base.
pub fn world_of<'r>(
    head: &'r Repo,
    base: Option<&Repo>,
    same_files: &std::collections::HashSet<crate::diag::FileId>,
) -> std::borrow::Cow<'r, Repo> {
    match base {
        Some(b) => std::borrow::Cow::Owned(world::judging(b, head, same_files)),
        None => std::borrow::Cow::Borrowed(head),
    }
}

/// Evaluates a repository, or the change from `base` to `head`.
pub fn check(input: &CheckInput<'_>) -> CheckResult {
    let judge = input.base.unwrap_or(input.head);
    let mut diagnostics = Vec::new();
    let repo_policies: Vec<&Document<PolicySpec>> = judge.policies.values().collect();
    let (policies, source) = if repo_policies.is_empty() {
        (vec![input.default_pack], PolicySource::BuiltIn)
    } else {
        let names = repo_policies.iter().map(|p| p.name().to_string()).collect();
        (repo_policies, PolicySource::Repository { names })
    };
    let config = judge.config_spec();
    let env = compile::environment_with_messages(&policies, &config.currency);
    let compiled = compile::compile(&env, &policies, &mut diagnostics);
    roles_without_members(&compiled, &config, &policies, &mut diagnostics);

    let own_world;
    let world = match input.world {
        Some(w) => w,
        None => {
            own_world = world_of(input.head, input.base, input.same_files);
            &own_world
        }
    };
    let ledger = Ledger::build(world);
    let own;
    let analysis = match input.analysis {
        Some(a) => a,
        None => {
            own = crate::cost::Analysis::new(world, input.at);
            &own
        }
    };
    let mut changes: Vec<Changed> = match input.base {
        Some(base) => change::diff(base, input.head, input.same_files),
        None => everything(input.head),
    };
    if let Some(base) = input
        .base
        .filter(|_| !input.config_files_changed.is_empty())
    {
        change::config_files_changed(&mut changes, base, input.head);
    }
    // The state the change leaves must keep the capacity invariants (no team
    // over its quota, no pool over-committed, from `at` on).
    let head_ledger;
    let proposed_ledger = if std::ptr::eq(world, input.head) {
        &ledger
    } else {
        head_ledger = Ledger::build(input.head);
        &head_ledger
    };
    diagnostics.extend(crate::validate::invariants::check(
        input.head,
        proposed_ledger,
        input.at,
    ));
    let mut aggregates = judge::aggregates(world, analysis, &changes, input.recent_growth);
    aggregates.stranding = stranding::released(world, input.base, analysis, &changes);
    aggregates.platform_growth = input.platform_growth.clone();
    aggregates.clusters_gained = judge::clusters_gained(world, input.head, &changes, input.at);
    aggregates.serving_in_head = input
        .head
        .reservations
        .iter()
        .filter(|(_, r)| {
            let s = &r.spec;
            input
                .head
                .clusters
                .get(&s.covers.cluster.value)
                .is_some_and(|c| {
                    c.spec
                        .node_pools
                        .iter()
                        .find(|p| p.name.value.as_str() == s.covers.pool.value)
                        .is_some_and(|p| s.mismatches(&c.spec, p).is_empty())
                })
        })
        .map(|(n, _)| n.clone())
        .collect();
    let edited = |kind: Kind| {
        changes
            .iter()
            .filter(move |c| c.kind == kind)
            .filter(|c| !matches!(c.change.kind, ChangeKind::Unchanged | ChangeKind::Removed))
    };
    aggregates.head_clusters = edited(Kind::Cluster)
        .filter_map(|c| {
            Some((
                c.name.clone(),
                input.head.clusters.get(&c.name)?.spec.clone(),
            ))
        })
        .collect();
    aggregates.head_teams = edited(Kind::Team)
        .filter_map(|c| Some((c.name.clone(), input.head.teams.get(&c.name)?.clone())))
        .collect();
    aggregates.recent_growth_cost = judge::recent_growth_cost(analysis, input.platform_growth);
    aggregates.monthly_growth_with_recent = judge::monthly_growth_with_recent(
        analysis,
        input.platform_growth,
        &aggregates.monthly_rates,
        analysis.at.hour_index(),
    );
    if let Some(base) = input.base {
        // The base side priced in the judging world: the base's catalogs and
        // its reservations whole (the base holds only the touched files').
        for (name, now) in &input.head.clusters {
            if let Some(then) = base.clusters.get(name) {
                let cut = measure::price_cut((world, then), (input.head, now), input.at);
                aggregates.head_price_cut.insert(name.clone(), cut);
            }
        }
    }
    let shared = facts::Shared::new(world, &config);
    let fenv = facts::Env {
        world,
        base: input.base,
        config: &config,
        ledger: &ledger,
        at: input.at,
        analysis,
        aggregates: &aggregates,
        effects: input.effects,
        shared: &shared,
        author: input.author,
        co_authors: input.co_authors,
    };
    let mut targets: Vec<judge::Target> = changes
        .iter()
        .cloned()
        .map(|c| judge::Target::Document(Box::new(c)))
        .collect();
    if let Some(base) = input.base
        && !std::sync::Arc::ptr_eq(&base.usage, &input.head.usage)
    {
        let ceiling =
            |k: &crate::model::SeriesKey| facts::team::holding_ceiling(base, &k.team, &k.cluster);
        let delta = facts::history::usage_delta(
            &base.usage,
            &input.head.usage,
            input.at.hour_index(),
            &ceiling,
        );
        if !delta.is_empty() {
            targets.push(judge::Target::Usage(delta));
        }
    }
    if let Some(t) = input.templates.filter(|t| !t.is_empty()) {
        targets.push(judge::Target::Templates(t.clone()));
    }

    let evaluated_and_diags: Vec<(Evaluated, Vec<Diagnostic>)> = targets
        .par_iter()
        .filter_map(|t| evaluate_one(&env, &compiled, &fenv, input.head, t, input.trace))
        .collect();
    let mut evaluated = Vec::with_capacity(evaluated_and_diags.len());
    for (e, d) in evaluated_and_diags {
        evaluated.push(e);
        diagnostics.extend(d);
    }
    // Standing requests judged against the head's version of what moved
    // under them (the changed clusters and priority classes): only denials count.
    let standing = input
        .base
        .map(|b| standing::affected(b, input.head, &changes, input.at))
        .unwrap_or_default();
    if !standing.is_empty() {
        let moved = standing::world(world, input.head, &changes);
        let moved_config = standing::head_default(&config, input.head);
        let moved_ledger = Ledger::build(&moved);
        let moved_analysis = crate::cost::Analysis::new(&moved, input.at);
        let moved_shared = facts::Shared::new(&moved, &moved_config);
        let menv = facts::Env {
            config: &moved_config,
            world: &moved,
            ledger: &moved_ledger,
            analysis: &moved_analysis,
            shared: &moved_shared,
            ..fenv
        };
        let judged: Vec<(Evaluated, Vec<Diagnostic>)> = standing
            .into_par_iter()
            .filter_map(|c| {
                let t = judge::Target::Document(Box::new(c));
                evaluate_one(&env, &compiled, &menv, input.head, &t, input.trace)
            })
            .collect();
        for (mut e, d) in judged {
            let Some(decision) = standing::only_denials(e.decision) else {
                continue;
            };
            diagnostics.extend(d);
            match evaluated
                .iter_mut()
                .find(|o| o.subject == e.subject && o.name == e.name)
            {
                // A request the change edits: the denials join its decision.
                Some(own) => standing::join(&mut own.decision, decision),
                None => {
                    e.decision = decision;
                    evaluated.push(e);
                }
            }
        }
    }
    crate::diag::normalize(&mut diagnostics);
    CheckResult {
        evaluated,
        changes,
        diagnostics,
        policy: source,
    }
}

/// Without a base, every request, reservation and team is judged as it stands.
fn everything(repo: &Repo) -> Vec<Changed> {
    let unchanged = |kind: Kind, name: &String| Changed {
        kind,
        name: name.clone(),
        change: Change::unchanged(),
    };
    repo.requests
        .keys()
        .map(|n| unchanged(Kind::CapacityRequest, n))
        .chain(
            repo.reservations
                .keys()
                .map(|n| unchanged(Kind::Reservation, n)),
        )
        .chain(repo.teams.keys().map(|n| unchanged(Kind::Team, n)))
        .collect()
}

fn evaluate_one(
    env: &minijinja::Environment<'static>,
    compiled: &compile::Compiled<'_>,
    fenv: &facts::Env<'_>,
    head: &Repo,
    target: &judge::Target,
    trace: bool,
) -> Option<(Evaluated, Vec<Diagnostic>)> {
    let mut diags = Vec::new();
    let judged = judge::facts_of(fenv, head, target)?;
    // Only the policy's own evaluation is timed: building the facts (and the
    // forecasts and costs they read, built once on first use) is capops'
    // work, not the policy's.
    let _running = running::start(
        || format!("{} `{}`", target.subject().as_str(), target.name()),
        &compiled.labels,
    );
    let roles = roles::Members {
        config: fenv.config,
        team_leads: judged.team_leads,
        receiving_leads: judged.receiving_leads,
    };
    let subject = target.subject();
    let decision = eval::evaluate(
        env,
        compiled,
        subject,
        facts::Kept::Typed(std::sync::Arc::new(judged.facts)),
        &roles,
        trace,
        &mut diags,
    );
    let (change, fields) = match target {
        judge::Target::Document(c) => (c.change.kind, c.change.fields.clone()),
        _ => (ChangeKind::Modified, Vec::new()),
    };
    Some((
        Evaluated {
            subject,
            name: target.name().to_string(),
            change,
            fields,
            location: judged.location,
            decision,
        },
        diags,
    ))
}

/// Roles the policy asks for that nobody holds: such approvals can never be given.
fn roles_without_members(
    compiled: &compile::Compiled<'_>,
    config: &ConfigSpec,
    policies: &[&Document<PolicySpec>],
    diags: &mut Vec<Diagnostic>,
) {
    let mut asked: Vec<(&str, Span)> = Vec::new();
    for t in &compiled.tiers {
        for (role, _, span) in &t.approvals {
            asked.push((role, *span));
        }
    }
    for r in &compiled.rules {
        if let Some(role) = &r.role {
            asked.push((role, r.span));
        }
    }
    let builtin = policies
        .first()
        .is_some_and(|p| p.name() == "default" && policies.len() == 1);
    let mut seen = std::collections::BTreeSet::new();
    for (role, span) in asked {
        if !seen.insert(role) {
            continue;
        }
        if roles::Members::is_empty_role(config, &roles::Role::parse(role)) {
            diags.push(
                Diagnostic::new(
                    Code::RoleWithoutMembers,
                    format!("the policy asks for approvals from `{role}`, but no team or user holds that role"),
                )
                .at(span, "role without members")
                .help(if builtin {
                    format!("the default policy uses the roles team-lead, director, capacity-review and vp: add `{role}` under the Config's `spec.roles`")
                } else {
                    format!("add `{role}` with its GitHub teams or users under the Config's `spec.roles`")
                }),
            );
        }
    }
}
