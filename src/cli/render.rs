//! `capops render`: write what clusters and clouds should hold at `--at`.
//!
//! Files go under `--out` (default `<PATH>/rendered`): `<cluster>/` with one
//! Kubernetes object per file, `cloud/<provider>/<region>/` with Terraform JSON
//! (one root module per provider region), and
//! `node-labels/<cluster>.yaml` with the node-label plan. Nothing is written
//! when rendering finds an error. Each file is replaced atomically and only
//! when its bytes change; files capops rendered before and no longer renders
//! are removed from the folders it owns, so Argo CD or Flux prune them.

use super::common::{Exit, Outcome, invalid, load_valid, stop, write_diagnostics, write_json};
use super::{Cli, Io};
use crate::diag::{Code, Diagnostic, Span};
use crate::model::Timestamp;
use crate::output::{Format, Paths};
use crate::render::{self, templates};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// The repository root (the folder holding capops.yaml).
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// The moment to render: a date or an RFC 3339 time; default now.
    #[arg(long, value_parser = super::common::at_arg)]
    pub at: Option<Timestamp>,
    /// Output folder (default PATH/rendered); `-` writes one YAML stream to stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Only this cluster (no cloud files).
    #[arg(long)]
    pub cluster: Option<String>,
    /// Revision to stamp on objects instead of the one read from git.
    #[arg(long, value_parser = super::common::revision_arg)]
    pub revision: Option<String>,
}

