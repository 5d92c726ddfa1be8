//! The parse cache never changes a result: on a real git copy of the bundled
//! example, a run of random edits (numbers changed, lines deleted, doubled
//! and swapped, documents added, files removed, YAML broken), each checked
//! against the base with a cache being filled, with the same cache warm, and
//! without a cache, gives the same output and exit code every time; and a
//! warm run parses nothing new. Damaged cache files cost a parse, not a result.

mod common;

use common::{Out, commit_all, copy_dir};
use std::path::{Path, PathBuf};

/// xorshift64*: a seeded, reproducible sequence without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn yaml_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, &mut out);
    out.sort();
    out
}

fn request(name: &str, gpus: usize) -> String {
    format!(
        "---\napiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: {name}\nspec:\n  team: training\n  cluster: train-a100\n  pool: a100-train\n  resources:\n    nvidia.com/gpu: {gpus}\n  window: {{start: 2026-12-07, end: 2027-01-01}}\n  workloadClass: training\n  priorityClass: scheduled-training\n  justification: random edit\n  successMetrics: [used]\n"
    )
}

/// One random edit of the working tree; returns what it did.
fn edit(root: &Path, rng: &mut Rng, step: usize) -> String {
    let files = yaml_files(root);
    let file = &files[rng.below(files.len())];
    let text = std::fs::read_to_string(file).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let n = lines.len().max(1);
    let what = rng.below(10);
    let rel = file.strip_prefix(root).unwrap().display().to_string();
    match what {
        0..=2 => {
            // A request resized (most edits of a capacity repository).
            let files: Vec<&PathBuf> = files
                .iter()
                .filter(|f| f.starts_with(root.join("requests")))
                .collect();
            let Some(file) = files.get(rng.below(files.len())) else {
                return "nothing".into();
            };
            let text = std::fs::read_to_string(file).unwrap();
            let sizes: Vec<usize> = text
                .match_indices("nvidia.com/gpu: ")
                .map(|(i, _)| i)
                .collect();
            if sizes.is_empty() {
                return "nothing".into();
            }
            let at = sizes[rng.below(sizes.len())] + "nvidia.com/gpu: ".len();
            let end = at + text[at..].find('\n').unwrap_or(0);
            let t = format!("{}{}{}", &text[..at], 1 + rng.below(96), &text[end..]);
            std::fs::write(file, t).unwrap();
            return format!("resized in {}", file.strip_prefix(root).unwrap().display());
        }
        3 => {
            // A digit changed anywhere: sizes, dates, quotas, prices.
            let digits: Vec<usize> = text
                .char_indices()
                .filter(|(_, c)| c.is_ascii_digit())
                .map(|(i, _)| i)
                .collect();
            if digits.is_empty() {
                return "nothing".into();
            }
            let at = digits[rng.below(digits.len())];
            let mut bytes = text.into_bytes();
            bytes[at] = b'0' + rng.below(10) as u8;
            std::fs::write(file, bytes).unwrap();
            return format!("digit in {rel}");
        }
        6 => {
            lines.remove(rng.below(n).min(lines.len().saturating_sub(1)));
        }
        7 => {
            let i = rng.below(n).min(lines.len().saturating_sub(1));
            let line = lines.get(i).cloned().unwrap_or_default();
            lines.insert(i, line);
        }
        8 => {
            let (a, b) = (rng.below(n), rng.below(n));
            if a < lines.len() && b < lines.len() {
                lines.swap(a, b);
            }
        }
        4 | 5 => {
            let file = root.join("requests/training.yaml");
            let mut t = std::fs::read_to_string(&file).unwrap();
            t.push_str(&request(&format!("random-{step}"), 1 + rng.below(120)));
            std::fs::write(file, t).unwrap();
            return "request added".into();
        }
        9 => {
            let i = rng.below(n).min(lines.len().saturating_sub(1));
            if let Some(l) = lines.get_mut(i) {
                l.push_str(["  [", ": {", "\t", " &a *a"][rng.below(4)]);
            }
        }
        _ => {
            if file.ends_with("capops.yaml") || rng.below(2) == 0 {
                return "nothing".into();
            }
            std::fs::remove_file(file).unwrap();
            return format!("removed {rel}");
        }
    }
    std::fs::write(file, lines.join("\n") + "\n").unwrap();
    format!("edit {what} in {rel}")
}

fn check(root: &Path, cache: Option<&Path>) -> Out {
    let mut args: Vec<std::ffi::OsString> = vec![
        "check".into(),
        "--format".into(),
        "json".into(),
        "--base".into(),
        "HEAD".into(),
        "--at".into(),
        "2026-12-01".into(),
        "--fail-on".into(),
        "never".into(),
    ];
    match cache {
        Some(dir) => {
            args.push("--cache-dir".into());
            args.push(dir.into());
        }
        None => args.push("--no-cache".into()),
    }
    args.push(root.into());
    common::run_os(args, &[])
}

