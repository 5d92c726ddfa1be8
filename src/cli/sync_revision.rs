//! Never rolling a cluster back by accident: objects carry the revision they
//! were applied from (`capops.dev/revision`, the last commit that changed the
//! capacity documents). An apply from a checkout that does not contain that
//! commit (a laptop that has not pulled, a delayed CI job, a feature branch)
//! would undo newer work, prunes included, so it is refused unless
//! `--allow-older-revision` says that is the point.

use crate::sync::plan::{Action, Plan};
use std::path::Path;

/// For each cluster the plan would change, the revisions this repository's
/// objects there were applied from that the checkout at `path` does not
/// contain, as `cluster: objects applied from <rev>`. Empty when the
/// revisions are not commits (`--revision` labels, `unversioned`). Outside
/// git (a copy without `.git`), no commit is known to be contained: objects
/// applied from a commit are refused as from one the checkout lacks, since
/// nothing says the copy is newer.
pub fn applied_from_elsewhere(path: &Path, plan: &Plan) -> Vec<String> {
    let repo = git2::Repository::discover(path).ok();
    let head = repo
        .as_ref()
        .and_then(|r| r.head().ok().and_then(|h| h.peel_to_commit().ok()));
    let checkout = repo.as_ref().zip(head.as_ref());
    let mut out = Vec::new();
    for c in &plan.clusters {
        let pending = c
            .changes
            .iter()
            .any(|ch| matches!(ch.action, Action::Create | Action::Update | Action::Delete));
        if !pending {
            continue;
        }
        // Every object this repository applied there, changed or not: a
        // create (a team the newer revision removed) rolls back as much.
        let mut revisions: Vec<&str> = c
            .observed
            .values()
            .filter_map(|o| o.revision.as_deref())
            .chain(
                c.changes
                    .iter()
                    .filter_map(|ch| ch.live_revision.as_deref()),
            )
            .collect();
        revisions.sort_unstable();
        revisions.dedup();
        for live in revisions {
            if live == plan.revision {
                continue;
            }
            let dirty = live.ends_with("+dirty");
            let sha = live.trim_end_matches("+dirty");
            if sha.len() != 40 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            let Ok(oid) = git2::Oid::from_str(sha) else {
                continue;
            };
            let Some((repo, head)) = checkout else {
                out.push(format!(
                    "{}: objects applied from {} (this checkout is not a git repository, so nothing says it holds that commit)",
                    c.cluster,
                    &sha[..12]
                ));
                continue;
            };
            let known = repo.find_commit(oid).is_ok();
            // A commit the checkout holds; applied with uncommitted changes
            // on top, only a later commit can hold those.
            let contained = (oid == head.id() && !dirty)
                || (known && repo.graph_descendant_of(head.id(), oid).unwrap_or(false));
            if !contained {
                let why = if !known && repo.is_shallow() {
                    " (the checkout is a shallow clone that may simply lack it: fetch the full history, e.g. `fetch-depth: 0`)"
                } else if dirty && known {
                    " with uncommitted changes"
                } else {
                    ""
                };
                out.push(format!(
                    "{}: objects applied from {}{why}",
                    c.cluster,
                    &sha[..12]
                ));
            }
        }
    }
    out
}
