//! The hand edits a change makes to the committed output folder: files
//! that differ from the base and from what `capops render` writes for the
//! head, a render manifest that no longer lists every file, and whatever
//! render never writes (a link, a submodule, a file too large to read).
//! `check` judges them at the top tier.

use crate::model::Timestamp;
use std::path::Path;

/// Files of the committed output folder (the base Config's) that the change
/// makes differ from what `capops render` writes for the head at `at`,
/// stamped with the revision the changed files carry: re-rendered output
/// matches, a hand edit does not.
pub(super) fn output_edited(
    path: &Path,
    base_commit: &str,
    base: &crate::model::Repo,
    head: &crate::model::Repo,
    templates: &crate::render::templates::Templates,
    at: Timestamp,
) -> Result<Vec<String>, crate::load::git::GitError> {
    use crate::load::output;
    let folder = base.config_spec().render.output_folder.value.clone();
    let before = output::read_revision(path, base_commit, &folder)?;
    let now = output::read_worktree(path, &folder);
    let mut changed: Vec<String> = output::changed(&before, &now);
    // The manifest tells `capops render` what it may prune: it must read and
    // list every file of the folder, or a later render stops (it does not
    // read) or leaves behind what an approved change removes (a file left
    // out of it is never pruned).
    let manifest = super::render_out::MANIFEST;
    let mut edited = Vec::new();
    if let Some(i) = changed.iter().position(|p| p == manifest) {
        changed.remove(i);
        let others = || {
            now.iter()
                .filter(|(p, _)| p.as_str() != manifest)
                .map(|(p, _)| p)
        };
        let complete = match now.get(manifest) {
            // Removed: a later render prunes nothing, so only with nothing
            // left to prune.
            None => others().next().is_none(),
            // A link (render refuses it).
            Some(None) => false,
            Some(Some(b)) => super::render_out::parse_manifest(&String::from_utf8_lossy(b))
                .is_ok_and(|files| others().all(|p| files.contains(p))),
        };
        if !complete {
            edited.push(format!("{folder}/{manifest}"));
        }
    }
    if changed.is_empty() {
        return Ok(edited);
    }
    let revision = changed
        .iter()
        .filter_map(|p| now.get(p).cloned().flatten())
        .find_map(|b| output::stamped_revision(&String::from_utf8_lossy(&b)))
        .unwrap_or_default();
    let rendered = crate::render::render(
        head,
        templates,
        &crate::render::Options {
            at,
            revision,
            clusters: None,
        },
    );
    let expected: std::collections::HashMap<&str, String> = rendered
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.text()))
        .collect();
    edited.extend(
        changed
            .into_iter()
            .filter(|p| match now.get(p.as_str()) {
                // A link, a submodule or a file too large to read is never
                // what render writes, whatever it would write there.
                Some(None) => true,
                bytes => {
                    expected.get(p.as_str()).map(|t| t.as_bytes())
                        != bytes.and_then(|b| b.as_deref())
                }
            })
            .map(|p| format!("{folder}/{p}")),
    );
    edited.sort();
    Ok(edited)
}