fn segments(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".seg"))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// A git repository (`repo/` in a temporary folder) holding the bundled
/// example, committed.
fn example_repo() -> (tempfile::TempDir, git2::Repository) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    let git = git2::Repository::init(&root).unwrap();
    copy_dir(&common::root().join("examples/acme"), &root);
    commit_all(&git, "base");
    (tmp, git)
}

fn same(a: &Out, b: &Out, what: &str) {
    assert_eq!(a.code, b.code, "{what}: exit codes differ\n{}", a.stderr);
    assert_eq!(a.stdout, b.stdout, "{what}: outputs differ");
    assert_eq!(a.stderr, b.stderr, "{what}: diagnostics differ");
}

#[test]
fn cached_and_uncached_checks_decide_the_same_on_random_changes() {
    let (tmp, git) = example_repo();
    let (root, cache) = (tmp.path().join("repo"), tmp.path().join("cache"));
    let mut rng = Rng(0x5eed_cafe_f00d_0001);
    let mut judged = 0;
    let mut invalid = 0;
    for step in 0..40 {
        // Each change starts from the base; now and then one merges and
        // the next ones build on it.
        git.checkout_head(Some(
            git2::build::CheckoutBuilder::new()
                .force()
                .remove_untracked(true),
        ))
        .unwrap();
        let mut did = edit(&root, &mut rng, step);
        if rng.below(3) == 0 {
            did = format!("{did}; {}", edit(&root, &mut rng, step + 1000));
        }
        let filling = check(&root, Some(&cache));
        let before = segments(&cache);
        let warm = check(&root, Some(&cache));
        let uncached = check(&root, None);
        let what = format!("step {step} ({did})");
        same(&filling, &uncached, &what);
        same(&warm, &uncached, &what);
        assert_eq!(
            segments(&cache),
            before,
            "{what}: a warm run parsed a file again"
        );
        assert!(
            matches!(uncached.code, 0 | 2),
            "{what}: exit {}\n{}",
            uncached.code,
            uncached.stderr
        );
        let decisions = uncached.json["decisions"].as_array().map_or(0, Vec::len);
        judged += decisions;
        if uncached.code == 2 && decisions == 0 {
            invalid += 1;
        } else if uncached.code == 0 && step % 4 == 3 {
            commit_all(&git, &format!("step {step}"));
        }
    }
    assert!(judged > 10, "the changes were judged ({judged} decisions)");
    assert!(invalid > 0, "some changes broke the repository");
    assert!(!segments(&cache).is_empty());
}

#[test]
fn a_damaged_cache_costs_a_parse_not_a_result() {
    let (tmp, _git) = example_repo();
    let (root, cache) = (tmp.path().join("repo"), tmp.path().join("cache"));
    let text = std::fs::read_to_string(root.join("requests/training.yaml")).unwrap();
    std::fs::write(
        root.join("requests/training.yaml"),
        text + &request("damage-test", 24),
    )
    .unwrap();
    let reference = check(&root, None);
    assert_eq!(reference.code, 0, "{}", reference.stderr);
    check(&root, Some(&cache));
    for seg in segments(&cache) {
        let path = cache.join(&seg);
        let mut bytes = std::fs::read(&path).unwrap();
        // Flip a byte in every entry's neighbourhood, and cut the tail.
        for i in (40..bytes.len()).step_by(97) {
            bytes[i] ^= 0x5a;
        }
        bytes.truncate(bytes.len() - 3);
        std::fs::write(&path, bytes).unwrap();
    }
    std::fs::write(cache.join("zz-foreign.seg"), b"another tool's file").unwrap();
    let damaged = check(&root, Some(&cache));
    same(&damaged, &reference, "damaged cache");
    // The damaged entries were parsed again and kept anew.
    let healed = check(&root, Some(&cache));
    same(&healed, &reference, "after the damaged run");
}

#[test]
fn a_cache_inside_the_working_tree_is_refused() {
    let (tmp, _git) = example_repo();
    let root = tmp.path().join("repo");
    let planted = root.join("cache");
    let out = check(&root, Some(&planted));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("inside the working tree"),
        "{}",
        out.stderr
    );
    assert!(!planted.exists(), "nothing was written there");
    // The default, in the git directory, is used.
    let mut args: Vec<std::ffi::OsString> = vec!["validate".into()];
    args.push(root.as_os_str().into());
    let out = common::run_os(args, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!segments(&root.join(".git/capops/parse-cache")).is_empty());
    // CAPOPS_NO_CACHE turns it off.
    let fresh = tempfile::tempdir().unwrap();
    let out = common::run_os(
        vec!["validate".into(), root.as_os_str().into()],
        &[
            ("CAPOPS_NO_CACHE", "1"),
            ("CAPOPS_CACHE_DIR", fresh.path().to_str().unwrap()),
        ],
    );
    assert_eq!(out.code, 0);
    assert!(segments(fresh.path()).is_empty());
}
