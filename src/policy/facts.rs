//! The facts a policy condition can read, and how they are built.
//!
//! [`FACTS`] is the documented fact model: every variable path a condition
//! may use, its type, what it means and which subjects have it. Policies are
//! checked against it when they load (a misspelled fact is a diagnostic at the
//! rule), `docs/policy.md` is checked against it, and a test checks that the
//! builders below produce exactly these paths. Later stages (forecasts, costs,
//! utilization) add entries here.

use super::change::{Change, ChangeKind};
use crate::capacity::{self, Hours, Ledger};
use crate::model::*;
use minijinja::Value;
use std::collections::BTreeMap;

/// What a condition is evaluated against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SubjectKind {
    Request,
    Reservation,
    Team,
    /// An ApprovalPolicy or the Config.
    Document,
}

const R: u8 = 1;
const V: u8 = 2;
const T: u8 = 4;
const D: u8 = 8;
const ALL: u8 = R | V | T | D;

impl SubjectKind {
    fn bit(self) -> u8 {
        match self {
            SubjectKind::Request => R,
            SubjectKind::Reservation => V,
            SubjectKind::Team => T,
            SubjectKind::Document => D,
        }
    }

    pub fn of(subject: Subject) -> SubjectKind {
        match subject {
            Subject::CapacityRequest => SubjectKind::Request,
            Subject::Reservation => SubjectKind::Reservation,
            Subject::Team => SubjectKind::Team,
            Subject::ApprovalPolicy | Subject::Config => SubjectKind::Document,
        }
    }
}

/// One documented fact.
#[derive(Debug)]
pub struct Fact {
    pub path: &'static str,
    pub ty: &'static str,
    pub doc: &'static str,
    subjects: u8,
}

impl Fact {
    pub fn applies_to(&self, kind: SubjectKind) -> bool {
        self.subjects & kind.bit() != 0
    }

    /// Subjects in words, for the documentation.
    pub fn subjects(&self) -> String {
        if self.subjects == ALL {
            return "all".into();
        }
        let mut v = Vec::new();
        for (bit, name) in [
            (R, "requests"),
            (V, "reservations"),
            (T, "teams"),
            (D, "policy and config"),
        ] {
            if self.subjects & bit != 0 {
                v.push(name);
            }
        }
        v.join(", ")
    }
}

macro_rules! facts {
    ($($path:literal, $ty:literal, $subjects:expr, $doc:literal;)*) => {
        /// Every fact a condition may read.
        pub const FACTS: &[Fact] = &[$(Fact { path: $path, ty: $ty, doc: $doc, subjects: $subjects }),*];
    };
}

