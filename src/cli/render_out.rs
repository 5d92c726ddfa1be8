//! Writing rendered files safely: where `capops render` may write, never
//! through a symbolic link, and pruning only what it wrote itself.
//!
//! - Inside the capacity repository, render writes only to the Config's
//!   output folder (`rendered/` by default); any other `--out` inside it
//!   (`.`, `teams/`) is refused, so a render never mixes into the documents.
//! - No path it writes goes through a symbolic link: the output folder, the
//!   folders below it and the files themselves are checked before anything is
//!   written, so a committed `rendered/<cluster>` link to a folder elsewhere
//!   cannot redirect it.
//! - A write that fails partway (a full disk, a file where a folder should
//!   be) leaves the output folder as it was: changed files are staged beside
//!   their targets and renamed into place only once all of them are written.
//! - It keeps a manifest (`.capops-manifest.json`) of the files it wrote; a
//!   later render removes only files listed there that it no longer renders,
//!   never a file just because it carries capops' label.

use crate::render::Rendered;
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The manifest of the files a render wrote, in the output folder.
pub const MANIFEST: &str = ".capops-manifest.json";

/// Why nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error(
        "--out {out} is inside the capacity repository; capops render writes there only to its output folder `{folder}` (the Config's render.outputFolder)"
    )]
    InsideRepository { out: String, folder: String },
    #[error(
        "the output folder `{0}` differs only in case from another folder of the repository, which is the same folder where file names ignore case (macOS, Windows); rename render.outputFolder"
    )]
    CaseClash(String),
    #[error("{0} is a symbolic link; capops render never writes through a link")]
    Symlink(String),
    #[error("the rendered path `{0}` is not a plain relative path")]
    UnsafePath(String),
    #[error("--out {0} is a file, not a folder: capops render writes a folder of files")]
    NotAFolder(String),
    #[error("cannot write {0}: {1}")]
    Io(String, std::io::Error),
    #[error(
        "cannot put {path} in place ({error}) after {done} of {total} changed files were replaced: the output folder is part old, part new"
    )]
    Partly {
        path: String,
        error: std::io::Error,
        done: usize,
        total: usize,
    },
    #[error(
        "{step} {path} failed ({error}) after every changed file was put in place: the folder holds the new files{left}"
    )]
    Unfinished {
        step: &'static str,
        path: String,
        error: std::io::Error,
        left: &'static str,
    },
    #[error(
        "the manifest {0} does not read ({1}): capops cannot tell which files of the output folder it wrote, so it would not remove those it no longer renders (a deleted reservation's Terraform would stay)"
    )]
    BadManifest(String, String),
}

/// What a write did.
pub struct WriteOutcome {
    pub written: BTreeSet<String>,
    pub removed: Vec<String>,
}

/// `path` made absolute and free of `.` and `..`, through what exists of it.
fn resolve(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    // The longest existing ancestor, canonical; the rest appended as written.
    let mut existing = abs.clone();
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(&existing).is_err() {
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut out = std::fs::canonicalize(&existing).unwrap_or(existing);
    for name in rest.into_iter().rev() {
        out.push(name);
    }
    out
}

/// Checks that `out` is a place render may write: outside the repository at
/// `root`, or its output folder `folder`.
pub fn allowed(root: &Path, out: &Path, folder: &str) -> Result<(), Refused> {
    let root = resolve(root);
    let out_abs = resolve(out);
    if out_abs.starts_with(&root) && out_abs != root.join(folder) {
        return Err(Refused::InsideRepository {
            out: out.display().to_string(),
            folder: folder.to_string(),
        });
    }
    // On a file system that folds case (macOS, Windows), `Teams/` is the
    // documents' `teams/`: an output folder named like another folder of the
    // repository but for case is refused everywhere, so that a repository
    // behaves the same on every machine.
    if out_abs == root.join(folder)
        && let Ok(entries) = std::fs::read_dir(&root)
        && entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name != folder && name.eq_ignore_ascii_case(folder)
        })
    {
        return Err(Refused::CaseClash(folder.to_string()));
    }
    Ok(())
}

