//! The templates objects are rendered from: built in, or overridden by the
//! capacity repository's `templates/` folder.
//!
//! Each template turns one object's context (computed by the renderer) into
//! YAML (Kubernetes objects) or JSON (Terraform). Templates run in minijinja
//! with strict undefined behaviour, a fuel limit and a recursion limit, and
//! with no loader: they cannot read files, and `include` or `import` reach
//! only the other templates registered here. The filter `json` writes any
//! value as JSON, which is also valid YAML, so strings never need hand
//! quoting.

use crate::diag::{Code, Diagnostic, FileId, Span};
use crate::model::template_size;
use minijinja::{Environment, UndefinedBehavior};
use std::collections::BTreeMap;

/// Fuel for one template run: ample for any object, finite for a loop gone wrong.
pub const FUEL: u64 = 200_000;
/// The most one template run may write.
pub const MAX_OUTPUT_BYTES: usize = 1024 * 1024;
/// The largest value an override may build, per [`crate::model::template_size`]:
/// a thousand times the longest value it reads, plus 256 KiB of its own text.
const SIZE_LIMITS: template_size::Limits = template_size::Limits {
    per_input: 1024,
    fixed: 256 * 1024,
};
/// The most memory one value built by an override may take, given the
/// context it renders.
pub const MAX_VALUE_BYTES: u64 = 64 * 1024 * 1024;
/// Nesting of calls and filters a template may use.
pub const RECURSION_LIMIT: usize = 16;
/// The name the built-in version of a template is also registered under.
const BUILTIN_PREFIX: &str = "builtin:";
/// Constructs an override may not use: macros and calls (recursion that can
/// double a string on every level) and namespaces (state that grows across
/// loop iterations). What a template needs is expressions, loops and filters.
const FORBIDDEN: &[(&str, &str)] = &[
    ("macro", "macros"),
    ("call", "call blocks"),
    ("include", "includes"),
    ("import", "imports"),
    ("from", "imports"),
    ("extends", "template inheritance"),
];
/// Largest template file read from a repository.
pub use crate::load::templates::MAX_TEMPLATE_BYTES;

/// The built-in templates, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "kubernetes/resourcequota.yaml.j2",
        include_str!("templates/kubernetes/resourcequota.yaml.j2"),
    ),
    (
        "kubernetes/priorityclass.yaml.j2",
        include_str!("templates/kubernetes/priorityclass.yaml.j2"),
    ),
    (
        "kubernetes/resourceflavor.yaml.j2",
        include_str!("templates/kubernetes/resourceflavor.yaml.j2"),
    ),
    (
        "kubernetes/clusterqueue.yaml.j2",
        include_str!("templates/kubernetes/clusterqueue.yaml.j2"),
    ),
    (
        "kubernetes/localqueue.yaml.j2",
        include_str!("templates/kubernetes/localqueue.yaml.j2"),
    ),
    (
        "kubernetes/workloadpriorityclass.yaml.j2",
        include_str!("templates/kubernetes/workloadpriorityclass.yaml.j2"),
    ),
    (
        "kubernetes/cohort.yaml.j2",
        include_str!("templates/kubernetes/cohort.yaml.j2"),
    ),
    (
        "kubernetes/configmap.yaml.j2",
        include_str!("templates/kubernetes/configmap.yaml.j2"),
    ),
    (
        "terraform/aws-capacity-reservation.tf.json.j2",
        include_str!("templates/terraform/aws-capacity-reservation.tf.json.j2"),
    ),
    (
        "terraform/aws-capacity-block.tf.json.j2",
        include_str!("templates/terraform/aws-capacity-block.tf.json.j2"),
    ),
    (
        "terraform/gcp-reservation.tf.json.j2",
        include_str!("templates/terraform/gcp-reservation.tf.json.j2"),
    ),
    (
        "terraform/azure-capacity-reservation.tf.json.j2",
        include_str!("templates/terraform/azure-capacity-reservation.tf.json.j2"),
    ),
];

/// A template read from the repository, replacing the built-in one of the same name.
#[derive(Clone, Debug)]
pub struct Override {
    /// Name relative to `templates/`, e.g. `kubernetes/resourcequota.yaml.j2`.
    pub name: String,
    pub text: String,
    pub file: FileId,
}

