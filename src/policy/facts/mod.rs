//! The facts a policy condition can read, as typed structs, and how they are built.
//!
//! Each subject (a request, a reservation, a team, a changed policy or
//! Config) has one struct of facts ([`RequestSubject`], ...) deriving
//! `Serialize` (what conditions read, through minijinja) and `JsonSchema`
//! (what the facts are). The documented fact model ([`model`]) is derived
//! from those schemas: every path a condition may use, its type, its meaning
//! (the field's doc comment) and the subjects that have it. Policies are
//! checked against it when they load (a misspelled fact is a diagnostic at
//! the rule), and `docs/policy.md`'s table is generated from it.

pub mod history;
pub mod model;
pub mod platform;
pub mod request;
pub mod reservation;
pub mod run_index;
pub mod runs;
pub mod seek;
pub mod supply;
pub mod team;
pub mod values;

#[cfg(test)]
mod tests;

pub use history::{TemplateDelta, TemplatesSubject, UsageDelta, UsageSubject};
pub use model::*;
pub use platform::{CatalogSubject, ClusterSubject, PriorityClassSubject};
pub(crate) use platform::{demand_facts, pool_facts};
pub use request::{RequestSubject, request};
pub use reservation::{ReservationSubject, reservation};
pub use team::{DocumentSubject, TeamSubject, document, team, team_quota_gpus};
pub use values::{lookup, show, to_json};

use super::change::Change;
use crate::capacity::Ledger;
use crate::model::*;
use minijinja::Value;
use serde_json::Value as Json;
use std::sync::OnceLock;

/// What a condition is evaluated against: each subject has its own facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SubjectKind {
    Request,
    Reservation,
    Team,
    Cluster,
    PriorityClass,
    PriceCatalog,
    /// An ApprovalPolicy or the Config.
    Document,
    UsageHistory,
    Templates,
}

impl SubjectKind {
    pub const ALL: [SubjectKind; 9] = [
        SubjectKind::Request,
        SubjectKind::Reservation,
        SubjectKind::Team,
        SubjectKind::Cluster,
        SubjectKind::PriorityClass,
        SubjectKind::PriceCatalog,
        SubjectKind::Document,
        SubjectKind::UsageHistory,
        SubjectKind::Templates,
    ];

    pub fn of(subject: Subject) -> SubjectKind {
        match subject {
            Subject::CapacityRequest => SubjectKind::Request,
            Subject::Reservation => SubjectKind::Reservation,
            Subject::Team => SubjectKind::Team,
            Subject::Cluster => SubjectKind::Cluster,
            Subject::PriorityClass => SubjectKind::PriorityClass,
            Subject::PriceCatalog => SubjectKind::PriceCatalog,
            Subject::ApprovalPolicy | Subject::Config => SubjectKind::Document,
            Subject::UsageHistory => SubjectKind::UsageHistory,
            Subject::Templates => SubjectKind::Templates,
        }
    }

    /// The subject in the plural, for the documentation.
    pub fn plural(self) -> &'static str {
        match self {
            SubjectKind::Request => "requests",
            SubjectKind::Reservation => "reservations",
            SubjectKind::Team => "teams",
            SubjectKind::Cluster => "clusters",
            SubjectKind::PriorityClass => "priority classes",
            SubjectKind::PriceCatalog => "price catalogs",
            SubjectKind::Document => "policy and config",
            SubjectKind::UsageHistory => "usage history",
            SubjectKind::Templates => "templates",
        }
    }

    /// The subject with an article, for messages.
    pub fn described(self) -> &'static str {
        match self {
            SubjectKind::Request => "a capacity request",
            SubjectKind::Reservation => "a reservation",
            SubjectKind::Team => "a team",
            SubjectKind::Cluster => "a cluster",
            SubjectKind::PriorityClass => "a priority class",
            SubjectKind::PriceCatalog => "a price catalog",
            SubjectKind::Document => "a policy or config change",
            SubjectKind::UsageHistory => "a change to the usage history",
            SubjectKind::Templates => "a change to the templates",
        }
    }

    /// The JSON Schema of the subject's facts.
    fn schema(self) -> Json {
        let schema = match self {
            SubjectKind::Request => schemars::schema_for!(RequestSubject),
            SubjectKind::Reservation => schemars::schema_for!(ReservationSubject),
            SubjectKind::Team => schemars::schema_for!(TeamSubject),
            SubjectKind::Cluster => schemars::schema_for!(ClusterSubject),
            SubjectKind::PriorityClass => schemars::schema_for!(PriorityClassSubject),
            SubjectKind::PriceCatalog => schemars::schema_for!(CatalogSubject),
            SubjectKind::Document => schemars::schema_for!(DocumentSubject),
            SubjectKind::UsageHistory => schemars::schema_for!(UsageSubject),
            SubjectKind::Templates => schemars::schema_for!(TemplatesSubject),
        };
        schema.to_value()
    }
}

