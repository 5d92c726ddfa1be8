//! The approval policy: which tier a change lands in, who must approve it,
//! and which rules deny or warn.
//!
//! [`check`] is the whole evaluation of a repository (or of a change against
//! its base): it picks the policy that judges (the base's, or the built-in
//! pack from `policies/default.yaml`), compiles it ([`compile`]), builds the
//! facts of each subject ([`facts`]) and evaluates them ([`eval`]). It is a
//! pure function of its inputs and the time it is given.

pub mod approvals;
pub mod change;
pub mod compile;
pub mod eval;
pub mod facts;
pub mod lint;
pub mod roles;
pub mod testing;

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
    pub facts: minijinja::Value,
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
    /// Costs, usage and forecasts of `head` at `at`, when the caller has
    /// built them (to show them too); built here otherwise.
    pub analysis: Option<&'a crate::cost::Analysis<'a>>,
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
    let loaded = crate::load::load_with(taken, vec![input], crate::diag::SourceKind::BuiltIn);
    *sources = loaded.sources;
    loaded.docs.into_iter().find_map(|d| match d {
        crate::load::TypedDoc::ApprovalPolicy(p) => Some(p),
        _ => None,
    })
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
    let env = compile::environment_with_messages(&policies);
    let compiled = compile::compile(&env, &policies, &mut diagnostics);
    roles_without_members(&compiled, &config, &policies, &mut diagnostics);

    let ledger = Ledger::build(input.head);
    let own;
    let analysis = match input.analysis {
        Some(a) => a,
        None => {
            own = crate::cost::Analysis::new(input.head, input.at);
            &own
        }
    };
    let fenv = facts::Env {
        head: input.head,
        base: input.base,
        config: &config,
        ledger: &ledger,
        at: input.at,
        analysis,
    };

    let changes: Vec<Changed> = match input.base {
        Some(base) => change::diff(base, input.head, input.same_files),
        None => everything(input.head),
    };

    let evaluated_and_diags: Vec<(Evaluated, Vec<Diagnostic>)> = changes
        .par_iter()
        .filter_map(|c| evaluate_one(&env, &compiled, &fenv, c, input.trace))
        .collect();
    let mut evaluated = Vec::with_capacity(evaluated_and_diags.len());
    for (e, d) in evaluated_and_diags {
        evaluated.push(e);
        diagnostics.extend(d);
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
    c: &Changed,
    trace: bool,
) -> Option<(Evaluated, Vec<Diagnostic>)> {
    let mut diags = Vec::new();
    let head = fenv.head;
    let (subject, location, facts_value, leads) = match c.kind {
        Kind::CapacityRequest => {
            let subject = Subject::CapacityRequest;
            let Some(doc) = head.requests.get(&c.name) else {
                return Some((removed(subject, c, fenv), diags));
            };
            let change =
                with_previous_as_current(&c.change, || TypedDoc::CapacityRequest(doc.clone()));
            // Authority comes from the judging revision: a pull request that
            // names new leads cannot have them approve its own requests.
            let leads = fenv
                .base
                .unwrap_or(head)
                .teams
                .get(&doc.spec.team.value)
                .map(|t| t.spec.leads.iter().map(|l| l.value.clone()).collect())
                .unwrap_or_default();
            (
                subject,
                Some(doc.name_span()),
                facts::Facts::Request(Box::new(facts::request(fenv, doc, &change))),
                leads,
            )
        }
        Kind::Reservation => {
            let subject = Subject::Reservation;
            let Some(doc) = head.reservations.get(&c.name) else {
                return Some((removed(subject, c, fenv), diags));
            };
            let change = with_previous_as_current(&c.change, || TypedDoc::Reservation(doc.clone()));
            (
                subject,
                Some(doc.name_span()),
                facts::Facts::Reservation(Box::new(facts::reservation(fenv, doc, &change))),
                Vec::new(),
            )
        }
        Kind::Team => {
            let subject = Subject::Team;
            let Some(doc) = head.teams.get(&c.name) else {
                return Some((removed(subject, c, fenv), diags));
            };
            let change = with_previous_as_current(&c.change, || TypedDoc::Team(doc.clone()));
            let judging = fenv.base.map_or(Some(doc), |b| b.teams.get(&c.name));
            let leads = judging
                .map(|t| t.spec.leads.iter().map(|l| l.value.clone()).collect())
                .unwrap_or_default();
            (
                subject,
                Some(doc.name_span()),
                facts::Facts::Team(Box::new(facts::team(fenv, doc, &change))),
                leads,
            )
        }
        Kind::ApprovalPolicy | Kind::Config => {
            let subject = if c.kind == Kind::Config {
                Subject::Config
            } else {
                Subject::ApprovalPolicy
            };
            let location = match c.kind {
                Kind::Config => head.config.as_ref().map(|d| d.origin.kind_span),
                _ => head.policies.get(&c.name).map(|d| d.origin.kind_span),
            }
            .or_else(|| {
                let base = fenv.base?;
                match c.kind {
                    Kind::Config => base.config.as_ref().map(|d| d.origin.kind_span),
                    _ => base.policies.get(&c.name).map(|d| d.origin.kind_span),
                }
            });
            (
                subject,
                location,
                facts::Facts::Document(Box::new(facts::document(fenv, c.kind, &c.name, &c.change))),
                Vec::new(),
            )
        }
        // Clusters, priority classes and price catalogs have no approval rules yet.
        _ => return None,
    };
    let roles = roles::Members {
        config: fenv.config,
        team_leads: leads,
    };
    let decision = eval::evaluate(
        env,
        compiled,
        subject,
        facts_value.to_value(),
        &roles,
        trace,
        &mut diags,
    );
    Some((
        Evaluated {
            subject,
            name: c.name.clone(),
            change: c.change.kind,
            fields: c.change.fields.clone(),
            location,
            decision,
        },
        diags,
    ))
}

/// When judging without a base, "before" is the document as it stands.
fn with_previous_as_current(change: &Change, current: impl FnOnce() -> TypedDoc) -> Change {
    if change.kind != ChangeKind::Unchanged {
        return change.clone();
    }
    Change {
        previous: Some(current()),
        ..change.clone()
    }
}

/// A removed document releases what it held: approved, nothing to evaluate.
fn removed(subject: Subject, c: &Changed, fenv: &facts::Env<'_>) -> Evaluated {
    let location = fenv.base.and_then(|b| match subject {
        Subject::CapacityRequest => b.requests.get(&c.name).map(|d| d.name_span()),
        Subject::Reservation => b.reservations.get(&c.name).map(|d| d.name_span()),
        Subject::Team => b.teams.get(&c.name).map(|d| d.name_span()),
        _ => None,
    });
    Evaluated {
        subject,
        name: c.name.clone(),
        change: ChangeKind::Removed,
        fields: Vec::new(),
        location,
        decision: Decision {
            outcome: Outcome::Approved,
            tier: None,
            approvals: Vec::new(),
            missing_fields: Vec::new(),
            findings: Vec::new(),
            trace: Vec::new(),
            facts: minijinja::Value::UNDEFINED,
            error: false,
        },
    }
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
