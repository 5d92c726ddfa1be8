//! The tree reads as the pipeline: every import points down it, no two files
//! import each other, and no source file grows past what one reads in a sitting.
//!
//! Stages, from the bottom: `diag`, `model`, `gpu`, `capacity`, `load`,
//! `validate`, `forecast`, `cost`, `policy`, `render`, `output`, `pipeline`,
//! then the edges (`ingest`, `sync`, `github`) and `cli`. A module may use its
//! own stage and the stages below it. Test modules (`tests.rs`, `*_tests.rs`,
//! and `#[cfg(test)] mod tests` blocks) are exempt: they may build fixtures
//! with the whole pipeline.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ORDER: &[&str] = &[
    "diag", "model", "gpu", "capacity", "load", "validate", "forecast", "cost", "policy", "render",
    "output", "pipeline", "ingest", "sync", "github", "cli",
];

/// Files allowed past the size limit: tables of identical small entries.
const DATA_TABLES: &[&str] = &["src/gpu/catalog.rs", "src/diag/codes.rs"];
const MAX_LINES: usize = 600;

fn rank(stage: &str) -> Option<usize> {
    ORDER.iter().position(|s| *s == stage)
}

fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
    out.sort();
    out
}

/// The module path of a source file: `src/policy/facts/mod.rs` -> `policy::facts`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file
        .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .unwrap();
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|l| l == "mod" || l == "lib" || l == "main")
    {
        parts.pop();
    }
    parts
}

/// The code of a file without its test module and its comments.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::a::b` path a file names, as module paths.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let tail = &rest[i + 7..];
        let end = tail
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(tail.len());
        let path: Vec<String> = tail[..end]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if !path.is_empty() {
            out.push(path);
        }
        rest = &tail[end..];
    }
    out
}

fn is_test_file(file: &Path) -> bool {
    let name = file.file_name().unwrap().to_string_lossy();
    name == "tests.rs" || name.ends_with("_tests.rs")
}

#[test]
fn every_import_points_down_the_pipeline() {
    let mut wrong = Vec::new();
    for file in sources() {
        if is_test_file(&file) {
            continue;
        }
        let module = module_of(&file);
        let Some(own) = module.first() else { continue };
        let Some(own_rank) = rank(own) else {
            continue;
        };
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        for path in crate_paths(&code) {
            let Some(r) = rank(&path[0]) else { continue };
            if r > own_rank {
                wrong.push(format!(
                    "{} ({own}) uses crate::{} ({})",
                    file.display(),
                    path.join("::"),
                    path[0]
                ));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports against the pipeline's direction:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_two_files_import_each_other() {
    // Files by module path.
    let files: BTreeMap<Vec<String>, PathBuf> =
        sources().into_iter().map(|f| (module_of(&f), f)).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, file) in &files {
        if is_test_file(file) {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        let mut targets = BTreeSet::new();
        for path in crate_paths(&code) {
            // The longest prefix of the path that is a file.
            if let Some(n) = (1..=path.len())
                .rev()
                .find(|n| files.contains_key(&path[..*n]))
            {
                targets.insert(path[..n].to_vec());
            }
        }
        // `super::x` from a file of a folder names a sibling.
        let parent: Vec<String> = if file.ends_with("mod.rs") {
            module.clone()
        } else {
            module[..module.len().saturating_sub(1)].to_vec()
        };
        let mut rest = code.as_str();
        while let Some(i) = rest.find("super::") {
            let tail = &rest[i + 7..];
            let end = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            let mut target = if file.ends_with("mod.rs") {
                parent[..parent.len().saturating_sub(1)].to_vec()
            } else {
                parent.clone()
            };
            target.push(tail[..end].to_string());
            if files.contains_key(&target) {
                targets.insert(target);
            }
            rest = &tail[end..];
        }
        targets.remove(module);
        edges.insert(module.clone(), targets);
    }
    let mut cycles = Vec::new();
    for (a, targets) in &edges {
        for b in targets {
            // A folder's mod.rs declaring and re-exporting its children is not a use.
            let a_is_parent_of_b = b.len() == a.len() + 1 && b.starts_with(a);
            let b_is_parent_of_a = a.len() == b.len() + 1 && a.starts_with(b);
            if a < b
                && !a_is_parent_of_b
                && !b_is_parent_of_a
                && edges.get(b).is_some_and(|t| t.contains(a))
            {
                cycles.push(format!("{} <-> {}", a.join("::"), b.join("::")));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "files that import each other:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn source_files_stay_readable_in_one_sitting() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long = Vec::new();
    for file in sources() {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if DATA_TABLES.contains(&rel.as_str()) {
            continue;
        }
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        if lines > MAX_LINES {
            long.push(format!("{rel}: {lines} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split them):\n{}",
        long.join("\n")
    );
}

#[test]
fn every_module_says_what_it_is_for() {
    let mut silent = Vec::new();
    for file in sources() {
        let text = std::fs::read_to_string(&file).unwrap();
        if !text.trim_start().starts_with("//!") {
            silent.push(file.display().to_string());
        }
    }
    assert!(
        silent.is_empty(),
        "files without a leading //! paragraph:\n{}",
        silent.join("\n")
    );
}