/// The compiled set of templates.
pub struct Templates {
    env: std::sync::Arc<Environment<'static>>,
    /// Where each overridden template came from.
    origin: BTreeMap<String, FileId>,
    /// How large a value each override can build.
    bounds: BTreeMap<String, template_size::Size>,
    /// Each override's text, to show where an error is.
    texts: BTreeMap<String, std::sync::Arc<str>>,
    /// Time each override has taken so far, against [`OVERRIDE_SECONDS`].
    spent: std::sync::Mutex<BTreeMap<String, std::time::Duration>>,
    budget: std::time::Duration,
}

/// Time the renders of all overrides may take together (an object takes
/// milliseconds). Fuel counts steps, and a step can sort 256 KiB: an
/// override runs on its own thread, and one that runs out of time is an
/// error at once, for every object it has left.
pub const OVERRIDE_SECONDS: u64 = 20;

impl Templates {
    /// The built-in templates with the repository's overrides. An override
    /// whose name is not a built-in template, or that does not compile, is a
    /// diagnostic.
    pub fn new(overrides: &[Override], diags: &mut Vec<Diagnostic>) -> Templates {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_fuel(Some(FUEL));
        env.set_recursion_limit(RECURSION_LIMIT);
        env.add_filter("json", json_filter);
        // No text longer than one object may be (MAX_OUTPUT_BYTES).
        crate::model::bounded::install(&mut env, MAX_OUTPUT_BYTES);
        env.remove_global("namespace");
        let mut origin = BTreeMap::new();
        let mut bounds = BTreeMap::new();
        let mut texts = BTreeMap::new();
        for (name, text) in BUILTIN {
            env.add_template(name, text)
                .expect("the built-in templates compile (tested)");
            env.add_template_owned(format!("{BUILTIN_PREFIX}{name}"), *text)
                .expect("the built-in templates compile (tested)");
        }
        for o in overrides {
            let span = Span::file_start(o.file);
            if !BUILTIN.iter().any(|(n, _)| *n == o.name) {
                diags.push(
                    Diagnostic::new(
                        Code::TemplateError,
                        format!("templates/{} does not override a built-in template", o.name),
                    )
                    .at(span, "unknown template")
                    .help(crate::diag::suggest(
                        &o.name,
                        BUILTIN.iter().map(|(n, _)| *n),
                        "templates",
                    ))
                    .severity(crate::diag::Severity::Warning),
                );
                continue;
            }
            if let Some(why) = forbidden(&o.text) {
                diags.push(
                    Diagnostic::new(
                        Code::TemplateError,
                        format!("templates/{} uses {why}, which overrides may not", o.name),
                    )
                    .at(span, "template")
                    .help("write the object with expressions, `for` loops and filters; macros, calls, namespaces and includes are refused so a template's memory and time stay bounded"),
                );
                continue;
            }
            let bound = match template_size::template(&o.text, SIZE_LIMITS) {
                Ok(bound) => bound,
                Err(p) => {
                    diags.push(size_diagnostic(&o.name, o.file, &p));
                    continue;
                }
            };
            match env.add_template_owned(o.name.clone(), o.text.clone()) {
                Ok(()) => {
                    origin.insert(o.name.clone(), o.file);
                    bounds.insert(o.name.clone(), bound);
                    texts.insert(o.name.clone(), o.text.as_str().into());
                }
                Err(e) => diags.push(template_diagnostic(&o.name, Some((o.file, &o.text)), &e)),
            }
        }
        Templates {
            env: std::sync::Arc::new(env),
            origin,
            bounds,
            texts,
            spent: std::sync::Mutex::new(BTreeMap::new()),
            budget: std::time::Duration::from_secs(OVERRIDE_SECONDS),
        }
    }

