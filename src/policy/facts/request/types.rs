//! The typed facts of a CapacityRequest: what its conditions read (the
//! request, its window, team and pool, and what the change does to it),
//! with the meaning of each field, from which `docs/policy.md` is generated.

use super::super::model::*;
use crate::model::SmallMap;
use schemars::JsonSchema;
use serde::Serialize;

/// What a request's conditions read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RequestSubject {
    /// The evaluation time (`--at`, default now), RFC 3339.
    pub now: String,
    pub config: std::sync::Arc<ConfigFacts>,
    /// What the change does to the rendered objects and files (zero without a base).
    pub effects: EffectFacts,
    pub change: RequestChange,
    pub request: RequestFacts,
    pub team: RequestTeamFacts,
    pub cluster: std::sync::Arc<ClusterFacts>,
    pub pool: RequestPoolFacts,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct RequestChange {
    #[serde(flatten)]
    pub base: ChangeFacts,
    /// The most GPU-equivalents the request holds at any hour from `now` on beyond what it held
    /// before (the whole size when added; a window moved later or an expired request revived
    /// counts the hours it newly holds); minus what it gives up when it only releases.
    pub delta_gpus: f64,
    /// The most GPU-equivalents the team that held the request before gives up at any hour
    /// from `now` on: what it releases by shrinking, shortening, moving or removing it, or by
    /// handing it to another team (0 when added).
    pub released_gpus: f64,
    /// Monthly cost now minus before.
    pub delta_monthly_cost: f64,
    /// Cost over the window now minus before.
    pub delta_total_cost: f64,
    /// GPU-equivalents the change adds to the team in this request's pool, over all its
    /// requests: the largest rise, at any hour from `now` on, of what they hold (negative: the
    /// largest fall, when they only release); without a base, this request's own size. Tiers
    /// read this.
    pub team_delta_gpus: f64,
    /// Monthly cost the change adds to the team in this pool, over all its requests.
    pub team_delta_monthly_cost: f64,
    /// Cost over the windows (from `now` on) the change adds to the team in this pool, over all
    /// its requests.
    pub team_delta_total_cost: f64,
    /// GPU-equivalents the change adds to the team across every pool: the pools' gains summed
    /// (a pool where it only releases offsets none: 50 GPUs into each of two pools beside 100
    /// released in a third is 100, as in one pool), or the largest rise of the team's holdings
    /// across them at any hour from `now` on, whichever is more (a release that ends soon in one
    /// pool does not offset a lasting gain in others). When it only releases, its falls summed.
    pub team_pr_delta_gpus: f64,
    /// Cost over the windows (from `now` on) the change adds to the team across every pool, over
    /// all its requests (without a base, this request's own): a cost split between pools adds up,
    /// and a pool where the cost falls offsets none.
    pub team_pr_delta_total_cost: f64,
    /// Monthly cost the change adds to the team across every pool: the largest rise, at any hour
    /// from `now` on, of what its requests cost a month while they run (without a base, this
    /// request's own). One ask split into requests that run at once adds up; requests back to
    /// back do not; a pool where the rate falls offsets no rise in another.
    pub team_pr_delta_monthly_cost: f64,
    /// For an added or modified request, the highest priority among the team's requests in the
    /// same pool of the same cluster in the whole base (whichever files hold them) that hold
    /// capacity from `now` on and run when this request starts (from `now` on, for one already
    /// running or without a window; a hold that ends exactly then counts, so a renewal back to
    /// back keeps its class; the request's own base version among them when it was in that
    /// pool): a pod preempts only where and when it runs, so priority held elsewhere, or only
    /// before or after its start (a hold its window reaches later), lends none.
    /// When the team holds none there: the priority a
    /// request that names no class gets (the Config's default class, else the global default),
    /// or the request's own when lower or when there is no default. For a request the change leaves as it was,
    /// its own priority.
    pub team_priority_before: i64,
    /// `team_priority_before` among the requests whose class may preempt (`preemptionPolicy`
    /// not `Never`): the highest priority at which the team could preempt others before the
    /// change. When it held none that may: the default class's value if that class may preempt
    /// (or the request's own when lower), else -2147483649, below every priority.
    pub team_preempting_priority_before: i64,
    /// For an added or modified request, the workload classes of the team's base requests
    /// that the same change removes, hands to another team or shrinks: a request deleted and
    /// added anew under another name and class is a relabelling. Empty otherwise.
    pub team_classes_released: Vec<String>,
    /// What the change's requests in this request's pool (the base's pool and, when moved,
    /// the head's) add to the expected stranded spend (P50) of the reservations in force
    /// there, from `now` on: the pool's demand with the base's versions of the changed
    /// requests, against the demand the change leaves as forecast.md's "Pool demand" works
    /// it out (a trim of room the team never used leaves nothing; a running request cut
    /// leaves what it held), hour by hour, and past the outlook what they hold in the head
    /// minus what they held in the base (a locked reservation as the base has it). A
    /// release can strand what a reservation was bought for.
    pub reservation_stranded_cost: f64,
    /// The largest stranded share of the remaining term (from `now` on), after the change,
    /// of the reservations whose stranded spend it raises there (0 when none).
    pub reservation_stranded_share: f64,
    pub previous: PreviousRequest,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct RequestFacts {
    /// The request's name.
    pub name: String,
    /// The team asking.
    pub team: String,
    /// The cluster.
    pub cluster: String,
    /// The node pool.
    pub pool: String,
    /// Resource name to count, as written.
    pub resources: SmallMap<u32>,
    /// Sum of the counts (GPUs, MIG instances, time-sliced replicas).
    pub units: u32,
    /// GPU-equivalents: a whole GPU is 1, a MIG instance its compute slices over the slices its pool's layout uses (at most the model's 7, or 4 on A30: four `1g.20gb` on an H100 are a quarter of a GPU each, since the layout's memory leaves three slices idle), a time-sliced replica 1 / replicas (a time-sliced MIG instance its share over the replicas). A MIG resource its pool does not provide counts at its slices over 7.
    pub gpus: f64,
    /// GPU-equivalents times the window's hours (open-ended requests: one year from `now`).
    pub gpu_hours: f64,
    /// Whether the request states a window.
    pub has_window: bool,
    pub window: WindowFacts,
    /// `inference`, `training`, `research` or `development`.
    pub workload_class: String,
    /// Priority class, or the Config's default, or the PriorityClass marked `globalDefault` (what Kubernetes gives a pod that names none; empty when none).
    pub priority_class: String,
    /// Value of the priority class (0 when none).
    pub priority: i64,
    /// Whether its priority class may preempt lower priorities (`preemptionPolicy` not `Never`;
    /// true with no class, Kubernetes' default).
    pub preempts: bool,
    /// Whether the workloads tolerate preemption.
    pub preemptible: bool,
    /// The justification (empty when absent).
    pub justification: String,
    /// Whether a justification with visible text is given (white space and invisible characters, such as zero-width spaces, are blank).
    pub has_justification: bool,
    /// Success metrics.
    pub success_metrics: Vec<String>,
    /// Whether at least one success metric with visible text is given.
    pub has_success_metrics: bool,
    /// The business case (empty when absent).
    pub business_case: String,
    /// Whether a business case with visible text is given (white space and invisible characters, such as zero-width spaces, are blank).
    pub has_business_case: bool,
    /// Who asked (empty when absent).
    pub requested_by: String,
    /// Whether the pool's instance type has a price in a PriceCatalog, and so has every other
    /// pool of the cluster that provides one of the request's resources (the namespace quota it
    /// grants can be used there: where one has none, the cost facts leave it out).
    pub has_price: bool,
    /// The GPU-hour price the request is costed at: its pool's blended price (reserved, on-demand and spot prices weighed by its purchase mix; 0 without a price), or more where another priced pool of the cluster provides the same resource at a higher price per unit: the namespace quota a request grants (`requests.nvidia.com/gpu: 9`) can be used on any pool that provides the resource, so each unit is priced where it costs most (9 T4s in a cluster that also has H100s cost what 9 H100s do). Every request cost fact follows it.
    pub gpu_hour_price: f64,
    /// GPU-equivalents times the GPU-hour price.
    pub hourly_cost: f64,
    /// The cost of an average month (730 hours) of the request.
    pub monthly_cost: f64,
    /// The cost over the window (open-ended requests: one year from `now`).
    pub total_cost: f64,
}

#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct WindowFacts {
    /// Window start, RFC 3339 (empty when open).
    pub start: String,
    /// Window end, RFC 3339 (empty when open).
    pub end: String,
    /// Window length in hours (one year when open).
    pub hours: i64,
    /// Window length in days.
    pub days: f64,
    /// Whether the window covers `now`.
    pub active: bool,
    /// Days from `now` to the start (negative once started; 0 when open).
    pub starts_in_days: f64,
    /// Whether the window has ended at `now` (a request for the past).
    pub ended: bool,
    /// Days from the first start to the last end of this window and the windows of the team's
    /// other requests that the change adds or moves, where they overlap, touch or are less than
    /// 30 days apart (one long ask split into back-to-back requests, or pieces an hour apart, is
    /// one run). The base's windows of the team on the same GPUs (pools of the same GPU model providing the same resources in the same cluster) from `now` on join the run
    /// too (a renewal in a later pull request continues the hold), except one that covers
    /// this window whole by itself (this one extends nothing of it). `days` when no other
    /// window joins, or without a base. Tier window limits read the longer of the two.
    pub run_days: f64,
}

