//! Policy test cases (`capops test`), in the spirit of `opa test`.
//!
//! A case is a YAML file: a fixture repository, optionally documents added to
//! form the base, optionally a change (documents added or replaced by kind and
//! name, documents removed), and the expected decisions: outcome, tier, roles,
//! missing fields, rules that fired, diagnostic codes, exit code. Cases run
//! through the same evaluation as `capops check`, in memory. Reading the
//! case files and fixtures is the command line's job: this module gets text
//! and inputs.

use super::change::ChangeKind;
use super::{CheckInput, CheckResult, Outcome};
use crate::diag::{Code, Diagnostic, Severity, SourceMap};
use crate::load::{self, Content, Input, TypedDoc};
use crate::model::{Kind, Timestamp};
use crate::validate;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use super::case::{Case, ChangeSpec, Embedded, Expect, ExpectDecision, read_case};

/// The result of one case.
#[derive(Debug)]
pub struct CaseResult {
    pub name: String,
    pub description: String,
    /// Why it failed; empty when it passed.
    pub failures: Vec<String>,
}

impl CaseResult {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// The fixture repository of a case, from the folder its file is in: the
/// case's `fixture`, else a `fixture/` folder beside it, else the capacity
/// repository the tests folder belongs to.
pub fn fixture_of(case_dir: &Path, case: &Case, has_fixture_folder: bool) -> PathBuf {
    match &case.fixture {
        Some(f) => case_dir.join(f),
        None if has_fixture_folder => case_dir.join("fixture"),
        None => case_dir.parent().unwrap_or(case_dir).to_path_buf(),
    }
}

fn stream(path: &str, text: &Option<String>) -> Option<Input> {
    text.as_ref().map(|t| Input {
        path: path.to_string(),
        content: Content::Bytes(t.clone().into_bytes()),
    })
}

fn identity(doc: &TypedDoc) -> (Kind, String) {
    (doc.kind(), doc.metadata().name.value.to_string())
}

/// Runs one case against its fixture's files; `file` names the case file
/// in the failure of a case that does not read.
pub fn run_case(name: &str, file: &str, case: &Case, fixture: Vec<Input>) -> CaseResult {
    let mut result = CaseResult {
        name: name.to_string(),
        description: case.description.clone(),
        failures: Vec::new(),
    };
    match evaluate_case(case, fixture) {
        Ok(judged) => compare(&case.expect, &judged, &mut result.failures),
        // A case that does not make a base and a head (a bad `at`, a
        // `change.remove` of a document the base lacks) is a mistake in the
        // case, not a failure of the policy.
        Err(e) => result.failures.push(format!("{BROKEN}{file}: {e}")),
    }
    result
}

/// ` at line:column` of a field of the case (empty when not known).
fn field_at(case: &Case, field: &str) -> String {
    case.places.get(field).cloned().unwrap_or_default()
}

/// How the failure of a case that does not read begins (`capops test`
/// exits 2 on one, not 1).
pub const BROKEN: &str = "cannot read the case ";

/// Builds the base and head of a case and evaluates them.
fn evaluate_case(case: &Case, mut inputs: Vec<Input>) -> Result<Judged, String> {
    let at: Timestamp = crate::model::types::moment(&case.at).map_err(|e| format!("at: {e}"))?;
    inputs.extend(stream("case-base.yaml", &case.base));
    let mut base_loaded = load::load(inputs, None);
    let pack = super::default_pack(&mut base_loaded.sources)
        .ok_or("the built-in policy pack could not be read")?;
    // Growth of a team the base does not hold would judge nobody: a typo
    // that silently tests another case.
    let teams: BTreeSet<String> = base_loaded
        .docs
        .iter()
        .map(identity)
        .filter(|(k, _)| *k == Kind::Team)
        .map(|(_, n)| n)
        .collect();
    if let Some(team) = case.recent_growth.keys().find(|t| !teams.contains(*t)) {
        return Err(format!(
            "recentGrowth.{team}: the base holds no team `{team}` (its teams: {}){}",
            teams.iter().cloned().collect::<Vec<_>>().join(", "),
            field_at(case, &format!("recentGrowth.{team}"))
        ));
    }
    let Some(change) = &case.change else {
        // Judged as it stands: the fixture and base, with `documents` added or replacing.
        let head = overlay(
            base_loaded,
            "case-documents.yaml",
            &case.documents,
            &BTreeSet::new(),
        );
        return Ok(judge(&head, None, at, &pack, case));
    };
    // The base, judged as merged; the head is the base with the change applied.
    let mut base_repo = crate::load::base::assemble(base_loaded.docs.clone());
    base_repo.usage = std::sync::Arc::new(base_loaded.usage.clone());
    let parse = |r: &str| {
        let (k, n) = r.split_once('/')?;
        Some((Kind::parse(k)?, n.to_string()))
    };
    if let Some(i) = change.remove.iter().position(|r| parse(r).is_none()) {
        return Err(format!(
            "change.remove: `{}` is not `Kind/name` (`CapacityRequest/train-llm`){}",
            change.remove[i],
            field_at(case, &format!("change.remove.{i}"))
        ));
    }
    let held: BTreeSet<(Kind, String)> = base_loaded.docs.iter().map(identity).collect();
    if let Some(i) = change
        .remove
        .iter()
        .position(|r| parse(r).is_some_and(|id| !held.contains(&id)))
    {
        return Err(format!(
            "change.remove: the base holds no {} to remove{}",
            change.remove[i],
            field_at(case, &format!("change.remove.{i}"))
        ));
    }
    let removed: BTreeSet<(Kind, String)> = change.remove.iter().filter_map(|r| parse(r)).collect();
    let head = overlay(base_loaded, "case-change.yaml", &change.add, &removed);
    Ok(judge(&head, Some(&base_repo), at, &pack, case))
}

/// The loaded documents with `stream`'s documents added (replacing those of
/// the same kind and name) and `removed` taken out, validated.
fn overlay(
    mut base: load::Loaded,
    path: &str,
    text: &Option<String>,
    removed: &BTreeSet<(Kind, String)>,
) -> validate::Outcome {
    let added = load::load_with(
        std::mem::take(&mut base.sources),
        stream(path, text).into_iter().collect(),
        Default::default(),
        None,
    );
    let replaced: BTreeSet<(Kind, String)> = added.docs.iter().map(identity).collect();
    // A Config in the case stands for the repository's capops.yaml.
    let config_file = added
        .docs
        .iter()
        .find(|d| d.kind() == Kind::Config)
        .map(|d| d.origin().file)
        .or(base.config_file);
    let mut docs: Vec<TypedDoc> = base
        .docs
        .into_iter()
        .filter(|d| {
            let id = identity(d);
            !removed.contains(&id) && !replaced.contains(&id)
        })
        .collect();
    docs.extend(added.docs);
    let mut diagnostics = base.diagnostics;
    diagnostics.extend(added.diagnostics);
    validate::validate(load::Loaded {
        sources: added.sources,
        docs,
        usage: base.usage,
        diagnostics,
        config_file,
        document_count: base.document_count + added.document_count,
        invalid: base.invalid.into_iter().chain(added.invalid).collect(),
        unread: base.unread || added.unread,
    })
}

fn judge(
    head: &validate::Outcome,
    base: Option<&crate::model::Repo>,
    at: Timestamp,
    pack: &crate::model::Document<crate::model::PolicySpec>,
    case: &Case,
) -> Judged {
    let recent_growth = &case.recent_growth;
    let none = std::collections::HashSet::new();
    let result = super::check(&CheckInput {
        head: &head.repo,
        base,
        same_files: &none,
        at,
        default_pack: pack,
        trace: false,
        world: None,
        analysis: None,
        recent_growth,
        platform_growth: &Default::default(),
        templates: None,
        effects: &Default::default(),
        author: None,
        co_authors: &[],
        config_files_changed: &[],
    });
    let mut diags = head.diagnostics.clone();
    diags.extend(result.diagnostics.iter().cloned());
    let invalid = diags.iter().any(|d| d.severity == Severity::Error);
    let exit = if invalid {
        2
    } else if result
        .evaluated
        .iter()
        .any(|e| e.decision.outcome != Outcome::Approved)
    {
        1
    } else {
        0
    };
    let errors = diags
        .iter()
        .filter(|d| d.is_error())
        .map(|d| {
            let place = d
                .span()
                .map(|span| place(&head.sources, span, &case.embedded))
                .unwrap_or_default();
            // A position the message itself gives (an unclosed bracket's)
            // is in the embedded text's lines too: said in the case's.
            let message = d
                .span()
                .and_then(|span| case.embedded.get(head.sources.path(span.file)))
                .map_or_else(|| d.message.clone(), |e| in_case(&d.message, e));
            format!("{}{place}: {message}", d.code.as_str())
        })
        .collect();
    Judged {
        check: result,
        diags,
        exit,
        errors,
    }
}

/// A case judged: the check, its diagnostics, the exit code `check` would
/// give, and each error with where it is.
struct Judged {
    check: CheckResult,
    diags: Vec<Diagnostic>,
    exit: i32,
    errors: Vec<String>,
}

/// ` at line 25, column 33 of the case (in `change.add`)` for a span in an
/// embedded stream written as a literal block, ` in `change.add`, its line
/// 3, column 9` for one written otherwise, ` at path:line:column` in the
/// fixture.
fn place(
    sources: &SourceMap,
    span: crate::diag::Span,
    embedded: &BTreeMap<String, Embedded>,
) -> String {
    let lc = sources.line_col(span);
    let path = sources.path(span.file);
    match embedded.get(path) {
        Some(e) => format!(
            " at line {}, column {} of the case (in `{}`)",
            e.line + lc.line - 1,
            e.indent + lc.column,
            e.key
        ),
        None => match path
            .strip_prefix("case-")
            .and_then(|p| p.strip_suffix(".yaml"))
        {
            Some(key) => format!(
                " in `{}`, its line {}, column {}",
                if key == "change" { "change.add" } else { key },
                lc.line,
                lc.column
            ),
            None => format!(" at {path}:{}:{}", lc.line, lc.column),
        },
    }
}

/// `message` with each `line L, column C` it gives (in the lines of an
/// embedded literal block) moved to the case file's lines and columns.
fn in_case(message: &str, e: &Embedded) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(i) = rest.find("line ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 5..];
        let digits = |t: &str| t.bytes().take_while(u8::is_ascii_digit).count();
        let n = digits(after);
        let tail = &after[n..];
        let m = tail
            .strip_prefix(", column ")
            .map(digits)
            .filter(|&m| n > 0 && m > 0);
        match (after[..n].parse::<usize>(), m) {
            (Ok(line), Some(m)) => {
                let col_text = &tail[", column ".len()..];
                let column: usize = col_text[..m].parse().unwrap_or(0);
                out.push_str(&format!(
                    "line {}, column {}",
                    e.line + line - 1,
                    e.indent + column
                ));
                rest = &col_text[m..];
            }
            _ => {
                out.push_str("line ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn sorted(v: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = v.into_iter().collect();
    v.sort();
    v
}

/// Errors listed under a wrong exit code, at most.
const ERRORS_SHOWN: usize = 5;

fn compare(expect: &Expect, judged: &Judged, failures: &mut Vec<String>) {
    let (check, diags, exit) = (&judged.check, &judged.diags, judged.exit);
    if let Some(want) = expect.exit
        && want != exit
    {
        let mut text = format!("exit {exit}, expected {want}");
        for e in judged.errors.iter().take(ERRORS_SHOWN) {
            text.push_str(&format!("\n  error {e}"));
        }
        if judged.errors.len() > ERRORS_SHOWN {
            text.push_str(&format!(
                "\n  and {} more errors",
                judged.errors.len() - ERRORS_SHOWN
            ));
        }
        failures.push(text);
    }
    if let Some(want) = &expect.codes {
        let got = sorted(diags.iter().map(|d| d.code.as_str().to_string()));
        let want = sorted(want.iter().cloned());
        if got != want {
            failures.push(format!("diagnostic codes {got:?}, expected {want:?}"));
        }
        for w in &want {
            if Code::parse(w).is_none() {
                failures.push(format!("`{w}` is not a diagnostic code"));
            }
        }
    }
    if let Some(want) = &expect.judged {
        let got = sorted(check.evaluated.iter().map(|e| e.name.clone()));
        let want = sorted(want.iter().cloned());
        if got != want {
            failures.push(format!("judged {got:?}, expected {want:?}"));
        }
    }
    for (name, want) in &expect.decisions {
        let Some(e) = check.evaluated.iter().find(|e| &e.name == name) else {
            let judged: Vec<&str> = check.evaluated.iter().map(|e| e.name.as_str()).collect();
            failures.push(format!(
                "`{name}` was not judged (judged: {})",
                judged.join(", ")
            ));
            continue;
        };
        let d = &e.decision;
        if d.outcome.as_str() != want.decision {
            failures.push(format!(
                "`{name}`: decision {}, expected {}",
                d.outcome.as_str(),
                want.decision
            ));
        }
        if let Some(t) = &want.tier
            && d.tier.as_deref() != Some(t.as_str())
        {
            failures.push(format!(
                "`{name}`: tier {}, expected {t}",
                d.tier.as_deref().unwrap_or("none")
            ));
        }
        if let Some(roles) = &want.roles {
            let got = sorted(d.approvals.iter().map(|a| a.role.to_string()));
            if got != sorted(roles.iter().cloned()) {
                failures.push(format!(
                    "`{name}`: roles {got:?}, expected {:?}",
                    sorted(roles.iter().cloned())
                ));
            }
        }
        if let Some(missing) = &want.missing {
            let got = sorted(d.missing_fields.iter().map(|s| s.to_string()));
            if got != sorted(missing.iter().cloned()) {
                failures.push(format!(
                    "`{name}`: missing {got:?}, expected {:?}",
                    sorted(missing.iter().cloned())
                ));
            }
        }
        if let Some(rules) = &want.rules {
            let got = sorted(d.findings.iter().map(|f| f.rule.clone()));
            if got != sorted(rules.iter().cloned()) {
                failures.push(format!(
                    "`{name}`: rules fired {got:?}, expected {:?}",
                    sorted(rules.iter().cloned())
                ));
            }
        }
        if let Some(c) = &want.change {
            let got = match e.change {
                ChangeKind::Added => "added",
                ChangeKind::Modified => "modified",
                ChangeKind::Removed => "removed",
                ChangeKind::Unchanged => "unchanged",
            };
            if got != c {
                failures.push(format!("`{name}`: change {got}, expected {c}"));
            }
        }
    }
}

#[cfg(test)]
#[path = "testing_tests.rs"]
mod tests;
