//! `capops check` and `capops explain`: judge a repository, or the change
//! since a base revision, against the approval policy.

use super::common::{
    Exit, Outcome, Stop, invalid, load_valid_with, stop, write_diagnostics, write_json,
    write_pretty,
};
use super::{Cli, Io};
use crate::diag::{Diagnostic, Severity};
use crate::load::base::{self, Base};
use crate::model::{Document, PolicySpec, Timestamp};
use crate::output::check::{BaseInfo, Context};
use crate::output::{self, Format, Paths};
use crate::pipeline::Validated;
use crate::policy::{self, CheckInput, CheckResult, Outcome as Decided};
use std::path::{Path, PathBuf};

/// Why the checked-out commit does not contain the base commit, and what to
/// do: a shallow clone may only lack the history that joins them; a merge
/// commit was made against an older tip of the base branch; otherwise the
/// branch was cut before the base.
fn not_contained(path: &Path, rev: &str, commit: &str) -> (String, String) {
    let short = commit.get(..12).unwrap_or(commit);
    if crate::load::git::is_shallow(path) {
        return (
            format!("the base revision `{rev}` ({short}) is not in the history of the checked-out commit as far as this shallow clone has it: whether the branch contains it cannot be told, so nothing is judged"),
            "fetch the whole history (`actions/checkout` with `fetch-depth: 0`, or `git fetch --unshallow`) and run again".into(),
        );
    }
    if crate::load::git::head_merges_an_older_tip(path, commit) {
        return (
            format!(
                "the base revision `{rev}` ({short}) is not in the history of the checked-out merge commit: the merge was made against an older tip of the base branch (it moved since), so this comparison would read every change merged since as undone by this one; nothing is judged"
            ),
            format!(
                "run again on a merge with the base as it stands (GitHub rebuilds a pull request's merge commit when the base branch moves: re-run the job), or merge `{rev}` into the branch"
            ),
        );
    }
    (
        format!(
            "the base revision `{rev}` ({short}) is not in the history of the checked-out commit: the branch was cut before it, so this comparison would read every change merged since as undone by this one; nothing is judged"
        ),
        format!(
            "bring the branch up to date (`git merge {rev}` or `git rebase {rev}`) and run again; a pull request's merge commit (what `actions/checkout` checks out) contains its base"
        ),
    )
}

/// When `check` fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Exit 1 only when something is denied.
    Denied,
    /// Exit 1 when something is denied or needs approval (default).
    Approval,
    /// Exit 0 whatever the decisions (2 and 3 still report invalid input and git failures).
    Never,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The repository root (the folder holding capops.yaml).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Git revision to compare with (a branch, tag or commit).
    #[arg(long)]
    pub base: Option<String>,
    /// Time of evaluation: a date (2026-12-01) or an RFC 3339 time; default now.
    #[arg(long, value_parser = super::common::at_arg)]
    pub at: Option<Timestamp>,
    /// When to exit with 1.
    #[arg(long, value_enum, default_value_t = FailOn::Approval)]
    pub fail_on: FailOn,
    /// Who opened the change (a GitHub login, or `app-slug[bot]`): usage hours it
    /// appends are data only when it is one of the Config's `usage.pullers`.
    /// `--github` reads the pull request's author instead.
    #[arg(
        long,
        value_name = "LOGIN",
        requires = "base",
        conflicts_with = "github",
        value_parser = crate::github::args::login
    )]
    pub author: Option<String>,
    /// The pull-request loop on GitHub (`--github` and its flags).
    #[command(flatten)]
    pub github: crate::github::args::GithubArgs,
}

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// The document to explain: its name, or `Kind/name` where documents of
    /// several kinds share it (`Team/devex`).
    pub name: String,
    /// The repository root (the folder holding capops.yaml).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// The repository root (the same as PATH; kept for scripts written before PATH).
    #[arg(long = "path", value_name = "PATH", conflicts_with = "path")]
    pub path_flag: Option<PathBuf>,
    /// Git revision to compare with.
    #[arg(long)]
    pub base: Option<String>,
    /// Time of evaluation; default now.
    #[arg(long, value_parser = super::common::at_arg)]
    pub at: Option<Timestamp>,
}