    /// Renders a template with a context.
    pub fn render<S: serde::Serialize>(&self, name: &str, ctx: &S) -> Result<String, Diagnostic> {
        let origin = self.origin.get(name).copied();
        let source = origin.zip(self.texts.get(name).map(|t| &**t));
        let tmpl = self
            .env
            .get_template(name)
            .map_err(|e| template_diagnostic(name, source, &e))?;
        if let Some(bound) = self.bounds.get(name) {
            // The longest value the template can read is at most the
            // context written out (twice: minijinja escapes more than JSON).
            let u = serde_json::to_string(ctx).map_or(u64::MAX, |t| 2 * t.len() as u64);
            let most = bound.at(u);
            if most > MAX_VALUE_BYTES {
                let mut d = Diagnostic::new(
                    Code::TemplateError,
                    format!(
                        "template {name} could build a value of {most} bytes from this object ({} times its context of {u} bytes); the limit is {MAX_VALUE_BYTES}",
                        bound.per_input
                    ),
                )
                .help("build fewer copies of the values the template reads");
                if let Some(f) = origin {
                    d = d.at(Span::file_start(f), "template");
                }
                return Err(d);
            }
        }
        let (rendered, out) = if self.bounds.contains_key(name) {
            self.run_override(name, ctx, origin)?
        } else {
            let mut out = Capped::default();
            let r = tmpl
                .render_captured_to(minijinja::value::Serde(ctx), &mut out)
                .map(|_| ());
            (r, out)
        };
        if out.over {
            let mut d = Diagnostic::new(
                Code::TemplateError,
                format!("template {name} wrote more than {MAX_OUTPUT_BYTES} bytes, the most one object may be"),
            )
            .help("a template writes one object; check its loops");
            if let Some(f) = origin {
                d = d.at(Span::file_start(f), "template");
            }
            return Err(d);
        }
        rendered.map_err(|e| template_diagnostic(name, source, &e))?;
        let text = String::from_utf8(out.bytes).map_err(|_| {
            Diagnostic::new(
                Code::TemplateError,
                format!("template {name} wrote text that is not UTF-8"),
            )
        })?;
        Ok(text)
    }

    /// Runs an override on its own thread, within what is left of its time.
    fn run_override<S: serde::Serialize>(
        &self,
        name: &str,
        ctx: &S,
        origin: Option<FileId>,
    ) -> Result<(Result<(), minijinja::Error>, Capped), Diagnostic> {
        // One budget for all overrides together: twelve overrides do not
        // get twelve times the time.
        let spent = self
            .spent
            .lock()
            .map(|m| m.values().sum::<std::time::Duration>())
            .unwrap_or_default();
        let left = self.budget.saturating_sub(spent);
        let out_of_time = || {
            let mut d = Diagnostic::new(
                Code::TemplateError,
                format!(
                    "template {name} ran out of time: overrides may take {} s together, for all their renders",
                    self.budget.as_secs_f64()
                ),
            )
            .help("an override writes objects in milliseconds; check for loops that sort, join or replace long text on every pass");
            if let Some(f) = origin {
                d = d.at(Span::file_start(f), "template");
            }
            d
        };
        if left.is_zero() {
            return Err(out_of_time());
        }
        let value: minijinja::Value = minijinja::value::Serde(ctx).into();
        let env = std::sync::Arc::clone(&self.env);
        let owned = name.to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        let started = std::time::Instant::now();
        let spawned = std::thread::Builder::new()
            .name("capops-template".into())
            .spawn(move || {
                let mut out = Capped::default();
                let r = env
                    .get_template(&owned)
                    .and_then(|t| t.render_captured_to(value, &mut out).map(|_| ()));
                let _ = tx.send((r, out));
            });
        if let Err(e) = spawned {
            return Err(Diagnostic::new(
                Code::TemplateError,
                format!("cannot start a thread to render template {name}: {e}"),
            ));
        }
        // On time out the thread is left to run out its fuel; the process
        // ends without waiting for it.
        let got = rx.recv_timeout(left);
        if let Ok(mut m) = self.spent.lock() {
            *m.entry(name.to_string()).or_default() += started.elapsed();
        }
        got.map_err(|_| out_of_time())
    }

    /// Limits the time overrides may take (for tests).
    pub fn with_budget(mut self, budget: std::time::Duration) -> Templates {
        self.budget = budget;
        self
    }

    /// Renders the built-in version of a template (to hold an override to it).
    pub fn render_builtin<S: serde::Serialize>(
        &self,
        name: &str,
        ctx: &S,
    ) -> Result<String, Diagnostic> {
        self.render(&format!("{BUILTIN_PREFIX}{name}"), ctx)
    }

    /// The file an overridden template came from.
    pub fn origin(&self, name: &str) -> Option<FileId> {
        self.origin.get(name).copied()
    }
}

