//! `capops test [PATH]`: runs policy test cases.
//!
//! The edge of the test runner: finds the case files, reads them and their
//! fixture repositories, and hands text and inputs to `policy::testing`.

use super::common::{Exit, Outcome, invalid, write_json};
use super::{Cli, Io};
use crate::load::{self, Input};
use crate::output::Format;
use crate::policy::testing::{self, CaseResult};
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub fn run(cli: &Cli, path: &Path, io: &mut Io<'_>) -> Outcome {
    let cases = discover(path).map_err(|(msg, help)| invalid(io, &msg, help.as_deref()))?;
    if cases.is_empty() {
        return Err(invalid(
            io,
            &format!("no test cases (*.yaml) in {}", path.display()),
            Some(
                "a case file states documents and the decisions the policy must reach; see docs/policy.md",
            ),
        ));
    }
    let results = run_cases(&cases);
    let failed = results.iter().filter(|r| !r.passed()).count();
    if cli.format == Format::Json {
        let out = json!({
            "passed": results.len() - failed,
            "failed": failed,
            "cases": results.iter().map(|r| json!({
                "name": r.name,
                "description": r.description,
                "passed": r.passed(),
                "failures": r.failures,
            })).collect::<Vec<_>>(),
        });
        write_json(io, "test", &out)?;
    } else {
        for r in &results {
            writeln!(
                io.stdout,
                "{} {}{}",
                if r.passed() { "PASS" } else { "FAIL" },
                r.name,
                if r.description.is_empty() {
                    String::new()
                } else {
                    format!(": {}", r.description)
                }
            )?;
            for f in &r.failures {
                // A failure's own lines (the errors under a wrong exit code)
                // are indented under it.
                writeln!(io.stdout, "       {}", f.replace('\n', "\n       "))?;
            }
        }
        writeln!(
            io.stdout,
            "\n{} passed, {failed} failed",
            results.len() - failed
        )?;
    }
    // A case file that does not read is invalid input, not a failed test.
    let broken = results
        .iter()
        .any(|r| r.failures.iter().any(|f| f.starts_with(BROKEN)));
    Ok(if broken {
        Exit::Invalid
    } else if failed == 0 {
        Exit::Ok
    } else {
        Exit::Gate
    })
}

use crate::policy::testing::BROKEN;

/// The case files of a folder: `*.yaml` directly in it. A capacity
/// repository's cases are in its `tests/` folder.
fn discover(path: &Path) -> Result<Vec<PathBuf>, (String, Option<String>)> {
    let is_repo = path.join(load::CONFIG_FILE).is_file();
    let dir = match (is_repo, path.join("tests").is_dir()) {
        (true, true) => path.join("tests"),
        (true, false) => {
            return Err((
                format!(
                    "{} is a capacity repository without a tests/ folder: it has no policy test cases",
                    path.display()
                ),
                Some("put case files in tests/ (see docs/policy.md), or pass the folder that holds them".into()),
            ));
        }
        _ => path.to_path_buf(),
    };
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| (format!("cannot read {}: {e}", dir.display()), None))?;
    let mut cases: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        // Links too (dangling or not): refused by name when read, never
        // skipped without a word.
        .filter(|p| {
            let kind = std::fs::symlink_metadata(p).map(|m| m.file_type());
            kind.is_ok_and(|t| t.is_file() || t.is_symlink())
                && p.extension().is_some_and(|x| x == "yaml" || x == "yml")
        })
        .collect();
    cases.sort();
    Ok(cases)
}

/// Reads every case and its fixture (each fixture once) and runs them on all cores.
fn run_cases(cases: &[PathBuf]) -> Vec<CaseResult> {
    use rayon::prelude::*;
    let mut fixtures: HashMap<PathBuf, Result<Vec<Input>, String>> = HashMap::new();
    let mut prepared = Vec::new();
    for path in cases {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let case = read_case_file(path).and_then(|text| testing::read_case(&text));
        let case = match case {
            Ok(c) => c,
            Err(e) => {
                // Where, so the file can be found and fixed (`path: what at line:column`).
                prepared.push((name, Err(format!("{BROKEN}{}: {e}", path.display()))));
                continue;
            }
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        let fixture = testing::fixture_of(dir, &case, dir.join("fixture").is_dir());
        fixtures
            .entry(fixture.clone())
            .or_insert_with(|| load::files::collect(&fixture).map_err(|e| format!("fixture: {e}")));
        prepared.push((name, Ok((case, fixture, path.display().to_string()))));
    }
    prepared
        .par_iter()
        .map(|(name, case)| match case {
            Ok((case, fixture, path)) => match &fixtures[fixture] {
                Ok(inputs) => testing::run_case(name, path, case, inputs.clone()),
                // A fixture that does not read is the case file's fault.
                Err(e) => failed(name, &case.description, format!("{BROKEN}{path}: {e}")),
            },
            Err(e) => failed(name, "", e.clone()),
        })
        .collect()
}

fn failed(name: &str, description: &str, why: String) -> CaseResult {
    CaseResult {
        name: name.to_string(),
        description: description.to_string(),
        failures: vec![why],
    }
}

/// A case file's text: a plain file (a link could bring any file of the
/// machine into the output) of at most the size a repository's files may
/// have.
fn read_case_file(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if meta.file_type().is_symlink() {
        return Err("is a link: case files are read only as plain files".into());
    }
    let limit = load::files::MAX_FILE_BYTES;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!("is larger than {} MiB", limit >> 20));
    }
    String::from_utf8(bytes).map_err(|_| "is not UTF-8 text".into())
}