/// Everything `check` and `explain` load before evaluating.
pub(super) struct Loaded {
    pub(super) head: Validated,
    pub(super) base: Option<Base>,
    pub(super) pack: Document<PolicySpec>,
    /// The world a change is judged in (`policy::world`), when there is a base.
    world: Option<crate::model::Repo>,
    /// GPUs each team gained in the 30 days before the base (git history).
    recent_growth: std::collections::BTreeMap<String, f64>,
    /// Quota and cluster growth in the same 30 days.
    platform_growth: policy::world::PlatformGrowth,
    /// How the template overrides changed since the base.
    templates: Option<crate::policy::facts::TemplateDelta>,
    /// What the change does on clusters and clouds.
    pub(super) effects: super::effects::Effects,
    /// Problems of the working tree's template overrides (they do not
    /// compile, or what they render is refused), found by rendering with them.
    pub(super) template_problems: Vec<Diagnostic>,
}

impl Loaded {
    /// The repository decisions are judged in.
    pub(super) fn world(&self) -> &crate::model::Repo {
        self.world.as_ref().unwrap_or(&self.head.repo)
    }
}

/// Loads and validates the working tree, the base revision (with its
/// templates and the rolling growth of each team) and the default pack.
pub(super) fn load(
    cli: &Cli,
    path: &Path,
    base_rev: Option<&str>,
    at: Timestamp,
    io: &mut Io<'_>,
) -> Result<Loaded, Stop> {
    super::common::refuse_unopenable_git(path, io)?;
    let opened = super::common::open_cache(cli, path, io)?;
    let cache = opened.as_ref().map(|c| &c.cache);
    let head = load_valid_with(cli, path, "the policy can judge the repository", cache, io);
    if head.is_err() {
        super::common::save_cache(opened.as_ref());
    }
    let mut head = head?;
    let git_failed = |io: &mut Io<'_>, e: crate::load::git::GitError| {
        stop(io, Exit::External, &e.to_string(), None)
    };
    let base = match base_rev {
        None => None,
        Some(rev) if rev.trim().is_empty() => {
            let help = "name the revision the change is judged against: `--base main`, `--base origin/main` or a commit's SHA";
            return Err(invalid(io, "`--base` is empty", Some(help)));
        }
        Some(rev) => match base::load_base(&mut head.sources, &head.repo, path, rev, cache) {
            Ok(b) => Some(b),
            Err(e) => return Err(git_failed(io, e)),
        },
    };
    // A head cut before the base: compared with the base's tree, every
    // change merged since would read as undone by this one (a release that
    // offsets the change's own growth), though merging keeps them all.
    if let Some(b) = &base
        && matches!(crate::load::git::head_contains(path, &b.commit), Ok(false))
    {
        let (why, help) = not_contained(path, &b.rev, &b.commit);
        return Err(invalid(io, &why, Some(&help)));
    }
    if let Some(b) = base.as_ref().filter(|b| !b.problems.is_empty()) {
        let paths = crate::output::Paths::new(path);
        super::common::write_diagnostics(cli, &b.problems, &head.sources, &paths, io)
            .map_err(Stop::from)?;
        return Err(invalid(
            io,
            &format!(
                "the base revision `{}` does not load ({} error{} above, in files it holds): what it holds cannot judge the change, so nothing is judged",
                b.rev,
                b.problems.len(),
                if b.problems.len() == 1 { "" } else { "s" }
            ),
            Some(
                "fix those files on the base branch (a pull request this check cannot judge, so one an administrator merges), or judge against another --base",
            ),
        ));
    }
    let Some(pack) = policy::default_pack(&mut head.sources) else {
        return Err(invalid(
            io,
            "the built-in policy pack could not be read (a capops bug)",
            None,
        ));
    };
    let mut recent_growth = std::collections::BTreeMap::new();
    let mut platform_growth = policy::world::PlatformGrowth::default();
    let mut templates = None;
    let mut effects = super::effects::Effects::default();
    // The head's template overrides, compiled against the head's sources: a
    // pull request's templates are checked as render would check them.
    let head_files = crate::load::templates::read_worktree(path);
    let mut template_problems = Vec::new();
    let overrides = super::render::overrides(
        head_files.clone(),
        crate::diag::SourceKind::WorkTree,
        &mut head.sources,
        &mut template_problems,
    );
    let th = crate::render::templates::Templates::new(&overrides, &mut template_problems);
    let world = match &base {
        None => {
            if !head_files.is_empty() {
                let rendered = crate::render::render(
                    &head.repo,
                    &th,
                    &crate::render::Options {
                        at,
                        revision: String::new(),
                        clusters: None,
                    },
                );
                template_problems.extend(super::effects::template_problems(&rendered));
            }
            None
        }
        Some(b) => {
            let base_files = crate::load::templates::read_revision(path, &b.commit)
                .map_err(|e| git_failed(io, e))?;
            let mut delta = crate::policy::facts::history::template_delta(&base_files, &head_files);
            let changes = policy::change::diff(&b.repo, &head.repo, &b.same_files);
            let full_base = policy::world::full_base(&b.repo, &head.repo, &b.same_files);
            effects = super::effects::compute(
                &head.repo,
                &full_base,
                &base_files,
                &head_files,
                &th,
                &changes,
                at,
            );
            template_problems.append(&mut effects.template_problems);
            delta.rendered_files_changed = effects.template_caused.clone();
            delta.output_edited =
                super::output_edits::output_edited(path, &b.commit, &b.repo, &head.repo, &th, at)
                    .map_err(|e| git_failed(io, e))?;
            templates = Some(delta);
            let world = policy::world_of(&head.repo, Some(&b.repo), &b.same_files).into_owned();
            (recent_growth, platform_growth) =
                growth(&head, b, &world, path, at, cache).map_err(|e| git_failed(io, e))?;
            Some(world)
        }
    };
    template_problems.extend(super::effects::kueue_refusals(&head.repo));
    super::common::save_cache(opened.as_ref());
    Ok(Loaded {
        head,
        base,
        pack,
        world,
        recent_growth,
        platform_growth,
        templates,
        effects,
        template_problems,
    })
}