/// One documented fact.
#[derive(Debug, Clone)]
pub struct Fact {
    /// Dotted path, as conditions write it: `request.gpus`.
    pub path: String,
    /// `string`, `number`, `integer`, `boolean`, `map` or `list of string`.
    pub ty: String,
    /// What it means (the field's doc comment).
    pub doc: String,
    /// The subjects that have it, in [`SubjectKind::ALL`] order.
    pub subjects: Vec<SubjectKind>,
}

impl Fact {
    pub fn applies_to(&self, kind: SubjectKind) -> bool {
        self.subjects.contains(&kind)
    }

    /// Subjects in words, for the documentation.
    pub fn subjects_text(&self) -> String {
        if self.subjects.len() == SubjectKind::ALL.len() {
            return "all".into();
        }
        let names: Vec<&str> = self.subjects.iter().map(|s| s.plural()).collect();
        names.join(", ")
    }
}

/// Every fact a condition may read, derived once from the subjects' schemas.
pub fn model() -> &'static [Fact] {
    static MODEL: OnceLock<Vec<Fact>> = OnceLock::new();
    MODEL.get_or_init(|| {
        let mut facts: Vec<Fact> = Vec::new();
        for kind in SubjectKind::ALL {
            let schema = kind.schema();
            let mut leaves = Vec::new();
            walk(&schema, &schema, "", &mut leaves, 0);
            for (path, ty, doc) in leaves {
                match facts.iter_mut().find(|f| f.path == path) {
                    Some(f) => f.subjects.push(kind),
                    None => facts.push(Fact {
                        path,
                        ty,
                        doc,
                        subjects: vec![kind],
                    }),
                }
            }
        }
        facts
    })
}

/// Collects the leaf facts of a schema node: `(path, type, doc)`.
fn walk(
    root: &Json,
    node: &Json,
    prefix: &str,
    out: &mut Vec<(String, String, String)>,
    depth: usize,
) {
    if depth > 16 {
        return;
    }
    let node = resolve(root, node);
    if let Some(props) = node.get("properties").and_then(Json::as_object) {
        for (name, prop) in props {
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}.{name}")
            };
            let target = resolve(root, prop);
            let nested = target.get("properties").is_some() || target.get("allOf").is_some();
            if nested {
                walk(root, target, &path, out, depth + 1);
            } else {
                let doc = prop
                    .get("description")
                    .or_else(|| target.get("description"))
                    .and_then(Json::as_str)
                    .unwrap_or("")
                    .replace('\n', " ");
                out.push((path, type_name(root, target), doc));
            }
        }
    }
    for part in node
        .get("allOf")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        walk(root, part, prefix, out, depth + 1);
    }
}

fn resolve<'a>(root: &'a Json, node: &'a Json) -> &'a Json {
    match node.get("$ref").and_then(Json::as_str) {
        Some(r) => root.pointer(r.trim_start_matches('#')).unwrap_or(node),
        None => node,
    }
}

fn type_name(root: &Json, node: &Json) -> String {
    let ty = node.get("type").and_then(Json::as_str).unwrap_or("value");
    match ty {
        "object" => "map".into(),
        "array" => {
            let item = node
                .get("items")
                .map(|i| type_name(root, resolve(root, i)))
                .unwrap_or_else(|| "value".into());
            format!("list of {item}")
        }
        other => other.into(),
    }
}

/// Whether a dotted variable path (as minijinja reports it) names a fact, a
/// prefix of facts (`request.window`), or an entry inside a map fact.
pub fn known(path: &str, kind: SubjectKind) -> bool {
    model().iter().filter(|f| f.applies_to(kind)).any(|f| {
        f.path == path
            || (f.path.starts_with(path) && f.path.as_bytes().get(path.len()) == Some(&b'.'))
            || (f.ty == "map"
                && path.starts_with(f.path.as_str())
                && path.as_bytes().get(f.path.len()) == Some(&b'.'))
    })
}

/// The fact paths of a subject, for help texts.
pub fn paths(kind: SubjectKind) -> Vec<&'static str> {
    model()
        .iter()
        .filter(|f| f.applies_to(kind))
        .map(|f| f.path.as_str())
        .collect()
}