facts! {
    "now", "string", ALL, "The evaluation time (`--at`, default now), RFC 3339.";
    "config.organization", "string", ALL, "The Config's organization (empty when unset).";
    "config.currency", "string", ALL, "Currency of every amount (ISO 4217).";
    "config.thresholds.low_utilization", "number", ALL, "Config threshold: low utilization share.";
    "config.thresholds.target_utilization", "number", ALL, "Config threshold: target utilization share.";
    "config.thresholds.stranded_spend_share", "number", ALL, "Config threshold: stranded-spend share of a reservation's cost.";
    "config.thresholds.monthly_cost_review", "number", ALL, "Config threshold: monthly cost that needs a capacity review.";
    "change.kind", "string", ALL, "`added`, `modified`, `removed`, or `unchanged` (evaluated without `--base`).";
    "change.fields", "list of string", ALL, "Top-level `spec` fields that differ from the base (modified documents; empty otherwise).";
    "change.delta_gpus", "number", R | V | T, "GPUs now minus GPUs before (requests, reservations) or quota GPUs now minus before (teams); the whole size when added.";
    "change.previous.gpus", "number", R | V | T, "GPU-equivalents before the change (0 when added).";
    "change.previous.resources", "map", R, "Resources before the change (empty when added).";
    "change.previous.window.start", "string", R, "Window start before the change (empty when added or open).";
    "change.previous.window.end", "string", R, "Window end before the change (empty when added or open).";
    "change.previous.pool", "string", R, "Pool before the change (empty when added).";
    "change.previous.workload_class", "string", R, "Workload class before the change (empty when added).";
    "change.previous.priority_class", "string", R, "Priority class before the change (empty when added).";
    "request.name", "string", R, "The request's name.";
    "request.team", "string", R, "The team asking.";
    "request.cluster", "string", R, "The cluster.";
    "request.pool", "string", R, "The node pool.";
    "request.resources", "map", R, "Resource name to count, as written.";
    "request.units", "integer", R, "Sum of the counts (GPUs, MIG instances, time-sliced replicas).";
    "request.gpus", "number", R, "GPU-equivalents: a whole GPU is 1, a MIG instance its compute slices over the GPU's total (7, or 4 on A30), a time-sliced replica 1 / replicas.";
    "request.gpu_hours", "number", R, "GPU-equivalents times the window's hours (open-ended requests: one year from `now`).";
    "request.has_window", "boolean", R, "Whether the request states a window.";
    "request.window.start", "string", R, "Window start, RFC 3339 (empty when open).";
    "request.window.end", "string", R, "Window end, RFC 3339 (empty when open).";
    "request.window.hours", "integer", R, "Window length in hours (one year when open).";
    "request.window.days", "number", R, "Window length in days.";
    "request.window.active", "boolean", R, "Whether the window covers `now`.";
    "request.window.starts_in_days", "number", R, "Days from `now` to the start (negative once started; 0 when open).";
    "request.workload_class", "string", R, "`inference`, `training`, `research` or `development`.";
    "request.priority_class", "string", R, "Priority class, or the Config's default (empty when neither).";
    "request.priority", "integer", R, "Value of the priority class (0 when none).";
    "request.preemptible", "boolean", R, "Whether the workloads tolerate preemption.";
    "request.justification", "string", R, "The justification (empty when absent).";
    "request.has_justification", "boolean", R, "Whether a non-blank justification is given.";
    "request.success_metrics", "list of string", R, "Success metrics.";
    "request.has_success_metrics", "boolean", R, "Whether at least one success metric is given.";
    "request.business_case", "string", R, "The business case (empty when absent).";
    "request.has_business_case", "boolean", R, "Whether a non-blank business case is given.";
    "request.requested_by", "string", R, "Who asked (empty when absent).";
    "request.has_price", "boolean", R, "Whether the pool's instance type has a price in a PriceCatalog.";
    "request.gpu_hour_price", "number", R, "The pool's blended GPU-hour price: reserved, on-demand and spot prices weighed by its purchase mix (0 without a price).";
    "request.hourly_cost", "number", R, "GPU-equivalents times the GPU-hour price.";
    "request.monthly_cost", "number", R, "The cost of an average month (730 hours) of the request.";
    "request.total_cost", "number", R, "The cost over the window (open-ended requests: one year from `now`).";
    "change.previous.monthly_cost", "number", R, "Monthly cost before the change (0 when added).";
    "change.delta_monthly_cost", "number", R, "Monthly cost now minus before.";
    "change.delta_total_cost", "number", R, "Cost over the window now minus before.";
    "team.name", "string", R | T, "The team's name.";
    "team.cost_center", "string", R | T, "Its cost center.";
    "team.leads", "list of string", R | T, "Its leads (the team-lead role).";
    "team.monthly_budget", "number", R | T, "Monthly budget (0 when none).";
    "team.has_budget", "boolean", R | T, "Whether a monthly budget is set.";
    "team.has_usage", "boolean", R | T, "Whether the team has usage samples in the 30 days before `now`.";
    "team.utilization", "number", R | T, "Used over allocated GPU-hours in the 30 days before `now`, across pools (0 without usage).";
    "team.low_utilization", "boolean", R | T, "Whether `team.utilization` is below `config.thresholds.low_utilization` (false without usage).";
    "team.mean_allocated_gpus", "number", R | T, "Mean GPUs allocated over those 30 days.";
    "team.mean_used_gpus", "number", R | T, "Mean GPUs used over those 30 days.";
    "team.rightsized_gpus", "integer", R | T, "GPUs the team needs at `config.thresholds.target_utilization`: mean GPUs used over the target, rounded up.";
    "team.idle_cost", "number", R | T, "Allocated but unused GPU-hours of those 30 days, priced.";
    "team.cost_30d", "number", R | T, "Allocated GPU-hours of those 30 days, priced (chargeback).";
    "team.projected_spend", "number", R | T, "Projected spend in the calendar month of `now` (measured hours, then forecast and requests).";
    "team.budget_share", "number", R | T, "`team.projected_spend` over the monthly budget (0 without a budget).";
    "team.budget_alert", "number", R | T, "The highest budget alert level the month of `now` reaches (`0.8`, `1.0`, `1.2`; 0 when none).";
    "team.max_budget_share", "number", R | T, "The highest monthly spend over budget in the next 12 months, this month included (0 without a budget).";
    "team.namespace", "string", R, "The team's namespace in the request's cluster (empty when none).";
    "team.quota", "map", R, "Standing quota in the request's cluster: resource to ceiling (from the base revision when checking a change).";
    "team.quota_gpus", "number", R | T, "The quota in GPU-equivalents (requests: in the request's cluster; teams: across clusters).";
    "team.held_gpus", "number", R, "Peak GPU-equivalents the team's other requests in the cluster hold during the window.";
    "team.peak_gpus", "number", R, "Peak GPU-equivalents held during the window, this request included.";
    "team.within_quota", "boolean", R, "Whether, for every resource of the request, the team stays within its quota at every hour of the window.";
    "team.over_quota", "map", R, "Resources over quota: resource to the most units over, at the worst hour.";
    "team.over_quota_gpus", "number", R, "GPU-equivalents over quota at the worst hour (0 when within).";
    "cluster.name", "string", R | V, "The cluster's name.";
    "cluster.environment", "string", R | V, "`production`, `staging`, `development` or `research`.";
    "cluster.provider", "string", R | V, "`aws`, `gcp`, `azure` or `onprem`.";
    "cluster.region", "string", R | V, "Region (empty when none).";
    "cluster.kueue", "boolean", R | V, "Whether the cluster runs Kueue.";
    "cluster.mig_strategy", "string", R | V, "`single` or `mixed`.";
    "pool.name", "string", R | V, "The pool's name.";
    "pool.gpu_model", "string", R | V, "GPU model id from the catalog.";
    "pool.instance_type", "string", R | V, "Instance type (empty when none).";
    "pool.nodes", "integer", R | V, "Nodes in the pool.";
    "pool.gpus_per_node", "integer", R | V, "GPUs per node.";
    "pool.gpus", "integer", R | V, "Physical GPUs in the pool.";
    "pool.mig", "boolean", R | V, "Whether the pool's GPUs are MIG-partitioned.";
    "pool.mig_layout", "map", R | V, "MIG profile to instances per GPU (empty when not MIG).";
    "pool.time_slicing", "boolean", R | V, "Whether the pool is time-sliced.";
    "pool.replicas", "integer", R | V, "Time-slicing replicas (1 when not time-sliced).";
    "pool.reserved_nodes", "integer", R | V, "Nodes bought reserved.";
    "pool.on_demand_nodes", "integer", R | V, "Nodes bought on demand.";
    "pool.spot_nodes", "integer", R | V, "Spot nodes.";
    "pool.spot", "boolean", R | V, "Whether any node of the pool is spot.";
    "pool.capacity", "map", R | V, "Resource to units the pool provides.";
    "pool.committed_gpus", "number", R, "Peak GPU-equivalents committed to the pool by all requests during this request's window, this one included.";
    "pool.overcommitted", "boolean", R, "Whether, at some hour of the window, the requests commit more of a resource than the pool has.";
    "pool.overcommit_hours", "integer", R, "Hours of the window with a resource over-committed (open-ended windows: over one year from `now`).";
    "pool.shortfall_gpus", "number", R, "Largest shortfall in GPU-equivalents over those hours (0 when none).";
    "pool.first_overcommit", "string", R, "First over-committed hour, RFC 3339 (empty when none).";
    "pool.has_usage", "boolean", R | V, "Whether the pool has usage history (the demand facts below are 0 without).";
    "pool.demand_p50", "number", R | V, "Mean demand (allocated GPUs) over the request's window or the reservation's term: measured hours as measured, later hours at the P50 forecast.";
    "pool.demand_p90", "number", R | V, "Peak P90 demand over the same hours.";
    "pool.forecast_method", "string", R | V, "How the demand was forecast (empty without usage).";
    "reservation.name", "string", V, "The reservation's name.";
    "reservation.provider", "string", V, "Provider.";
    "reservation.type", "string", V, "Reservation type (`aws-capacity-block`, ...).";
    "reservation.region", "string", V, "Region.";
    "reservation.instance_type", "string", V, "Instance type.";
    "reservation.count", "integer", V, "Instances reserved.";
    "reservation.gpus", "number", V, "GPUs reserved (instances times the covered pool's GPUs per node).";
    "reservation.hours", "integer", V, "Length of the term in hours.";
    "reservation.days", "number", V, "Length of the term in days.";
    "reservation.start", "string", V, "Term start, RFC 3339.";
    "reservation.end", "string", V, "Term end, RFC 3339.";
    "reservation.hourly_price", "number", V, "Price per instance-hour (the reservation's own, else the catalog's; 0 when unknown).";
    "reservation.total_cost", "number", V, "Cost of the whole term: instances times hours times the hourly price, plus any upfront fee.";
    "reservation.gpu_hour_price", "number", V, "`reservation.total_cost` over the reserved GPU-hours.";
    "reservation.has_forecast", "boolean", V, "Whether the covered pool has usage history to forecast (the facts below are 0 without).";
    "reservation.expected_utilization", "number", V, "Share of the reserved GPU-hours the P50 demand uses (measured hours as measured).";
    "reservation.utilization_p10", "number", V, "The same at P10 demand (the low case).";
    "reservation.stranded_cost", "number", V, "Expected stranded spend: idle reserved GPU-hours at P50 demand times `reservation.gpu_hour_price`.";
    "reservation.stranded_cost_p10", "number", V, "Stranded spend at P10 demand (the risk).";
    "reservation.stranded_share", "number", V, "`reservation.stranded_cost` over `reservation.total_cost`.";
    "reservation.suggested_count", "integer", V, "The most instances whose expected stranded share stays within `config.thresholds.stranded_spend_share`.";
    "reservation.shortfall_hours", "integer", V, "Hours of the term where P90 demand exceeds all the pool's GPUs (reserved, on-demand and spot).";
    "reservation.shortfall_gpus", "number", V, "The most GPUs short at such an hour.";
    "document.kind", "string", D, "`ApprovalPolicy` or `Config`.";
    "document.name", "string", D, "The document's name.";
}