/// What each team's requests grew by in the 30 days before the base: the base
/// against the state of its first-parent history 30 days before `at`
/// ([`crate::load::git::commit_before`]: its first commit when the history is
/// younger; a shallow clone is an error).
fn growth(
    head: &Validated,
    base: &Base,
    world: &crate::model::Repo,
    path: &Path,
    at: Timestamp,
    cache: Option<&crate::load::cache::Cache>,
) -> Result<
    (
        std::collections::BTreeMap<String, f64>,
        policy::world::PlatformGrowth,
    ),
    crate::load::git::GitError,
> {
    let cutoff = at.as_second() - 30 * 86_400;
    // A history younger than 30 days counts from its first commit.
    let (crate::load::git::Past::Commit(past) | crate::load::git::Past::Root(past)) =
        crate::load::git::commit_before(path, &base.commit, cutoff)?;
    let then = base::documents_at(
        &head.sources,
        &head.repo,
        &base.worktree_blobs,
        path,
        &past,
        cache,
    )?;
    // Requests of files the change touched are the base's own (or new); the
    // others are the head's, identical in the base.
    let mut changed: std::collections::HashSet<&str> =
        base.repo.requests.keys().map(String::as_str).collect();
    changed.extend(
        head.repo
            .requests
            .iter()
            .filter(|(_, d)| !base.same_files.contains(&d.origin.file))
            .map(|(n, _)| n.as_str()),
    );
    let base_requests = policy::world::base_requests(&base.repo, &head.repo, &changed);
    let requests = policy::world::recent_growth(
        world,
        &base_requests,
        &then.requests,
        &then.teams,
        &then.clusters,
        cutoff.div_euclid(3600),
    );
    let platform = policy::world::platform_growth(
        world,
        &base.repo,
        &base_requests,
        &then,
        cutoff.div_euclid(3600),
    );
    Ok((requests, platform))
}

pub(super) fn evaluate(
    loaded: &Loaded,
    at: Timestamp,
    trace: bool,
    analysis: &crate::cost::Analysis<'_>,
    author: Option<&str>,
    co_authors: &[String],
) -> CheckResult {
    let none = std::collections::HashSet::new();
    policy::check(&CheckInput {
        head: &loaded.head.repo,
        base: loaded.base.as_ref().map(|b| &b.repo),
        same_files: loaded.base.as_ref().map(|b| &b.same_files).unwrap_or(&none),
        at,
        default_pack: &loaded.pack,
        trace,
        world: Some(loaded.world()),
        analysis: Some(analysis),
        recent_growth: &loaded.recent_growth,
        platform_growth: &loaded.platform_growth,
        templates: loaded.templates.as_ref(),
        effects: &loaded.effects.summary,
        author,
        co_authors,
        config_files_changed: loaded.base.as_ref().map_or(&[], |b| &b.named_files_changed),
    })
}

