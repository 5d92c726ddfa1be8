//! The parse cache on disk: a folder of segment files.
//!
//! By default the folder is `capops/parse-cache` in the git directory of the
//! repository being read (`.git/capops/parse-cache`), which no commit can
//! write; `--cache-dir` (or `CAPOPS_CACHE_DIR`) names another, such as a
//! folder CI restores with `actions/cache`. A folder inside the working tree
//! (outside its git directory) is refused: a pull request could commit
//! entries there. Each run that parsed files adds a segment of their trees,
//! written to a temporary file and renamed into place, so a reader never sees
//! half a segment; past [`MAX_SEGMENTS`] the segments are merged into one of
//! the entries the run used. Failing to read or write the cache costs a
//! parse, never a result: errors are reported as notes by the caller.

// An edge: it reads files, git, the environment or the clock (see clippy.toml).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::cache::Cache;
use std::path::{Component, Path, PathBuf};

/// Segments kept before they are merged.
pub const MAX_SEGMENTS: usize = 8;
/// Segments larger than this are not read.
pub const MAX_SEGMENT_BYTES: u64 = 512 * 1024 * 1024;
const EXTENSION: &str = "seg";

/// A cache read from a folder, with the segment files it came from.
#[derive(Debug)]
pub struct Opened {
    pub dir: PathBuf,
    pub cache: Cache,
    files: Vec<PathBuf>,
}

/// The default cache folder of the repository at `root`: in its git
/// directory; `None` outside git.
pub fn default_dir(root: &Path) -> Option<PathBuf> {
    let (_, git_dir) = super::git::dirs(root)?;
    Some(git_dir.join("capops").join("parse-cache"))
}

/// Why a cache folder is not used for the repository at `root`, if it is not.
pub fn refusal(dir: &Path, root: &Path) -> Option<String> {
    let dir = absolute(dir)?;
    let (workdir, git_dir) = match super::git::dirs(root) {
        Some((w, g)) => (absolute(&w)?, Some(absolute(&g)?)),
        None => (absolute(root)?, None),
    };
    let in_git_dir = git_dir.as_ref().is_some_and(|g| dir.starts_with(g));
    (dir.starts_with(&workdir) && !in_git_dir).then(|| {
        format!(
            "the parse cache {} is inside the working tree {}, where a commit could plant entries; it is not used (keep it in the git directory, the default, or outside the repository)",
            dir.display(),
            workdir.display()
        )
    })
}

/// A path made absolute and without `.` and `..`, following the links of
/// the part that exists.
fn absolute(path: &Path) -> Option<PathBuf> {
    let path = std::path::absolute(path).ok()?;
    // Resolve the longest existing prefix (links included), then the rest lexically.
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for c in rest.iter().rev() {
                match c {
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::Normal(n) => out.push(n),
                    _ => {}
                }
            }
            return Some(out);
        }
        rest.push(existing.components().next_back()?);
        existing = existing.parent()?;
    }
}

/// Reads every segment of `dir` (a missing folder is an empty cache).
pub fn open(dir: &Path) -> Opened {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == EXTENSION))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut segments = Vec::new();
    let mut read = Vec::new();
    for f in files {
        let small =
            std::fs::metadata(&f).is_ok_and(|m| m.is_file() && m.len() <= MAX_SEGMENT_BYTES);
        if small && let Ok(bytes) = std::fs::read(&f) {
            segments.push(bytes);
            read.push(f);
        }
    }
    Opened {
        dir: dir.to_path_buf(),
        cache: Cache::from_segments(segments),
        files: read,
    }
}

impl Opened {
    /// Writes what this run parsed as a new segment, and merges the segments
    /// when there are too many. Nothing is written when nothing was parsed.
    pub fn save(&self) -> std::io::Result<()> {
        let Some(fresh) = self.cache.fresh_segment() else {
            return Ok(());
        };
        std::fs::create_dir_all(&self.dir)?;
        if self.files.len() < MAX_SEGMENTS {
            return write_segment(&self.dir, &fresh).map(|_| ());
        }
        let merged = write_segment(&self.dir, &self.cache.compacted())?;
        for f in self.files.iter().filter(|f| **f != merged) {
            // Another run may have merged it already.
            let _ = std::fs::remove_file(f);
        }
        Ok(())
    }
}

/// Writes a segment under a name of its content, through a temporary file
/// renamed into place.
fn write_segment(dir: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    use std::hash::{BuildHasher, Hasher};
    let name = {
        let mut h =
            std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
                .build_hasher();
        h.write(bytes);
        format!("{:016x}-{}.{EXTENSION}", h.finish(), bytes.len())
    };
    let path = dir.join(name);
    let tmp = dir.join(format!(
        ".tmp-{}-{:x}",
        std::process::id(),
        std::collections::hash_map::RandomState::new().hash_one(bytes.len())
    ));
    let result = (|| {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map(|()| path)
}