/// Whether a dotted variable path (as minijinja reports it) names a fact, a
/// prefix of facts (`request.window`), or an entry inside a map fact.
pub fn known(path: &str, kind: SubjectKind) -> bool {
    FACTS.iter().filter(|f| f.applies_to(kind)).any(|f| {
        f.path == path
            || f.path.starts_with(&format!("{path}."))
            || (f.ty == "map" && path.starts_with(&format!("{}.", f.path)))
    })
}

/// The closest fact paths to a misspelled one, for help texts.
pub fn paths(kind: SubjectKind) -> Vec<&'static str> {
    FACTS
        .iter()
        .filter(|f| f.applies_to(kind))
        .map(|f| f.path)
        .collect()
}

// ------------------------------------------------------------------ building

/// Everything the builders read.
pub struct Env<'a> {
    pub head: &'a Repo,
    pub base: Option<&'a Repo>,
    /// The Config that judges (the base's when checking a change).
    pub config: &'a ConfigSpec,
    pub ledger: &'a Ledger,
    pub at: Timestamp,
    /// Costs, usage and forecasts of the head revision.
    pub analysis: &'a crate::cost::Analysis<'a>,
}

/// Facts under construction: dotted paths and values, nested on output.
#[derive(Default)]
struct Map(Vec<(&'static str, Value)>);

impl Map {
    fn set(&mut self, path: &'static str, value: impl Into<Value>) {
        self.0.push((path, value.into()));
    }

    fn remove(&mut self, path: &str) {
        self.0.retain(|(p, _)| *p != path);
    }

    /// Nests `a.b.c` paths into objects; later values of a path replace earlier ones.
    fn into_value(mut self) -> Value {
        // Stable sort: for a path set twice, the later value comes last.
        self.0.sort_by(|a, b| a.0.cmp(b.0));
        let mut deduped: Vec<(&'static str, Value)> = Vec::with_capacity(self.0.len());
        for (p, v) in self.0 {
            match deduped.last_mut() {
                Some(last) if last.0 == p => last.1 = v,
                _ => deduped.push((p, v)),
            }
        }
        nest(deduped)
    }
}

/// Builds one level from sorted `(rest-of-path, value)` entries.
fn nest(entries: Vec<(&'static str, Value)>) -> Value {
    let mut keys: Vec<&'static str> = Vec::new();
    let mut values: Vec<Value> = Vec::new();
    let mut entries = entries.into_iter().peekable();
    while let Some((path, value)) = entries.next() {
        match path.split_once('.') {
            None => {
                keys.push(path);
                values.push(value);
            }
            Some((head, rest)) => {
                let mut group = vec![(rest, value)];
                while let Some((next, _)) = entries.peek() {
                    match next.split_once('.') {
                        Some((h, _)) if h == head => {
                            let (next, v) = entries.next().expect("peeked");
                            group.push((next.split_once('.').expect("has a dot").1, v));
                        }
                        _ => break,
                    }
                }
                keys.push(head);
                values.push(nest(group));
            }
        }
    }
    Value::from_object(FactMap { keys, values })
}

/// One level of facts: a map with static keys, looked up without allocating.
#[derive(Debug)]
struct FactMap {
    keys: Vec<&'static str>,
    values: Vec<Value>,
}

impl minijinja::value::Object for FactMap {
    fn get_value(self: &std::sync::Arc<Self>, key: &Value) -> Option<Value> {
        key.as_str().and_then(|k| self.get_value_by_str(k))
    }

    fn get_value_by_str(self: &std::sync::Arc<Self>, key: &str) -> Option<Value> {
        self.keys
            .iter()
            .position(|k| *k == key)
            .map(|i| self.values[i].clone())
    }

    fn enumerate(self: &std::sync::Arc<Self>) -> minijinja::value::Enumerator {
        minijinja::value::Enumerator::Values(self.keys.iter().map(|k| Value::from(*k)).collect())
    }
}

fn map_value<K: ToString, N: Into<Value>>(m: impl IntoIterator<Item = (K, N)>) -> Value {
    Value::from(
        m.into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect::<BTreeMap<String, Value>>(),
    )
}

fn strings<'s>(items: impl IntoIterator<Item = &'s Spanned<String>>) -> Value {
    Value::from(
        items
            .into_iter()
            .map(|s| Value::from(s.value.clone()))
            .collect::<Vec<_>>(),
    )
}

fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

fn hour_text(hour: i64) -> String {
    Timestamp::from_second(hour * 3600)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

fn common(env: &Env<'_>, change: &Change, m: &mut Map) {
    m.set("now", env.at.to_string());
    m.set(
        "config.organization",
        env.config.organization.clone().unwrap_or_default(),
    );
    m.set("config.currency", env.config.currency.clone());
    let t = &env.config.thresholds;
    m.set(
        "config.thresholds.low_utilization",
        t.low_utilization.as_f64(),
    );
    m.set(
        "config.thresholds.target_utilization",
        t.target_utilization.as_f64(),
    );
    m.set(
        "config.thresholds.stranded_spend_share",
        t.stranded_spend_share.as_f64(),
    );
    m.set(
        "config.thresholds.monthly_cost_review",
        rust_decimal::prelude::ToPrimitive::to_f64(&t.monthly_cost_review.0).unwrap_or(0.0),
    );
    m.set("change.kind", change.kind.as_str());
    m.set(
        "change.fields",
        Value::from(
            change
                .fields
                .iter()
                .map(|f| Value::from(f.clone()))
                .collect::<Vec<_>>(),
        ),
    );
}

fn cluster_facts(cluster: &Document<ClusterSpec>, m: &mut Map) {
    let c = &cluster.spec;
    m.set("cluster.name", cluster.name().to_string());
    m.set("cluster.environment", c.environment.value.as_str());
    m.set("cluster.provider", c.provider.value.as_str());
    m.set(
        "cluster.region",
        c.region
            .as_ref()
            .map(|r| r.value.clone())
            .unwrap_or_default(),
    );
    m.set("cluster.kueue", c.kueue.as_ref().is_some_and(|k| k.enabled));
    m.set(
        "cluster.mig_strategy",
        match c.mig_strategy.value {
            MigStrategy::Single => "single",
            MigStrategy::Mixed => "mixed",
        },
    );
}

fn pool_facts(pool: &NodePool, cluster: &ClusterSpec, m: &mut Map) {
    m.set("pool.name", pool.name.value.to_string());
    m.set("pool.gpu_model", pool.gpu_model.value.clone());
    m.set(
        "pool.instance_type",
        pool.instance_type
            .as_ref()
            .map(|t| t.value.clone())
            .unwrap_or_default(),
    );
    m.set("pool.nodes", pool.nodes.value.0);
    m.set("pool.gpus_per_node", pool.gpus_per_node.value.0);
    m.set("pool.gpus", capacity::pool_gpus(pool));
    m.set("pool.mig", pool.mig.is_some());
    m.set(
        "pool.mig_layout",
        map_value(pool.mig.iter().flat_map(|l| {
            l.layout
                .value
                .iter()
                .map(|(k, v)| (k.value.clone(), v.value.0))
        })),
    );
    m.set("pool.time_slicing", pool.time_slicing.is_some());
    m.set(
        "pool.replicas",
        pool.time_slicing
            .as_ref()
            .map(|t| t.replicas.value)
            .unwrap_or(1),
    );
    let (reserved, on_demand, spot) = match &pool.purchase {
        Some(p) => (p.value.reserved.0, p.value.on_demand.0, p.value.spot.0),
        None => (0, pool.nodes.value.0, 0),
    };
    m.set("pool.reserved_nodes", reserved);
    m.set("pool.on_demand_nodes", on_demand);
    m.set("pool.spot_nodes", spot);
    m.set("pool.spot", spot > 0);
    m.set(
        "pool.capacity",
        map_value(capacity::pool_capacity(pool, cluster)),
    );
}

/// Facts of a CapacityRequest.
pub fn request(env: &Env<'_>, req: &Document<RequestSpec>, change: &Change) -> Value {
    let mut m = Map::default();
    common(env, change, &mut m);
    let spec = &req.spec;
    let at_hour = env.at.hour_index();
    let computed;
    let (hours, sized) = match env.ledger.size(req.name()) {
        Some((h, s)) => (*h, s),
        None => {
            computed = capacity::size(spec, capacity::pool_of(env.head, spec));
            (Hours::of_request(spec), &computed)
        }
    };
    let bounded = hours.bounded(at_hour);
    m.set("request.name", req.name().to_string());
    m.set("request.team", spec.team.value.clone());
    m.set("request.cluster", spec.cluster.value.clone());
    m.set("request.pool", spec.pool.value.clone());
    m.set(
        "request.resources",
        map_value(
            spec.resources
                .iter()
                .map(|(k, v)| (k.value.clone(), v.value.0)),
        ),
    );
    m.set("request.units", sized.units.values().sum::<u32>());
    m.set("request.gpus", round(sized.gpus));
    m.set(
        "request.gpu_hours",
        round(sized.gpus * bounded.len() as f64),
    );
    m.set("request.has_window", spec.window.is_some());
    let (start, end) = match &spec.window {
        Some(w) => (w.start.value.to_string(), w.end.value.to_string()),
        None => (String::new(), String::new()),
    };
    m.set("request.window.start", start);
    m.set("request.window.end", end);
    m.set("request.window.hours", bounded.len());
    m.set("request.window.days", round(bounded.len() as f64 / 24.0));
    m.set(
        "request.window.active",
        spec.window.as_ref().is_none_or(|w| w.contains(env.at)),
    );
    m.set(
        "request.window.starts_in_days",
        match &spec.window {
            Some(w) => round((w.start.value.as_second() - env.at.as_second()) as f64 / 86400.0),
            None => 0.0,
        },
    );
    m.set("request.workload_class", spec.workload_class.value.as_str());
    let class = spec
        .priority_class
        .as_ref()
        .map(|c| c.value.clone())
        .or_else(|| {
            env.config
                .defaults
                .priority_class
                .as_ref()
                .map(|c| c.value.clone())
        })
        .unwrap_or_default();
    let priority = env
        .head
        .priority_classes
        .get(&class)
        .map(|p| p.spec.value.value)
        .unwrap_or(0);
    m.set("request.priority_class", class);
    m.set("request.priority", priority);
    m.set(
        "request.preemptible",
        spec.preemptible.as_ref().is_some_and(|p| p.value),
    );
    let text =
        |o: &Option<Spanned<String>>| o.as_ref().map(|s| s.value.clone()).unwrap_or_default();
    let justification = text(&spec.justification);
    m.set(
        "request.has_justification",
        !justification.trim().is_empty(),
    );
    m.set("request.justification", justification);
    m.set("request.success_metrics", strings(&spec.success_metrics));
    m.set(
        "request.has_success_metrics",
        spec.success_metrics
            .iter()
            .any(|s| !s.value.trim().is_empty()),
    );
    let business_case = text(&spec.business_case);
    m.set(
        "request.has_business_case",
        !business_case.trim().is_empty(),
    );
    m.set("request.business_case", business_case);
    m.set(
        "request.requested_by",
        spec.requested_by.clone().unwrap_or_default(),
    );

    // The team, with its quota as the base revision had it when checking a change.
    let team_doc = env.head.teams.get(&spec.team.value);
    let quota_doc = env
        .base
        .and_then(|b| b.teams.get(&spec.team.value))
        .or(team_doc);
    let quota: BTreeMap<String, u32> = quota_doc
        .and_then(|t| t.spec.clusters.get(spec.cluster.value.as_str()))
        .map(|c| {
            c.quota
                .iter()
                .map(|(k, v)| (k.value.clone(), v.value.0))
                .collect()
        })
        .unwrap_or_default();
    team_common(team_doc, &spec.team.value, &mut m);
    m.set(
        "team.namespace",
        team_doc
            .and_then(|t| t.spec.clusters.get(spec.cluster.value.as_str()))
            .map(|c| c.namespace.value.clone())
            .unwrap_or_default(),
    );
    let pool = capacity::pool_of(env.head, spec);
    let provided_here: Vec<crate::gpu::resources::Provided> = pool
        .map(|(p, c)| crate::gpu::resources::provided(p, c.mig_strategy.value))
        .unwrap_or_default();
    let eq_of = |resource: &str| -> f64 {
        provided_here
            .iter()
            .find(|x| x.resource == resource)
            .map(|x| x.gpu_equivalent)
            .unwrap_or(1.0)
    };
    m.set(
        "team.quota_gpus",
        round(quota.iter().map(|(r, n)| *n as f64 * eq_of(r)).sum()),
    );
    m.set("team.quota", map_value(quota.clone()));
    let peak = env
        .ledger
        .team_gpus(&spec.team.value, &spec.cluster.value)
        .map(|t| t.peak(hours))
        .unwrap_or(sized.gpus);
    m.set("team.peak_gpus", round(peak));
    m.set("team.held_gpus", round((peak - sized.gpus).max(0.0)));
    let mut over = BTreeMap::new();
    let mut over_gpus: f64 = 0.0;
    for (resource, units) in &sized.units {
        let held = env
            .ledger
            .team_units(&spec.team.value, &spec.cluster.value, resource)
            .map(|t| t.peak(hours))
            .unwrap_or(*units as f64);
        let ceiling = quota.get(resource).copied().unwrap_or(0) as f64;
        if held > ceiling {
            over.insert(resource.clone(), (held - ceiling).round() as i64);
            over_gpus += (held - ceiling) * eq_of(resource);
        }
    }
    m.set("team.within_quota", over.is_empty());
    m.set("team.over_quota_gpus", round(over_gpus));
    m.set("team.over_quota", map_value(over));

    match env.head.clusters.get(&spec.cluster.value) {
        Some(c) => cluster_facts(c, &mut m),
        None => missing_cluster(&spec.cluster.value, &mut m),
    }
    match pool {
        Some((p, c)) => {
            pool_facts(p, c, &mut m);
            let committed = env
                .ledger
                .pool_gpus(&spec.cluster.value, &spec.pool.value)
                .map(|t| t.peak(hours))
                .unwrap_or(sized.gpus);
            m.set("pool.committed_gpus", round(committed));
            let caps = capacity::pool_capacity(p, c);
            let mut worst = capacity::Overcommit::default();
            let mut shortfall_gpus: f64 = 0.0;
            for resource in sized.units.keys() {
                let Some(line) =
                    env.ledger
                        .pool_units(&spec.cluster.value, &spec.pool.value, resource)
                else {
                    continue;
                };
                let cap = caps.get(resource).copied().unwrap_or(0.0);
                let o = capacity::overcommit(line, cap, hours, at_hour);
                if o.hours > 0 {
                    worst.hours = worst.hours.max(o.hours);
                    shortfall_gpus = shortfall_gpus.max(o.shortfall * eq_of(resource));
                    worst.first_hour = match (worst.first_hour, o.first_hour) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                }
            }
            m.set("pool.overcommitted", worst.hours > 0);
            m.set("pool.overcommit_hours", worst.hours);
            m.set("pool.shortfall_gpus", round(shortfall_gpus));
            m.set(
                "pool.first_overcommit",
                worst.first_hour.map(hour_text).unwrap_or_default(),
            );
        }
        None => missing_pool(&spec.pool.value, &mut m),
    }

    // Cost, before and after.
    let cost = env.analysis.request_cost(spec);
    let prev_cost = change
        .previous::<RequestSpec>()
        .as_ref()
        .and_then(|p| env.analysis.request_cost(&p.spec));
    let f = |d: Option<rust_decimal::Decimal>| d.map(crate::cost::prices::float).unwrap_or(0.0);
    m.set("request.has_price", cost.is_some());
    m.set(
        "request.gpu_hour_price",
        round(f(cost.as_ref().map(|c| c.per_gpu_hour))),
    );
    m.set(
        "request.hourly_cost",
        round(f(cost.as_ref().map(|c| c.hourly))),
    );
    m.set("request.monthly_cost", f(cost.as_ref().map(|c| c.monthly)));
    m.set("request.total_cost", f(cost.as_ref().map(|c| c.total)));
    m.set(
        "change.previous.monthly_cost",
        f(prev_cost.as_ref().map(|c| c.monthly)),
    );
    m.set(
        "change.delta_monthly_cost",
        f(cost.as_ref().map(|c| c.monthly)) - f(prev_cost.as_ref().map(|c| c.monthly)),
    );
    m.set(
        "change.delta_total_cost",
        f(cost.as_ref().map(|c| c.total)) - f(prev_cost.as_ref().map(|c| c.total)),
    );
    demand_facts(
        env,
        &spec.cluster.value,
        &spec.pool.value,
        (bounded.start, bounded.end),
        &mut m,
    );
    team_usage_facts(env, &spec.team.value, &mut m);

    let previous = change.previous::<RequestSpec>();
    let (prev_gpus, prev) = match previous {
        Some(p) => {
            let sized = capacity::size(
                &p.spec,
                env.base.and_then(|b| capacity::pool_of(b, &p.spec)),
            );
            (sized.gpus, Some(p))
        }
        None => (0.0, None),
    };
    m.set("change.previous.gpus", round(prev_gpus));
    m.set("change.delta_gpus", round(sized.gpus - prev_gpus));
    m.set(
        "change.previous.resources",
        map_value(prev.iter().flat_map(|p| {
            p.spec
                .resources
                .iter()
                .map(|(k, v)| (k.value.clone(), v.value.0))
        })),
    );
    let pw = prev.and_then(|p| p.spec.window.as_ref());
    m.set(
        "change.previous.window.start",
        pw.map(|w| w.start.value.to_string()).unwrap_or_default(),
    );
    m.set(
        "change.previous.window.end",
        pw.map(|w| w.end.value.to_string()).unwrap_or_default(),
    );
    m.set(
        "change.previous.pool",
        prev.map(|p| p.spec.pool.value.clone()).unwrap_or_default(),
    );
    m.set(
        "change.previous.workload_class",
        prev.map(|p| p.spec.workload_class.value.as_str())
            .unwrap_or(""),
    );
    m.set(
        "change.previous.priority_class",
        prev.and_then(|p| p.spec.priority_class.as_ref())
            .map(|c| c.value.clone())
            .unwrap_or_default(),
    );
    m.into_value()
}

fn team_common(team: Option<&Document<TeamSpec>>, name: &str, m: &mut Map) {
    m.set("team.name", name.to_string());
    m.set(
        "team.cost_center",
        team.map(|t| t.spec.cost_center.value.clone())
            .unwrap_or_default(),
    );
    m.set(
        "team.leads",
        team.map(|t| strings(&t.spec.leads))
            .unwrap_or_else(|| Value::from(Vec::<Value>::new())),
    );
    let budget = team
        .and_then(|t| t.spec.monthly_budget.as_ref())
        .and_then(|b| rust_decimal::prelude::ToPrimitive::to_f64(&b.value.0));
    m.set("team.monthly_budget", budget.unwrap_or(0.0));
    m.set("team.has_budget", budget.is_some());
}

/// Measured utilization, chargeback and budget projection of a team.
fn team_usage_facts(env: &Env<'_>, team: &str, m: &mut Map) {
    let f = crate::cost::prices::float;
    let usage = env.analysis.usage().get(team);
    m.set("team.has_usage", usage.is_some());
    m.set(
        "team.utilization",
        round(usage.and_then(|u| u.utilization).unwrap_or(0.0)),
    );
    m.set("team.low_utilization", usage.is_some_and(|u| u.low));
    m.set(
        "team.mean_allocated_gpus",
        round(usage.map(|u| u.mean_allocated).unwrap_or(0.0)),
    );
    m.set(
        "team.mean_used_gpus",
        round(usage.map(|u| u.mean_used).unwrap_or(0.0)),
    );
    m.set(
        "team.rightsized_gpus",
        usage.map(|u| u.rightsized_gpus).unwrap_or(0),
    );
    m.set(
        "team.idle_cost",
        usage.map(|u| f(u.idle_cost)).unwrap_or(0.0),
    );
    m.set("team.cost_30d", usage.map(|u| f(u.cost)).unwrap_or(0.0));
    let months = env.analysis.budget(team);
    let now = months.first();
    m.set(
        "team.projected_spend",
        now.map(|mo| f(mo.spend)).unwrap_or(0.0),
    );
    m.set(
        "team.budget_share",
        round(now.and_then(|mo| mo.share).unwrap_or(0.0)),
    );
    m.set(
        "team.budget_alert",
        now.and_then(|mo| mo.alert).map(f).unwrap_or(0.0),
    );
    m.set(
        "team.max_budget_share",
        round(months.iter().filter_map(|mo| mo.share).fold(0.0, f64::max)),
    );
}

/// Demand of a pool over hours `[from, to)`.
fn demand_facts(env: &Env<'_>, cluster: &str, pool: &str, (from, to): (i64, i64), m: &mut Map) {
    let outlook = env.analysis.outlook(cluster, pool);
    m.set("pool.has_usage", outlook.is_some());
    let summary = outlook.map(|o| o.over(from, to)).unwrap_or_default();
    m.set("pool.demand_p50", round(summary.mean_p50));
    m.set("pool.demand_p90", round(summary.peak_p90));
    m.set(
        "pool.forecast_method",
        outlook
            .map(|o| o.forecast.method.clone())
            .unwrap_or_default(),
    );
}

fn missing_cluster(name: &str, m: &mut Map) {
    m.set("cluster.name", name.to_string());
    for p in [
        "cluster.environment",
        "cluster.provider",
        "cluster.region",
        "cluster.mig_strategy",
    ] {
        m.set(p, "");
    }
    m.set("cluster.kueue", false);
}

fn missing_pool(name: &str, m: &mut Map) {
    m.set("pool.name", name.to_string());
    for p in [
        "pool.gpu_model",
        "pool.instance_type",
        "pool.first_overcommit",
    ] {
        m.set(p, "");
    }
    for p in [
        "pool.nodes",
        "pool.gpus_per_node",
        "pool.gpus",
        "pool.reserved_nodes",
        "pool.on_demand_nodes",
        "pool.spot_nodes",
        "pool.overcommit_hours",
    ] {
        m.set(p, 0);
    }
    m.set("pool.replicas", 1);
    for p in [
        "pool.mig",
        "pool.time_slicing",
        "pool.spot",
        "pool.overcommitted",
    ] {
        m.set(p, false);
    }
    m.set("pool.committed_gpus", 0.0);
    m.set("pool.shortfall_gpus", 0.0);
    m.set("pool.mig_layout", map_value(Vec::<(String, u32)>::new()));
    m.set("pool.capacity", map_value(Vec::<(String, u32)>::new()));
}

/// Facts of a Reservation.
pub fn reservation(env: &Env<'_>, res: &Document<ReservationSpec>, change: &Change) -> Value {
    let mut m = Map::default();
    common(env, change, &mut m);
    let s = &res.spec;
    let cluster = env.head.clusters.get(&s.covers.cluster.value);
    let pool = cluster.and_then(|c| {
        c.spec
            .node_pools
            .iter()
            .find(|p| p.name.value.as_str() == s.covers.pool.value)
    });
    let gpus = crate::cost::prices::reservation_gpus(env.head, s) as f64;
    let hours = s.term.hours();
    let cost = crate::cost::prices::reservation(env.head, s);
    let f = crate::cost::prices::float;
    m.set("reservation.name", res.name().to_string());
    m.set("reservation.provider", s.provider.value.as_str());
    m.set("reservation.type", s.kind.value.as_str());
    m.set("reservation.region", s.region.value.clone());
    m.set("reservation.instance_type", s.instance_type.value.clone());
    m.set("reservation.count", s.count.value.0);
    m.set("reservation.gpus", gpus);
    m.set("reservation.hours", hours);
    m.set("reservation.days", round(hours as f64 / 24.0));
    m.set("reservation.start", s.term.start.value.to_string());
    m.set("reservation.end", s.term.end.value.to_string());
    m.set(
        "reservation.hourly_price",
        round(cost.as_ref().map(|c| f(c.hourly)).unwrap_or(0.0)),
    );
    m.set(
        "reservation.total_cost",
        cost.as_ref().map(|c| f(c.total.round_dp(2))).unwrap_or(0.0),
    );
    m.set(
        "reservation.gpu_hour_price",
        round(cost.as_ref().map(|c| f(c.per_gpu_hour)).unwrap_or(0.0)),
    );
    let outlook = env.analysis.reservation(res.name());
    m.set("reservation.has_forecast", outlook.is_some());
    let o =
        |g: fn(&crate::cost::reservation::ReservationOutlook) -> f64| outlook.map(g).unwrap_or(0.0);
    m.set(
        "reservation.expected_utilization",
        round(o(|r| r.utilization_p50)),
    );
    m.set(
        "reservation.utilization_p10",
        round(o(|r| r.utilization_p10)),
    );
    m.set(
        "reservation.stranded_cost",
        o(|r| crate::cost::prices::float(r.stranded_p50)),
    );
    m.set(
        "reservation.stranded_cost_p10",
        o(|r| crate::cost::prices::float(r.stranded_p10)),
    );
    m.set("reservation.stranded_share", round(o(|r| r.stranded_share)));
    m.set(
        "reservation.suggested_count",
        outlook
            .map(|r| r.suggested_count)
            .unwrap_or(s.count.value.0),
    );
    m.set(
        "reservation.shortfall_hours",
        outlook.map(|r| r.shortfall_hours).unwrap_or(0),
    );
    m.set("reservation.shortfall_gpus", round(o(|r| r.shortfall_gpus)));
    let (start, end) = crate::cost::reservation::term_hours(&s.term);
    demand_facts(
        env,
        &s.covers.cluster.value,
        &s.covers.pool.value,
        (start, end),
        &mut m,
    );
    match cluster {
        Some(c) => cluster_facts(c, &mut m),
        None => missing_cluster(&s.covers.cluster.value, &mut m),
    }
    match (pool, cluster) {
        (Some(p), Some(c)) => pool_facts(p, &c.spec, &mut m),
        _ => {
            missing_pool(&s.covers.pool.value, &mut m);
        }
    }
    let prev = change
        .previous::<ReservationSpec>()
        .as_ref()
        .map(|p| {
            crate::cost::prices::reservation_gpus(env.base.unwrap_or(env.head), &p.spec) as f64
        })
        .unwrap_or(0.0);
    m.set("change.previous.gpus", prev);
    m.set("change.delta_gpus", round(gpus - prev));
    // Request-only pool facts are not part of a reservation's facts.
    for p in [
        "pool.committed_gpus",
        "pool.overcommitted",
        "pool.overcommit_hours",
        "pool.shortfall_gpus",
        "pool.first_overcommit",
    ] {
        m.remove(p);
    }
    m.into_value()
}

/// Facts of a Team.
pub fn team(env: &Env<'_>, team: &Document<TeamSpec>, change: &Change) -> Value {
    let mut m = Map::default();
    common(env, change, &mut m);
    team_common(Some(team), team.name(), &mut m);
    let quota = team_quota_gpus(env.head, team);
    m.set("team.quota_gpus", round(quota));
    team_usage_facts(env, team.name(), &mut m);
    let prev = change
        .previous::<TeamSpec>()
        .as_ref()
        .map(|t| team_quota_gpus(env.base.unwrap_or(env.head), t))
        .unwrap_or(0.0);
    m.set("change.previous.gpus", round(prev));
    m.set("change.delta_gpus", round(quota - prev));
    m.into_value()
}

/// A team's quota across clusters, in GPU-equivalents.
pub fn team_quota_gpus(repo: &Repo, team: &Document<TeamSpec>) -> f64 {
    let mut total = 0.0;
    for (cluster, presence) in &team.spec.clusters {
        let provided: Vec<_> = repo
            .clusters
            .get(&cluster.value)
            .map(|c| {
                c.spec
                    .node_pools
                    .iter()
                    .flat_map(|p| crate::gpu::resources::provided(p, c.spec.mig_strategy.value))
                    .collect()
            })
            .unwrap_or_default();
        for (resource, n) in &presence.quota {
            let eq = provided
                .iter()
                .find(|p: &&crate::gpu::resources::Provided| p.resource == resource.value)
                .map(|p| p.gpu_equivalent)
                .unwrap_or(1.0);
            total += n.value.0 as f64 * eq;
        }
    }
    total
}

/// Facts of an ApprovalPolicy or the Config.
pub fn document(env: &Env<'_>, kind: Kind, name: &str, change: &Change) -> Value {
    let mut m = Map::default();
    common(env, change, &mut m);
    m.set("document.kind", kind.as_str());
    m.set("document.name", name.to_string());
    m.into_value()
}

/// Looks a dotted path up in a fact value (for traces).
pub fn lookup(facts: &Value, path: &str) -> Option<Value> {
    let mut v = facts.clone();
    for part in path.split('.') {
        v = v.get_attr(part).ok().filter(|x| !x.is_undefined())?;
    }
    Some(v)
}

#[cfg(test)]
pub(crate) fn leaf_paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    use minijinja::value::ValueKind;
    if v.kind() == ValueKind::Map {
        // Map facts are leaves in the model.
        let is_fact_map = FACTS.iter().any(|f| f.path == prefix && f.ty == "map");
        if !is_fact_map {
            for key in v.try_iter().unwrap() {
                let k = key.as_str().unwrap().to_string();
                let child = v.get_attr(&k).unwrap();
                let p = if prefix.is_empty() {
                    k
                } else {
                    format!("{prefix}.{k}")
                };
                leaf_paths(&child, &p, out);
            }
            return;
        }
    }
    out.push(prefix.to_string());
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Removed => "removed",
            ChangeKind::Unchanged => "unchanged",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::change::Change;
    use std::collections::BTreeSet;

    fn example() -> Repo {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/acme");
        crate::validate::validate_dir(&root).unwrap().repo
    }

    fn documented(kind: SubjectKind) -> BTreeSet<String> {
        FACTS
            .iter()
            .filter(|f| f.applies_to(kind))
            .map(|f| f.path.to_string())
            .collect()
    }

    fn built(v: &Value) -> BTreeSet<String> {
        let mut out = Vec::new();
        leaf_paths(v, "", &mut out);
        out.into_iter().collect()
    }

    /// The builders produce exactly the documented facts, for every subject.
    #[test]
    fn builders_match_the_documented_fact_model() {
        let repo = example();
        let ledger = Ledger::build(&repo);
        let config = repo.config_spec();
        let at = "2026-11-22".parse().unwrap();
        let analysis = crate::cost::Analysis::new(&repo, at);
        let env = Env {
            head: &repo,
            base: None,
            config: &config,
            ledger: &ledger,
            at,
            analysis: &analysis,
        };
        let change = Change::unchanged();
        let req = &repo.requests["inference-llm-serving"];
        assert_eq!(
            built(&request(&env, req, &change)),
            documented(SubjectKind::Request)
        );
        let res = &repo.reservations["a100-research-6mo"];
        assert_eq!(
            built(&reservation(&env, res, &change)),
            documented(SubjectKind::Reservation)
        );
        let t = &repo.teams["inference"];
        assert_eq!(
            built(&team(&env, t, &change)),
            documented(SubjectKind::Team)
        );
        assert_eq!(
            built(&document(&env, Kind::Config, "acme", &change)),
            documented(SubjectKind::Document)
        );
    }

    #[test]
    fn request_facts_have_the_right_numbers() {
        let repo = example();
        let ledger = Ledger::build(&repo);
        let config = repo.config_spec();
        let at = "2026-11-22".parse().unwrap();
        let analysis = crate::cost::Analysis::new(&repo, at);
        let env = Env {
            head: &repo,
            base: None,
            config: &config,
            ledger: &ledger,
            at,
            analysis: &analysis,
        };
        let change = Change::unchanged();
        let get = |v: &Value, p: &str| lookup(v, p).unwrap();
        // 14 x 1g.10gb + 4 x 2g.20gb on an H100: (14 + 8) / 7 GPUs.
        let mig = request(&env, &repo.requests["inference-small-models-mig"], &change);
        assert_eq!(f64::try_from(get(&mig, "request.gpus")).unwrap(), 3.1429);
        assert_eq!(i64::try_from(get(&mig, "request.units")).unwrap(), 18);
        // 6 time-sliced T4 replicas, 4 per GPU.
        let ts = request(&env, &repo.requests["inference-batch-embeddings"], &change);
        assert_eq!(f64::try_from(get(&ts, "request.gpus")).unwrap(), 1.5);
        assert!(get(&ts, "pool.spot").is_true());
        assert_eq!(i64::try_from(get(&ts, "pool.replicas")).unwrap(), 4);
        // The holiday peak brings inference to its 48-GPU quota in prod-h100, not over it;
        // in GPU-equivalents the team also holds its MIG slices there (3.14).
        let peak = request(&env, &repo.requests["inference-holiday-peak"], &change);
        assert_eq!(
            f64::try_from(get(&peak, "team.peak_gpus")).unwrap(),
            51.1429
        );
        assert_eq!(
            f64::try_from(get(&peak, "team.held_gpus")).unwrap(),
            35.1429
        );
        assert!(get(&peak, "team.within_quota").is_true());
        assert!(!get(&peak, "pool.overcommitted").is_true());
        // 32 GPUs for a year (2026-01-01 to 2027-01-01): 8760 hours.
        let base = request(&env, &repo.requests["inference-llm-serving"], &change);
        assert_eq!(
            i64::try_from(get(&base, "request.window.hours")).unwrap(),
            8760
        );
        assert_eq!(
            f64::try_from(get(&base, "request.gpu_hours")).unwrap(),
            32.0 * 8760.0
        );
        assert!(get(&base, "request.window.active").is_true());
        // The capacity block: 25 x p4d.24xlarge (8 GPUs) for 182 days at 14.75/h.
        let res = reservation(&env, &repo.reservations["a100-research-6mo"], &change);
        assert_eq!(f64::try_from(get(&res, "reservation.gpus")).unwrap(), 200.0);
        assert_eq!(
            i64::try_from(get(&res, "reservation.hours")).unwrap(),
            182 * 24
        );
        assert_eq!(
            f64::try_from(get(&res, "reservation.total_cost")).unwrap(),
            25.0 * 14.75 * 182.0 * 24.0
        );
    }
}