pub(super) fn context(
    loaded: &Loaded,
    result: &CheckResult,
    at: Timestamp,
    analysis: Option<&crate::cost::Analysis<'_>>,
) -> Context {
    Context {
        charts: analysis
            .map(|a| {
                crate::cost::chart::for_subjects(
                    a,
                    result
                        .evaluated
                        .iter()
                        .map(|e| (e.subject, e.name.as_str())),
                )
            })
            .unwrap_or_default(),
        at: at.to_string(),
        base: loaded.base.as_ref().map(|b| BaseInfo {
            rev: b.rev.clone(),
            commit: b.commit.clone(),
        }),
        policy: output::check::policy_label(&result.policy),
        effects: loaded.base.as_ref().map(|_| output::check::EffectsView {
            at: loaded.effects.instants.clone(),
            summary: loaded.effects.summary.clone(),
            files: loaded.effects.files.clone(),
        }),
    }
}

pub fn check(cli: &Cli, args: &CheckArgs, io: &mut Io<'_>) -> Outcome {
    match args.github.stray_flag() {
        Some(why) => Err(invalid(io, &why, None)),
        None => check_to(cli, args, args.base.as_deref(), args.fail_on, None, io),
    }
}

/// [`check`] against `base`, failing on `fail_on`, also writing the JSON
/// result to `json_out` (`check --github --json-out`).
pub(super) fn check_to(
    cli: &Cli,
    args: &CheckArgs,
    base: Option<&str>,
    fail_on: FailOn,
    json_out: Option<&Path>,
    io: &mut Io<'_>,
) -> Outcome {
    let at = args.at.unwrap_or(io.now);
    let loaded = load(cli, &args.path, base, at, io)?;
    let analysis = crate::cost::Analysis::new(loaded.world(), at);
    let result = evaluate(
        &loaded,
        at,
        cli.format == Format::Markdown,
        &analysis,
        args.author.as_deref(),
        &[],
    );
    let paths = Paths::new(&args.path);
    let mut diagnostics: Vec<Diagnostic> = loaded.head.diagnostics.clone();
    diagnostics.extend(result.diagnostics.iter().cloned());
    // Usage history: stale numbers, and (against a base) rewritten hours.
    let mut usage = crate::ingest::stale::check(&loaded.head.repo, at);
    if loaded.base.is_some() {
        usage.extend(crate::ingest::rewrite::check(
            &loaded.head.repo,
            &loaded.head.sources,
        ));
    }
    let usage_error = usage.iter().any(|d| d.is_error());
    diagnostics.extend(usage);
    let template_error = loaded.template_problems.iter().any(Diagnostic::is_error);
    diagnostics.extend(loaded.template_problems.iter().cloned());
    super::effects::drop_lowered_copies(&mut diagnostics);
    crate::diag::normalize(&mut diagnostics);
    let policy_broken = usage_error
        || template_error
        || result
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error);
    let gate = result.evaluated.iter().any(|e| match fail_on {
        FailOn::Denied => e.decision.outcome == Decided::Denied,
        FailOn::Approval => e.decision.outcome != Decided::Approved,
        FailOn::Never => false,
    });
    let exit = if policy_broken {
        Exit::Invalid
    } else if gate {
        Exit::Gate
    } else {
        Exit::Ok
    };
    let charted = matches!(cli.format, Format::Json | Format::Markdown);
    let ctx = context(&loaded, &result, at, charted.then_some(&analysis));
    let sources = &loaded.head.sources;
    write_diagnostics(cli, &diagnostics, sources, &paths, io)?;
    if let Some(file) = json_out {
        let out = output::check::json(&result, &ctx, &diagnostics, exit.code(), sources, &paths);
        let text = serde_json::to_string_pretty(&output::json::Envelope::new("check", &out))
            .map_err(std::io::Error::other)?
            + "\n";
        super::common::write_output(io, &args.path, file, text.as_bytes())?;
    }
    if output::github::in_actions(io.env) && cli.format == Format::Human {
        for line in output::check::annotations(&result, sources, &paths) {
            writeln!(io.stdout, "{line}")?;
        }
    }
    match cli.format {
        Format::Json => {
            let out =
                output::check::json(&result, &ctx, &diagnostics, exit.code(), sources, &paths);
            write_json(io, "check", &out)?;
        }
        Format::Sarif => write_pretty(
            io,
            &output::check::sarif(&result, &diagnostics, sources, &paths),
        )?,
        Format::Markdown => {
            let links = output::markdown::Links::from_env(io.env);
            io.stdout.write_all(
                output::markdown::comment(&result, &ctx, sources, &paths, &links).as_bytes(),
            )?;
        }
        _ => {
            // Written as it is made: a hundred thousand decisions are tens
            // of megabytes of text.
            let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut *io.stdout);
            let mut failed: Option<std::io::Error> = None;
            output::check::human_each(&result, &ctx, sources, &paths, &mut |s| {
                if failed.is_none()
                    && let Err(e) = std::io::Write::write_all(&mut buffered, s.as_bytes())
                {
                    failed = Some(e);
                }
            });
            if let Some(e) = failed {
                return Err(e.into());
            }
            std::io::Write::flush(&mut buffered)?;
        }
    }
    // Freeing ten thousand decisions one by one takes longer than the process
    // exit that follows; the memory is the operating system's to reclaim.
    std::mem::forget(result);
    std::mem::forget(loaded);
    Ok(exit)
}

