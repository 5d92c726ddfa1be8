//! The facts of a Team (its quota, usage and budget, and what its quota was
//! before) and of a changed ApprovalPolicy or Config.

use super::Env;
use super::model::*;
use super::values::round;
use crate::model::*;
use crate::policy::change::Change;
use schemars::JsonSchema;
use serde::Serialize;

/// What a team's conditions read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TeamSubject {
    /// The evaluation time (`--at`, default now), RFC 3339.
    pub now: String,
    pub config: ConfigFacts,
    pub change: SizedChange,
    pub team: TeamFacts,
}

/// What the conditions of a changed ApprovalPolicy or Config read.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DocumentSubject {
    /// The evaluation time (`--at`, default now), RFC 3339.
    pub now: String,
    pub config: ConfigFacts,
    pub change: ChangeFacts,
    pub document: DocumentFacts,
}

/// Builds the facts of a Team.
pub fn team(env: &Env<'_>, team: &Document<TeamSpec>, change: &Change) -> TeamSubject {
    let quota = team_quota_gpus(env.head, team);
    let mut facts = super::team_base(env, Some(team), team.name());
    facts.quota_gpus = round(quota);
    let prev = change
        .previous::<TeamSpec>()
        .map(|t| team_quota_gpus(env.base.unwrap_or(env.head), t))
        .unwrap_or(0.0);
    TeamSubject {
        now: env.at.to_string(),
        config: super::config_facts(env.config),
        change: SizedChange {
            base: super::change_facts(change),
            delta_gpus: round(quota - prev),
            previous: PreviousGpus { gpus: round(prev) },
        },
        team: facts,
    }
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

/// Builds the facts of a changed ApprovalPolicy or Config.
pub fn document(env: &Env<'_>, kind: Kind, name: &str, change: &Change) -> DocumentSubject {
    DocumentSubject {
        now: env.at.to_string(),
        config: super::config_facts(env.config),
        change: super::change_facts(change),
        document: DocumentFacts {
            kind: kind.as_str().to_string(),
            name: name.to_string(),
        },
    }
}