/// The fact table of `docs/policy.md`: one row per fact.
pub fn table() -> String {
    let mut out = String::from("| fact | type | subjects | meaning |\n| --- | --- | --- | --- |\n");
    for f in model() {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            f.path,
            f.ty,
            f.subjects_text(),
            f.doc.replace('|', "\\|")
        ));
    }
    out
}

/// The facts of one subject, built.
#[derive(Debug, Clone)]
pub enum Facts {
    Request(Box<RequestSubject>),
    Reservation(Box<ReservationSubject>),
    Team(Box<TeamSubject>),
    Cluster(Box<ClusterSubject>),
    PriorityClass(Box<PriorityClassSubject>),
    PriceCatalog(Box<CatalogSubject>),
    Document(Box<DocumentSubject>),
    UsageHistory(Box<UsageSubject>),
    Templates(Box<TemplatesSubject>),
}

impl Facts {
    /// The facts as the value conditions are evaluated against.
    pub fn to_value(&self) -> Value {
        match self {
            Facts::Request(f) => values::value_of(f),
            Facts::Reservation(f) => values::value_of(f),
            Facts::Team(f) => values::value_of(f),
            Facts::Cluster(f) => values::value_of(f),
            Facts::PriorityClass(f) => values::value_of(f),
            Facts::PriceCatalog(f) => values::value_of(f),
            Facts::Document(f) => values::value_of(f),
            Facts::UsageHistory(f) => values::value_of(f),
            Facts::Templates(f) => values::value_of(f),
        }
    }

    /// One fact by its dotted path, read from the typed facts ([`seek`]).
    pub fn lookup(&self, path: &str) -> Option<Value> {
        match self {
            Facts::Request(f) => seek::seek(f, path),
            Facts::Reservation(f) => seek::seek(f, path),
            Facts::Team(f) => seek::seek(f, path),
            Facts::Cluster(f) => seek::seek(f, path),
            Facts::PriorityClass(f) => seek::seek(f, path),
            Facts::PriceCatalog(f) => seek::seek(f, path),
            Facts::Document(f) => seek::seek(f, path),
            Facts::UsageHistory(f) => seek::seek(f, path),
            Facts::Templates(f) => seek::seek(f, path),
        }
    }
}

/// A subject's facts as kept with its decision: the typed facts (a value tree
/// per decision would cost about ten times the memory), or a value tree
/// where there are no typed facts.
#[derive(Debug, Clone)]
pub enum Kept {
    Typed(std::sync::Arc<Facts>),
    Value(Value),
}

impl Default for Kept {
    fn default() -> Self {
        Kept::Value(Value::UNDEFINED)
    }
}

impl Kept {
    /// The facts as one value tree (built anew from typed facts).
    pub fn to_value(&self) -> Value {
        match self {
            Kept::Typed(f) => f.to_value(),
            Kept::Value(v) => v.clone(),
        }
    }

    /// One fact by its dotted path (`None` when there is none).
    pub fn lookup(&self, path: &str) -> Option<Value> {
        match self {
            Kept::Typed(f) => f.lookup(path),
            Kept::Value(v) => values::lookup(v, path),
        }
    }
}