/// The requesting team, with its quota in the request's cluster.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct RequestTeamFacts {
    #[serde(flatten)]
    pub team: TeamFacts,
    /// The team's namespace in the request's cluster (empty when none).
    pub namespace: String,
    /// Standing quota in the request's cluster: resource to ceiling (from the base revision when checking a change).
    pub quota: SmallMap<u32>,
    /// Peak GPU-equivalents the team's other requests in the cluster hold during the window.
    pub held_gpus: f64,
    /// Peak GPU-equivalents held during the window, this request included.
    pub peak_gpus: f64,
    /// Whether, for every resource of the request, the team stays within its quota at every hour of the window.
    pub within_quota: bool,
    /// Resources over quota: resource to the most units over, at the worst hour.
    pub over_quota: SmallMap<i64>,
    /// GPU-equivalents over quota at the worst hour (0 when within).
    pub over_quota_gpus: f64,
    /// GPU-equivalents the team's requests grew by in the 30 days before the base
    /// revision, from its git history (0 without history): per request, the most it
    /// holds at any hour since the 30 days began beyond what it held then (a revived,
    /// stretched or moved request counts what it newly holds; what it held then is sized
    /// with its pool as it was then, so fewer time-slicing replicas or a coarser MIG layout
    /// since count as growth). A request whose team is gone since counts for the team
    /// holding its name now only when that team is new since (a rename): a team already
    /// there that takes up names another gave up takes them up whole.
    pub recent_growth_gpus: f64,
    /// What that growth costs, from the start of the 30 days on at today's prices (0
    /// without history; what a request held then is priced at its size in its pool as it
    /// was then): the money a request split over several pull requests adds up to.
    pub recent_growth_cost: f64,
    /// What the team's requests that the change adds or grows, together with those that
    /// grew in the 30 days before the base (its git history), add to its monthly bill at
    /// the busiest hour from `now` on: each request's monthly rate over its window, less
    /// its rate before over its window before (today's prices). The same weeks asked for
    /// over several pull requests add up; requests that never run at once do not. Never below
    /// 0 (a release reads 0). Without history, the change's own rise.
    pub monthly_growth_with_recent: f64,
    /// The units of namespace quota the team's requests grew by over the same 30 days
    /// (per request, the most held at once beyond what it held then): `nvidia.com/gpu`
    /// units at 1 each, not at their GPU-equivalents (time-sliced replicas and
    /// single-strategy MIG devices are few GPU-equivalents but are granted as that many
    /// whole-GPU units of namespace quota), and MIG instances at what one is worth in the
    /// pool of the cluster where it is worth most, as `effects.quota_delta_gpus` counts them.
    pub recent_growth_units: f64,
}

/// The request's pool, with what all requests commit to it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RequestPoolFacts {
    #[serde(flatten)]
    pub pool: PoolFacts,
    /// Peak GPU-equivalents committed to the pool by all requests during this request's window, this one included.
    pub committed_gpus: f64,
    /// Whether, at some hour of the window, the requests commit more of a resource than the pool has.
    pub overcommitted: bool,
    /// Hours of the window with a resource over-committed (open-ended windows: over one year from `now`).
    pub overcommit_hours: i64,
    /// Largest shortfall in GPU-equivalents over those hours (0 when none).
    pub shortfall_gpus: f64,
    /// First over-committed hour, RFC 3339 (empty when none).
    pub first_overcommit: String,
}