/// What a template writes, refused past [`MAX_OUTPUT_BYTES`] as it is written.
#[derive(Default)]
struct Capped {
    bytes: Vec<u8>,
    over: bool,
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len().saturating_add(buf.len()) > MAX_OUTPUT_BYTES {
            self.over = true;
            return Err(std::io::Error::other("over the output limit"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An override refused for the size of what it can build, at the expression.
fn size_diagnostic(name: &str, file: FileId, p: &template_size::Problem) -> Diagnostic {
    Diagnostic::new(
        Code::TemplateError,
        format!(
            "templates/{name}, line {} column {}: the expression {}",
            p.line, p.column, p.message
        ),
    )
    .at(Span::new(file, p.start, p.end), "too large a value")
    .help("minijinja's fuel counts steps, not bytes, so overrides are bounded before they run: build each value from what the object holds, at most a few copies of it, with widths and counts written in the template")
}

/// The first construct an override may not use, in words.
fn forbidden(text: &str) -> Option<&'static str> {
    // Comments may say anything.
    let mut plain = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("{#") {
        plain.push_str(&rest[..i]);
        rest = rest[i..].find("#}").map_or("", |j| &rest[i + j + 2..]);
    }
    plain.push_str(rest);
    // Block tags: `{%`, an optional whitespace control, the keyword.
    let mut rest = plain.as_str();
    while let Some(i) = rest.find("{%") {
        let tag = rest[i + 2..]
            .trim_start_matches(['-', '+', '~'])
            .trim_start();
        for (keyword, what) in FORBIDDEN {
            if tag.starts_with(keyword)
                && !tag[keyword.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
            {
                return Some(what);
            }
        }
        rest = &rest[i + 2..];
    }
    // `namespace()` (state that grows across loop passes) is a call, refused
    // by the size analysis with its place; a comment may say the word.
    None
}

/// `{{ value | json }}`: the value as compact JSON, and valid YAML too:
/// the characters JSON may hold raw but YAML may not (DEL, the C1 controls
/// but NEL, U+FFFE and U+FFFF) are written as `\uXXXX` escapes, which both
/// read back as the same character.
fn json_filter(v: minijinja::Value) -> Result<String, minijinja::Error> {
    if v.is_undefined() {
        return Err(minijinja::Error::new(
            minijinja::ErrorKind::UndefinedError,
            "`json` of an undefined value",
        ));
    }
    let text = serde_json::to_string(&v).map_err(|e| {
        minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("cannot write as JSON: {e}"),
        )
    })?;
    Ok(yaml_printable(&text))
}

/// JSON text with every character outside YAML's printable set escaped
/// (outside strings JSON holds only ASCII punctuation, digits and letters).
fn yaml_printable(json: &str) -> String {
    let printable = |c: char| {
        // NEL and the line and paragraph separators are printable, but YAML
        // 1.1 readers take them for line breaks: escaped too.
        matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{7e}')
            || matches!(c, '\u{a0}'..='\u{2027}' | '\u{202a}'..='\u{d7ff}')
            || matches!(c, '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
    };
    if json.chars().all(printable) {
        return json.to_string();
    }
    let mut out = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if printable(c) {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{:04x}", c as u32));
        }
    }
    out
}

/// A template's error at the line it is on, quoting that line.
fn template_diagnostic(
    name: &str,
    file: Option<(FileId, &str)>,
    e: &minijinja::Error,
) -> Diagnostic {
    let text = file.map(|(_, t)| t).unwrap_or("");
    // The line (minijinja gives ranges only in debug mode), without its break.
    let range = (|| {
        // Only a line of this template (overrides cannot include others).
        if e.name().is_some_and(|n| n != name) {
            return None;
        }
        let line = e.line()?.checked_sub(1)?;
        let start = if line == 0 {
            0
        } else {
            text.match_indices('\n').nth(line - 1)?.0 + 1
        };
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        Some(start..end)
    })();
    let written = range
        .clone()
        .and_then(|r| text.get(r))
        .map(str::trim)
        .filter(|w| !w.is_empty() && w.len() <= 120)
        .map(|w| format!(" (in `{w}`)"))
        .unwrap_or_default();
    let mut d = Diagnostic::new(
        Code::TemplateError,
        format!(
            "template {name}: {}{}{written}",
            e.kind(),
            e.detail().map(|d| format!(": {d}")).unwrap_or_default()
        ),
    )
    .help("fix the template in templates/, or delete it to use the built-in one");
    if let Some((f, _)) = file {
        d = match range {
            Some(r) => d.at(Span::new(f, r.start, r.end), e.kind().to_string()),
            None => d.at(Span::file_start(f), "template"),
        };
    }
    d
}

#[cfg(test)]
#[path = "templates_tests.rs"]
mod tests;