/// What a pull request adds up to, per team: its requests' GPU and cost
/// changes summed per pool and over the whole change, and the GPUs the team
/// gained in the 30 days before the base (from git history). The tier of a
/// team's ask is set by these, never request by request.
#[derive(Debug, Clone, Default)]
pub struct Aggregates {
    /// (team, cluster, pool) -> the change's total there.
    pub by_pool: std::collections::HashMap<(String, String, String), Totals>,
    /// team -> the change's total across pools.
    pub by_team: std::collections::HashMap<String, Totals>,
    /// team -> GPU-equivalents its requests grew by in the 30 days before the base.
    pub recent_growth: std::collections::BTreeMap<String, f64>,
    /// Quota and cluster growth in the same 30 days.
    pub platform_growth: crate::policy::world::PlatformGrowth,
    /// team -> what the growth of its requests in those 30 days costs (from
    /// the start of the 30 days on, at today's prices).
    pub recent_growth_cost: std::collections::BTreeMap<String, f64>,
    /// team -> what its requests the change adds or grows, with those grown
    /// in those 30 days, add to its monthly bill at the busiest hour from
    /// `--at` on (today's prices).
    pub monthly_growth_with_recent: std::collections::BTreeMap<String, f64>,
    /// team -> the monthly rates of the change's requests over their windows
    /// (negative for what they were before).
    pub monthly_rates: std::collections::HashMap<String, Vec<(crate::capacity::Hours, f64)>>,
    /// What the change's reservations commit together: each one's term cost
    /// now minus before where it rises, summed (so splitting one commitment
    /// into many small reservations is judged as the whole, and a release
    /// does not offset a purchase).
    pub reservations_total_cost: f64,
    /// The windows and terms the change adds or moves, and those the base
    /// holds from `--at` on, per team and per capacity ([`runs`]).
    pub runs: runs::Runs,
    /// The requests the change adds, edits or removes: the head's others
    /// are the base's too (the base holds only the touched files' documents).
    pub changed_requests: std::collections::BTreeSet<String>,
    /// (cluster, pool) -> what the change's requests add to the stranded
    /// spend of the reservations in force there ([`crate::policy::stranding`]).
    pub stranding: std::collections::BTreeMap<(String, String), crate::policy::stranding::Stranded>,
    /// The head's reservations that can serve the pool they cover as the head
    /// has it: where the same change edits the pool, the reservation is judged
    /// against the pool it will serve (the pool's edit is judged as a cluster
    /// change).
    pub serving_in_head: std::collections::BTreeSet<String>,
    /// cluster -> the largest fall of a pool's price from the base to the head,
    /// each priced with its own catalogs and reservations: a catalog cut and a
    /// purchase-mix change in one pull request compound, though each alone is
    /// measured with the base's prices. Clusters in both revisions only.
    pub head_price_cut: std::collections::BTreeMap<String, f64>,
    /// GPUs the change's clusters gain, summed over those that grow (one
    /// that shrinks offsets none), and what they come to cost more a month:
    /// capacity split across clusters adds up.
    pub clusters_gained: Totals,
    /// (team, cluster, pool) -> the highest priority of the team's base
    /// requests that hold capacity there from `--at` on, and the highest of
    /// those that may preempt: built once, on the first request that asks
    /// (`request::team_priorities`), so many requests of one team and pool
    /// cost one pass, not one each.
    pub team_priorities_before: std::sync::OnceLock<TeamPriorities>,
    /// team -> the workload classes of what the change takes from it
    /// (`request::classes_released`), built once for every team.
    pub team_classes_released: std::sync::OnceLock<std::collections::HashMap<String, Vec<String>>>,
    /// The clusters and teams the change adds or edits, as the head has
    /// them: a quota raised with the pool change that makes its units worth
    /// more is weighed with the other half as it will stand (`team::team`,
    /// `team::teams_as_changed`).
    pub head_clusters: std::collections::BTreeMap<String, ClusterSpec>,
    pub head_teams: std::collections::BTreeMap<String, Document<TeamSpec>>,
}

/// (team, cluster, pool) -> the hours, priority and whether it may preempt of each request.
pub type TeamPriorities =
    std::collections::HashMap<(String, String, String), Vec<(crate::capacity::Hours, i64, bool)>>;

/// GPUs and costs added (negative: released).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    pub gpus: f64,
    pub monthly_cost: f64,
    pub total_cost: f64,
}

// ------------------------------------------------------------------ building

/// Facts every subject of a check shares, built once (a request's subject
/// holds them behind an `Arc` instead of a copy each).
#[derive(Debug, Default)]
pub struct Shared {
    pub config: std::sync::Arc<ConfigFacts>,
    clusters: std::collections::HashMap<String, std::sync::Arc<ClusterFacts>>,
}

impl Shared {
    pub fn new(world: &Repo, config: &ConfigSpec) -> Shared {
        Shared {
            config: std::sync::Arc::new(config_facts(config, world)),
            clusters: world
                .clusters
                .iter()
                .map(|(n, c)| (n.clone(), std::sync::Arc::new(cluster_facts(c))))
                .collect(),
        }
    }

    /// The facts of cluster `name`; only its name when the world lacks it.
    pub fn cluster(&self, name: &str) -> std::sync::Arc<ClusterFacts> {
        self.clusters.get(name).cloned().unwrap_or_else(|| {
            std::sync::Arc::new(ClusterFacts {
                name: name.to_string(),
                ..ClusterFacts::default()
            })
        })
    }
}

/// Everything the builders read.
pub struct Env<'a> {
    /// The world the change is judged in (`policy::world`): the base's
    /// documents that judge, the head's requests and reservations.
    pub world: &'a Repo,
    /// The base revision, when judging a change.
    pub base: Option<&'a Repo>,
    /// The Config that judges (the base's when checking a change).
    pub config: &'a ConfigSpec,
    /// Capacity arithmetic of the world.
    pub ledger: &'a Ledger,
    pub at: Timestamp,
    /// Costs, usage and forecasts of the world.
    pub analysis: &'a crate::cost::Analysis<'a>,
    /// What the change adds up to, per team.
    pub aggregates: &'a Aggregates,
    /// What the change does to the rendered objects and files.
    pub effects: &'a EffectFacts,
    /// The Config's and the clusters' facts, built once.
    pub shared: &'a Shared,
    /// Who opened the pull request, when known.
    pub author: Option<&'a str>,
    /// The others who wrote or pushed the change's commits, when read (GitHub): appended
    /// usage hours are a puller's only when they are all pullers too.
    pub co_authors: &'a [String],
}

