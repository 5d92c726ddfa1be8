//! The priorities a team holds in a pool before the change, and at which
//! hours: a request is compared with what its team holds in the same pool
//! when it starts, not with anything it holds at some other time.

use super::super::{Env, TeamPriorities};
use super::{preempts, priority_of};
use crate::capacity::Hours;
use crate::model::*;

/// The priorities each team holds in each pool before the change, with
/// the hours of each request that holds them
/// ([`super::super::Aggregates::team_priorities_before`]). The team's requests in
/// the base whole: its versions of the changed requests, and the head's
/// others (the base holds only the touched files' documents); of those, the
/// ones that hold capacity from `--at` on: an expired request holds
/// nothing, and revived or handed over it would lend its priority or class
/// to the team. Priority is power over the others in the same capacity: a
/// pod preempts only where it can be scheduled, so what the team holds in
/// another pool or cluster lends it nothing there.
fn team_priorities<'e>(env: &'e Env<'_>) -> &'e TeamPriorities {
    env.aggregates.team_priorities_before.get_or_init(|| {
        let changed = &env.aggregates.changed_requests;
        let base: Vec<&Document<RequestSpec>> = match env.base {
            Some(b) => b
                .requests
                .values()
                .filter(|r| changed.contains(r.name()))
                .chain(
                    env.world
                        .requests
                        .values()
                        .filter(|r| !changed.contains(r.name())),
                )
                .collect(),
            None => env.world.requests.values().collect(),
        };
        let mut out = TeamPriorities::new();
        for r in base {
            if r.spec
                .window
                .as_ref()
                .is_some_and(|w| w.end.value <= env.at)
            {
                continue;
            }
            let key = (
                r.spec.team.value.clone(),
                r.spec.cluster.value.clone(),
                r.spec.pool.value.clone(),
            );
            let held = (
                Hours::of_request(&r.spec),
                priority_of(env, &r.spec),
                preempts(env, &r.spec),
            );
            out.entry(key).or_default().push(held);
        }
        out
    })
}

/// The highest priority, and the highest that may preempt, the team holds
/// in the request's pool when the request starts (from `--at` on, for a
/// request already running or without a window): a hold that runs then,
/// or ends exactly then (a renewal back to back keeps its class), counts.
/// One that ends before the request starts lends it nothing, and neither
/// does one that starts after it: a request that reaches a future hold
/// would preempt at that priority in every hour before it, where the team
/// holds none.
pub(super) fn held(env: &Env<'_>, spec: &RequestSpec) -> (Option<i64>, Option<i64>) {
    let key = (
        spec.team.value.clone(),
        spec.cluster.value.clone(),
        spec.pool.value.clone(),
    );
    let start = Hours::of_request(spec).start.max(env.at.hour_index());
    let mut out = (None, None);
    for (h, priority, preempting) in team_priorities(env).get(&key).into_iter().flatten() {
        if h.start <= start && start <= h.end {
            out.0 = out.0.max(Some(*priority));
            if *preempting {
                out.1 = out.1.max(Some(*priority));
            }
        }
    }
    out
}