/// Removes what a render that was killed between staging and renaming
/// left behind: `.NAME.capops-PID` beside a file capops manages (one the
/// manifest lists, one this render writes, or the manifest itself), plain
/// files only. Called under the folder's lock, when no other render of it
/// is running: every such file is stale. A file of the same shape beside
/// anything else in the folder is the user's, and stays.
fn remove_stale_staging(out: &Path, managed: &BTreeSet<&str>) {
    let target = |rel: &Path| -> Option<String> {
        let name = rel.file_name()?.to_str()?;
        let (head, pid) = name.strip_prefix('.')?.rsplit_once(".capops-")?;
        if head.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let dir = rel.parent().and_then(Path::to_str).unwrap_or("");
        Some(if dir.is_empty() {
            head.to_string()
        } else {
            format!("{dir}/{head}")
        })
    };
    for entry in walkdir::WalkDir::new(out)
        .follow_links(false)
        .max_depth(8)
        .into_iter()
        .flatten()
    {
        let Ok(rel) = entry.path().strip_prefix(out) else {
            continue;
        };
        if entry.file_type().is_file() && target(rel).is_some_and(|t| managed.contains(t.as_str()))
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Refuses a rendered path that could leave the output folder.
fn plain(rel: &str) -> Result<&Path, Refused> {
    let p = Path::new(rel);
    // Written as it is meant (no `a//b` or `a/./b`, which name the same
    // file under another spelling: a manifest entry spelled so would read
    // as a stale file and remove the rendered one).
    let ok = !rel.is_empty()
        && !rel.contains('\\')
        && rel
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
        && p.components().all(|c| matches!(c, Component::Normal(_)));
    if ok {
        Ok(p)
    } else {
        Err(Refused::UnsafePath(rel.to_string()))
    }
}

/// Refuses when `out` or anything between it and `rel` is a symbolic link.
fn no_links(out: &Path, rel: &Path) -> Result<(), Refused> {
    let mut p = out.to_path_buf();
    let check = |p: &Path| match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Err(Refused::Symlink(p.display().to_string())),
        _ => Ok(()),
    };
    check(&p)?;
    for c in rel.components() {
        p.push(c);
        check(&p)?;
    }
    Ok(())
}

/// The manifest's files. A link, something other than a plain file (a
/// FIFO would block the render forever) or a file past the size of any
/// document is refused before it is opened.
fn read_manifest(out: &Path) -> Result<BTreeSet<String>, Refused> {
    let path = out.join(MANIFEST);
    let bad = |why: String| Refused::BadManifest(path.display().to_string(), why);
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(bad(e.to_string())),
        Ok(m) if m.file_type().is_symlink() => {
            return Err(Refused::Symlink(path.display().to_string()));
        }
        Ok(m) if !m.is_file() => return Err(bad("it is not a plain file".into())),
        Ok(m) if m.len() > crate::load::files::MAX_FILE_BYTES => {
            return Err(bad(format!(
                "it is {} bytes, more than a manifest of any output holds (16 MiB)",
                m.len()
            )));
        }
        Ok(_) => {}
    }
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    parse_manifest(&text).map_err(bad)
}

/// The files a manifest lists, or why it does not read.
pub fn parse_manifest(text: &str) -> Result<BTreeSet<String>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let files = v["files"]
        .as_array()
        .ok_or_else(|| "it has no `files` list".to_string())?;
    files
        .iter()
        .map(|f| {
            f.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("`files` holds {f}, not a path"))
        })
        .collect()
}

/// Whether a rendered path belongs to what this render covers (`--cluster`
/// renders one cluster's folder and node-label plan only). A cluster's
/// folder is flat: a cluster named `cloud` does not own the Terraform
/// modules in `cloud/<provider>/<region>/`.
fn in_scope(path: &str, cluster: Option<&str>) -> bool {
    match cluster {
        None => true,
        Some(c) => {
            path.strip_prefix(&format!("{c}/"))
                .is_some_and(|rest| !rest.contains('/'))
                || path == format!("node-labels/{c}.yaml")
        }
    }
}