pub fn run(cli: &Cli, a: &RenderArgs, io: &mut Io<'_>) -> Outcome {
    let at = a.at.unwrap_or(io.now);
    let mut head = load_valid(cli, &a.path, "rendering", io)?;
    if let Some(c) = a.cluster.as_deref()
        && !head.repo.clusters.contains_key(c)
    {
        let help =
            crate::diag::suggest(c, head.repo.clusters.keys().map(String::as_str), "clusters");
        return Err(invalid(
            io,
            &format!("--cluster `{c}` is not a cluster of the repository"),
            Some(&help),
        ));
    }
    let mut sources = std::mem::take(&mut head.sources);
    let mut diags = std::mem::take(&mut head.diagnostics);
    let overrides = read_templates(&a.path, &mut sources, &mut diags);
    let templates = templates::Templates::new(&overrides, &mut diags);
    let folder = head.repo.config_spec().render.output_folder.value.clone();
    let out_dir = a.out.clone().unwrap_or_else(|| a.path.join(&folder));
    let revision = match &a.revision {
        Some(r) => r.clone(),
        None => crate::load::git::revision_of(&a.path, &out_dir),
    };
    let opts = render::Options {
        at,
        revision,
        clusters: a.cluster.clone().map(|c| [c].into()),
    };
    let mut rendered = render::render(&head.repo, &templates, &opts);
    diags.append(&mut rendered.diagnostics);
    crate::diag::normalize(&mut diags);
    let paths = Paths::new(&a.path);
    let failed = diags.iter().any(Diagnostic::is_error);
    let to_stdout = a.out.as_ref().is_some_and(|o| o.as_os_str() == "-");
    if cli.format != Format::Json || failed {
        write_diagnostics(cli, &diags, &sources, &paths, io)?;
    }
    if failed {
        if cli.format == Format::Json {
            // The diagnostics as data, as `validate` gives them.
            let out = serde_json::json!({
                "written": false,
                "diagnostics": crate::output::json::diagnostics(&diags, &sources, &paths),
            });
            super::common::write_json(io, "render", &out)?;
        }
        let n = diags.iter().filter(|d| d.is_error()).count();
        writeln!(
            io.stderr,
            "error: {n} error{} while rendering {}: nothing was written",
            if n == 1 { "" } else { "s" },
            a.path.display()
        )?;
        return Ok(Exit::Invalid);
    }
    if to_stdout && cli.format == Format::Json {
        // Each file as data: its path, whether it is a Kubernetes object,
        // and the object itself (`value`) with the text render would write.
        let v = serde_json::json!({
            "at": at.to_string(),
            "revision": opts.revision,
            "out": "-",
            "files": rendered.files.iter().map(|f| serde_json::json!({
                "path": f.path,
                "kubernetes": f.kubernetes,
                "value": f.value,
                "text": f.text(),
            })).collect::<Vec<_>>(),
            "diagnostics": crate::output::json::diagnostics(&diags, &sources, &paths),
        });
        write_json(io, "render", &v)?;
        return Ok(Exit::Ok);
    }
    if to_stdout {
        io.stdout.write_all(rendered.stream().as_bytes())?;
        return Ok(Exit::Ok);
    }
    if let Err(e) = super::render_out::allowed(&a.path, &out_dir, &folder) {
        return Err(invalid(
            io,
            &e.to_string(),
            Some("write elsewhere, or to the output folder: nothing was written"),
        ));
    }
    let outcome = match super::render_out::write(&out_dir, &rendered, a.cluster.as_deref()) {
        Ok(o) => o,
        Err(e @ super::render_out::Refused::BadManifest(..)) => {
            return Err(invalid(
                io,
                &e.to_string(),
                Some(
                    "restore it (it is committed with the output: `git checkout -- <folder>/.capops-manifest.json`), or delete it and remove by hand what capops no longer renders; nothing was written",
                ),
            ));
        }
        Err(e @ super::render_out::Refused::Io(..)) => {
            return Err(stop(
                io,
                Exit::External,
                &e.to_string(),
                Some(
                    "no rendered file was replaced or removed (the manifest may already list the files to come: the next render completes the folder)",
                ),
            ));
        }
        Err(e @ super::render_out::Refused::Unfinished { .. }) => {
            return Err(stop(
                io,
                Exit::External,
                &e.to_string(),
                Some(
                    "fix the cause and render again: the manifest lists every file it wrote, so the next render prunes what it no longer renders",
                ),
            ));
        }
        Err(e @ super::render_out::Refused::Partly { .. }) => {
            return Err(stop(
                io,
                Exit::External,
                &e.to_string(),
                Some(
                    "fix the cause and render again: the manifest lists every file, so the next render completes the folder and prunes as it should",
                ),
            ));
        }
        Err(e) => return Err(invalid(io, &e.to_string(), Some("nothing was written"))),
    };
    if cli.format == Format::Json {
        let v = serde_json::json!({
            "at": at.to_string(),
            "revision": opts.revision,
            "out": out_dir.display().to_string(),
            "files": rendered.files.iter().map(|f| serde_json::json!({
                "path": f.path,
                "kubernetes": f.kubernetes,
                "status": if outcome.written.contains(&f.path) { "written" } else { "unchanged" },
            })).collect::<Vec<_>>(),
            "removed": outcome.removed,
            "diagnostics": crate::output::json::diagnostics(&diags, &sources, &paths),
        });
        write_json(io, "render", &v)?;
    } else {
        let objects = rendered.files.iter().filter(|f| f.kubernetes).count();
        writeln!(
            io.stdout,
            "rendered {objects} Kubernetes objects and {} other files into {} at {} (revision {}): {} written, {} unchanged, {} removed",
            rendered.files.len() - objects,
            out_dir.display(),
            at,
            opts.revision,
            outcome.written.len(),
            rendered.files.len() - outcome.written.len(),
            outcome.removed.len()
        )?;
        for r in &outcome.removed {
            writeln!(io.stdout, "  removed {r}")?;
        }
    }
    Ok(Exit::Ok)
}

/// Template overrides read by `load::templates`, added to the source map
/// (shown as `templates/NAME`); unreadable ones are diagnostics.
pub(super) fn overrides(
    files: Vec<crate::load::templates::TemplateFile>,
    kind: crate::diag::SourceKind,
    sources: &mut crate::diag::SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Vec<templates::Override> {
    let mut out = Vec::new();
    for f in files {
        let shown = format!("templates/{}", f.name);
        match f.text {
            Ok(text) => {
                let file = sources.add_from(shown, text.clone(), kind.clone());
                out.push(templates::Override {
                    name: f.name,
                    text,
                    file,
                });
            }
            Err(why) => {
                let file = sources.add_from(shown.clone(), String::new(), kind.clone());
                diags.push(
                    Diagnostic::new(Code::TemplateError, format!("{shown} {why}"))
                        .at(Span::file_start(file), "template")
                        .help("fix or remove the template"),
                );
            }
        }
    }
    out
}

/// The working tree's template overrides.
pub(super) fn read_templates(
    root: &Path,
    sources: &mut crate::diag::SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> Vec<templates::Override> {
    overrides(
        crate::load::templates::read_worktree(root),
        crate::diag::SourceKind::WorkTree,
        sources,
        diags,
    )
}