pub(crate) fn config_facts(config: &ConfigSpec, world: &Repo) -> ConfigFacts {
    let t = &config.thresholds;
    ConfigFacts {
        priced: world.catalogs.values().any(|c| !c.spec.prices.is_empty()),
        organization: config.organization.clone().unwrap_or_default(),
        currency: config.currency.clone(),
        thresholds: ThresholdFacts {
            low_utilization: t.low_utilization.as_f64(),
            target_utilization: t.target_utilization.as_f64(),
            stranded_spend_share: t.stranded_spend_share.as_f64(),
            idle_spend_share: t.idle_spend_share.as_f64(),
            monthly_cost_review: crate::cost::prices::float(t.monthly_cost_review.0),
            director_cost: crate::cost::prices::float(t.director_cost.0),
            vp_cost: crate::cost::prices::float(t.vp_cost.0),
            auto_approval_gpus: t.auto_approval_gpus.0 as f64,
        },
        history_multiple: config.costs.history_multiple.as_f64(),
        chargeback: config.costs.chargeback.as_str().to_string(),
    }
}

pub(crate) fn change_facts(change: &Change) -> ChangeFacts {
    ChangeFacts {
        kind: change.kind.as_str().to_string(),
        fields: change.fields.clone(),
    }
}

pub(crate) fn cluster_facts(cluster: &Document<ClusterSpec>) -> ClusterFacts {
    let c = &cluster.spec;
    ClusterFacts {
        name: cluster.name().to_string(),
        environment: c.environment.value.as_str().to_string(),
        provider: c.provider.value.as_str().to_string(),
        region: c
            .region
            .as_ref()
            .map(|r| r.value.clone())
            .unwrap_or_default(),
        kueue: c.kueue.as_ref().is_some_and(|k| k.enabled),
        mig_strategy: match c.mig_strategy.value {
            MigStrategy::Single => "single",
            MigStrategy::Mixed => "mixed",
        }
        .to_string(),
        own_usage_source: c.prometheus.is_some(),
    }
}

/// A team's identity, budget and usage (its quota is set by the caller).
pub(crate) fn team_base(env: &Env<'_>, team: Option<&Document<TeamSpec>>, name: &str) -> TeamFacts {
    use crate::cost::prices::float as f;
    let round = values::round;
    let budget = team
        .and_then(|t| t.spec.monthly_budget.as_ref())
        .and_then(|b| rust_decimal::prelude::ToPrimitive::to_f64(&b.value.0));
    let usage = env.analysis.usage().get(name);
    let months = env.analysis.budget(name);
    let now = months.first();
    TeamFacts {
        name: name.to_string(),
        cost_center: team
            .map(|t| t.spec.cost_center.value.clone())
            .unwrap_or_default(),
        leads: team
            .map(|t| values::texts(&t.spec.leads))
            .unwrap_or_default(),
        monthly_budget: budget.unwrap_or(0.0),
        has_budget: budget.is_some(),
        quota_gpus: 0.0,
        usage: TeamUsageFacts {
            has_usage: usage.is_some(),
            utilization: round(usage.and_then(|u| u.utilization).unwrap_or(0.0)),
            low_utilization: usage.is_some_and(|u| u.low),
            mean_allocated_gpus: round(usage.map(|u| u.mean_allocated).unwrap_or(0.0)),
            mean_used_gpus: round(usage.map(|u| u.mean_used).unwrap_or(0.0)),
            rightsized_gpus: usage.map(|u| u.rightsized_gpus).unwrap_or(0),
            idle_cost: usage.map(|u| f(u.idle_cost)).unwrap_or(0.0),
            cost_30d: usage.map(|u| f(u.cost)).unwrap_or(0.0),
            chargeback_30d: usage.map(|u| f(u.chargeback)).unwrap_or(0.0),
            projected_spend: now.map(|mo| f(mo.spend)).unwrap_or(0.0),
            budget_share: values::round_down(now.and_then(|mo| mo.share).unwrap_or(0.0)),
            budget_alert: now.and_then(|mo| mo.alert).map(f).unwrap_or(0.0),
            max_budget_share: values::round_down(
                months.iter().filter_map(|mo| mo.share).fold(0.0, f64::max),
            ),
        },
    }
}