/// A file written beside its target, waiting to be renamed into place.
struct Staged {
    tmp: PathBuf,
    path: PathBuf,
}

/// Removes what a failed stage left: its temporary files, and the folders
/// it created that are still empty (deepest first).
fn unstage(staged: &[Staged], created: &[PathBuf]) {
    for s in staged {
        let _ = std::fs::remove_file(&s.tmp);
    }
    for dir in created.iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
}

/// Creates `dir` and the folders above it that are missing, recording each
/// one it created.
fn create_dirs(dir: &Path, created: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut missing = Vec::new();
    let mut p = dir.to_path_buf();
    while std::fs::symlink_metadata(&p).is_err() {
        missing.push(p.clone());
        match p.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => p = parent.to_path_buf(),
            _ => break,
        }
    }
    for d in missing.into_iter().rev() {
        std::fs::create_dir(&d)?;
        created.push(d);
    }
    Ok(())
}

fn manifest_text(files: &BTreeSet<String>) -> String {
    serde_json::to_string_pretty(&serde_json::json!({
        "version": 1,
        "writtenBy": "capops render",
        "files": files,
    }))
    .unwrap_or_default()
        + "\n"
}

/// Writes the rendered files into `out` (each only when its bytes change),
/// removes the files the previous renders of this scope wrote and this one
/// no longer renders, and records the manifest. Everything is checked
/// before the first byte is written, and every changed file is first
/// written beside its target: when one of those writes fails (a full disk,
/// a file where a folder should be) the temporary files are removed and
/// the output folder is left exactly as it was. Only then are they renamed
/// into place, with a manifest that already lists them, so even a failure
/// among the renames leaves nothing a later render could not prune.
pub fn write(out: &Path, r: &Rendered, cluster: Option<&str>) -> Result<WriteOutcome, Refused> {
    let io = |p: &Path, e: std::io::Error| Refused::Io(p.display().to_string(), e);
    // One render at a time per output folder (an advisory lock on the
    // folder, held until this returns): two at once would mix their files
    // and manifests. A folder not there yet has nothing to mix.
    // The folder, or one above it, a file: nothing can be written under it
    // (and its manifest would read as broken).
    if let Some(file) = out
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| std::fs::metadata(a).is_ok_and(|m| !m.is_dir()))
    {
        return Err(Refused::NotAFolder(file.display().to_string()));
    }
    let _lock = match std::fs::File::open(out) {
        Ok(dir) => {
            dir.lock().map_err(|e| io(out, e))?;
            Some(dir)
        }
        Err(_) => None,
    };
    for f in &r.files {
        no_links(out, plain(&f.path)?)?;
    }
    let mut previous = read_manifest(out)?;
    // A manifest that lists itself (edited by hand) is not a file this
    // render stopped writing: never removed, nor reported so.
    previous.remove(MANIFEST);
    for old in &previous {
        let rel = plain(old).map_err(|_| {
            Refused::BadManifest(
                out.join(MANIFEST).display().to_string(),
                format!("it lists `{old}`, which is not a plain relative path in the folder"),
            )
        })?;
        no_links(out, rel)?;
    }
    no_links(out, Path::new(MANIFEST))?;
    let wanted: BTreeSet<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
    if _lock.is_some() {
        let managed = wanted
            .iter()
            .copied()
            .chain(previous.iter().map(String::as_str))
            .chain([MANIFEST])
            .collect();
        remove_stale_staging(out, &managed);
    }

    // Stage: every changed file beside its target.
    let mut staged: Vec<Staged> = Vec::new();
    let mut created: Vec<PathBuf> = Vec::new();
    let mut written = BTreeSet::new();
    for f in &r.files {
        let path = out.join(&f.path);
        let text = f.text();
        match std::fs::symlink_metadata(&path) {
            // A folder (or a FIFO, a socket) where the file goes: the
            // rename would fail among the others, so refuse before any.
            Ok(m) if !m.is_file() => {
                unstage(&staged, &created);
                return Err(io(
                    &path,
                    std::io::Error::other(
                        "something other than a file is there (a folder?); move it away",
                    ),
                ));
            }
            Ok(m)
                if m.len() == text.len() as u64
                    && std::fs::read(&path).is_ok_and(|old| old == text.as_bytes()) =>
            {
                continue;
            }
            _ => {}
        }
        let parent = path.parent().unwrap_or(out);
        let tmp = parent.join(format!(
            ".{}.capops-{}",
            path.file_name().unwrap_or_default().to_string_lossy(),
            std::process::id()
        ));
        let result = create_dirs(parent, &mut created)
            .map_err(|e| io(parent, e))
            .and_then(|()| std::fs::write(&tmp, text.as_bytes()).map_err(|e| io(&path, e)));
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            unstage(&staged, &created);
            return Err(e);
        }
        staged.push(Staged { tmp, path });
        written.insert(f.path.clone());
    }

    // The manifest lists the old files and the new before any is replaced.
    let kept: BTreeSet<String> = previous
        .iter()
        .filter(|p| !in_scope(p, cluster))
        .cloned()
        .collect();
    let mut during = previous.clone();
    during.extend(wanted.iter().map(|p| p.to_string()));
    let manifest = out.join(MANIFEST);
    let result = create_dirs(out, &mut created)
        .and_then(|()| {
            super::common::write_atomically(&manifest, manifest_text(&during).as_bytes())
        })
        .map_err(|e| io(&manifest, e));
    if let Err(e) = result {
        unstage(&staged, &created);
        return Err(e);
    }

    // Commit: rename into place, prune, record.
    for (i, s) in staged.iter().enumerate() {
        if let Err(e) = std::fs::rename(&s.tmp, &s.path) {
            unstage(&staged[i..], &[]);
            if i == 0 {
                return Err(io(&s.path, e));
            }
            return Err(Refused::Partly {
                path: s.path.display().to_string(),
                error: e,
                done: i,
                total: staged.len(),
            });
        }
    }
    let mut removed = Vec::new();
    for old in previous.iter().filter(|p| in_scope(p, cluster)) {
        if wanted.contains(old.as_str()) {
            continue;
        }
        let path = out.join(old);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            std::fs::remove_file(&path).map_err(|error| Refused::Unfinished {
                step: "removing",
                path: path.display().to_string(),
                error,
                left: ", and some it no longer renders",
            })?;
            removed.push(old.clone());
        }
    }
    let mut files = kept;
    files.extend(wanted.iter().map(|p| p.to_string()));
    super::common::write_atomically(&manifest, manifest_text(&files).as_bytes()).map_err(
        |error| Refused::Unfinished {
            step: "recording the manifest",
            path: manifest.display().to_string(),
            error,
            left: ", and the manifest still lists the files from before too",
        },
    )?;
    Ok(WriteOutcome { written, removed })
}

#[cfg(test)]
mod tests {
    use super::in_scope;

    #[test]
    fn a_cluster_render_covers_its_own_flat_folder_and_plan_only() {
        assert!(in_scope(
            "cloud/resourcequota-ml-capops-gpu.yaml",
            Some("cloud")
        ));
        assert!(in_scope("node-labels/cloud.yaml", Some("cloud")));
        // The Terraform modules are not the `cloud` cluster's to prune.
        assert!(!in_scope(
            "cloud/aws/us-east-1/providers.tf.json",
            Some("cloud")
        ));
        assert!(!in_scope("other/priorityclass-x.yaml", Some("cloud")));
        assert!(in_scope("cloud/aws/us-east-1/providers.tf.json", None));
    }
}