pub fn explain(cli: &Cli, args: &ExplainArgs, io: &mut Io<'_>) -> Outcome {
    let at = args.at.unwrap_or(io.now);
    let path = args.path_flag.as_deref().unwrap_or(&args.path);
    let name = args.name.as_str();
    let loaded = load(cli, path, args.base.as_deref(), at, io)?;
    let analysis = crate::cost::Analysis::new(loaded.world(), at);
    let result = evaluate(&loaded, at, true, &analysis, None, &[]);
    let paths = Paths::new(path);
    let sources = &loaded.head.sources;
    // `Kind/name` picks one of documents of several kinds sharing a name.
    let (kind, name) = match name.split_once('/') {
        Some((k, n)) => (Some(k), n),
        None => (None, name),
    };
    let found: Vec<&policy::Evaluated> = result
        .evaluated
        .iter()
        .filter(|e| e.name == name)
        .filter(|e| kind.is_none_or(|k| e.subject.as_str().eq_ignore_ascii_case(k)))
        .collect();
    if found.len() > 1 {
        let kinds: Vec<String> = found
            .iter()
            .map(|e| format!("`{}/{name}`", e.subject.as_str()))
            .collect();
        return Err(invalid(
            io,
            &format!("`{name}` names {} documents judged here", found.len()),
            Some(&format!("say which: {}", kinds.join(" or "))),
        ));
    }
    let Some(e) = found.first().copied() else {
        let repo = &loaded.head.repo;
        let held = repo.documents().any(|d| {
            d.metadata().name.value.as_str() == name
                && kind.is_none_or(|k| d.kind().as_str().eq_ignore_ascii_case(k))
        });
        let why = if held && args.base.is_some() {
            "did not change since the base revision, so it is not judged".to_string()
        } else if held {
            "is not judged without a base revision: its kind is judged only when a pull request changes it (pass --base REV)".to_string()
        } else {
            let mut known: Vec<&str> = result.evaluated.iter().map(|e| e.name.as_str()).collect();
            known.extend(repo.documents().map(|d| d.metadata().name.value.as_str()));
            known.sort_unstable();
            known.dedup();
            format!(
                "is not a document of the repository; {}",
                crate::diag::suggest(name, known.iter().copied(), "documents")
            )
        };
        // One line, as typed (a name cannot start another line of the log).
        let shown = crate::output::escape::terminal_line(&args.name);
        return Err(invalid(io, &format!("`{shown}` {why}"), None));
    };
    write_diagnostics(cli, &result.diagnostics, sources, &paths, io)?;
    let ctx = context(&loaded, &result, at, None);
    match cli.format {
        Format::Json => {
            #[derive(serde::Serialize)]
            struct Explained<'a> {
                at: &'a str,
                policy: &'a str,
                #[serde(flatten)]
                decision: output::check::JsonDecision,
            }
            let body = Explained {
                at: &ctx.at,
                policy: &ctx.policy,
                decision: output::check::decision_json(e, sources, &paths, true),
            };
            write_json(io, "explain", &body)?;
        }
        _ => io
            .stdout
            .write_all(output::explain::human(e, &ctx, sources, &paths).as_bytes())?,
    }
    Ok(Exit::Ok)
}
