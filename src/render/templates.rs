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
    env: Environment<'static>,
    /// Where each overridden template came from.
    origin: BTreeMap<String, FileId>,
    /// How large a value each override can build.
    bounds: BTreeMap<String, template_size::Size>,
}

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
                }
                Err(e) => diags.push(template_diagnostic(&o.name, Some(o.file), &e)),
            }
        }
        Templates {
            env,
            origin,
            bounds,
        }
    }

    /// Renders a template with a context.
    pub fn render<S: serde::Serialize>(&self, name: &str, ctx: &S) -> Result<String, Diagnostic> {
        let origin = self.origin.get(name).copied();
        let tmpl = self
            .env
            .get_template(name)
            .map_err(|e| template_diagnostic(name, origin, &e))?;
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
        let mut out = Capped::default();
        let rendered = tmpl.render_captured_to(minijinja::value::Serde(ctx), &mut out);
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
        rendered.map_err(|e| template_diagnostic(name, origin, &e))?;
        let text = String::from_utf8(out.bytes).map_err(|_| {
            Diagnostic::new(
                Code::TemplateError,
                format!("template {name} wrote text that is not UTF-8"),
            )
        })?;
        Ok(text)
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
    // Block tags: `{%`, an optional whitespace control, the keyword.
    let mut rest = text;
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

/// `{{ value | json }}`: the value as compact JSON (valid YAML too).
fn json_filter(v: minijinja::Value) -> Result<String, minijinja::Error> {
    if v.is_undefined() {
        return Err(minijinja::Error::new(
            minijinja::ErrorKind::UndefinedError,
            "`json` of an undefined value",
        ));
    }
    serde_json::to_string(&v).map_err(|e| {
        minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("cannot write as JSON: {e}"),
        )
    })
}

fn template_diagnostic(name: &str, file: Option<FileId>, e: &minijinja::Error) -> Diagnostic {
    let mut d = Diagnostic::new(
        Code::TemplateError,
        format!(
            "template {name}: {}{}",
            e.kind(),
            e.detail().map(|d| format!(": {d}")).unwrap_or_default()
        ),
    )
    .help("fix the template in templates/, or delete it to use the built-in one");
    if let Some(f) = file {
        d = d.at(
            Span::file_start(f),
            format!("line {}", e.line().unwrap_or(1)),
        );
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn built_in_templates_compile_and_quote_values() {
        let mut diags = Vec::new();
        let t = Templates::new(&[], &mut diags);
        assert!(diags.is_empty());
        let out = t
            .render(
                "kubernetes/localqueue.yaml.j2",
                &json!({"name": "gpu", "namespace": "yes", "cluster_queue": "a: b"}),
            )
            .unwrap();
        assert!(out.contains("namespace: \"yes\""), "{out}");
        assert!(out.contains("clusterQueue: \"a: b\""), "{out}");
    }

    #[test]
    fn overrides_replace_built_ins_and_runaway_templates_stop() {
        let mut diags = Vec::new();
        let looping = Override {
            name: "kubernetes/cohort.yaml.j2".into(),
            text:
                "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}"
                    .into(),
            file: FileId(3),
        };
        let unknown = Override {
            name: "kubernetes/cohorts.yaml.j2".into(),
            text: "x".into(),
            file: FileId(4),
        };
        let t = Templates::new(&[looping, unknown], &mut diags);
        assert_eq!(diags.len(), 1);
        assert!(
            diags[0].message.contains("does not override"),
            "{}",
            diags[0].message
        );
        let err = t
            .render("kubernetes/cohort.yaml.j2", &json!({"name": "c"}))
            .unwrap_err();
        assert_eq!(err.code, Code::TemplateError);
        assert!(err.message.contains("fuel"), "{}", err.message);
        assert_eq!(err.span().map(|s| s.file), Some(FileId(3)));
    }

    #[test]
    fn templates_cannot_read_files_or_use_undefined_values() {
        let mut diags = Vec::new();
        let include = Override {
            name: "kubernetes/cohort.yaml.j2".into(),
            text: "{% include '/etc/passwd' %}".into(),
            file: FileId(1),
        };
        // `include`, `import` and `extends` do not exist here: a template
        // sees its context and nothing else.
        let _ = Templates::new(&[include], &mut diags);
        assert_eq!(diags.len(), 1);
        assert!(
            diags[0].message.contains("uses includes"),
            "{}",
            diags[0].message
        );
        // Macros and namespaces (unbounded growth) are refused too.
        for text in [
            "{%- macro d(s) %}{{ d(s ~ s) }}{% endmacro %}",
            "{% set ns = namespace(s='x') %}",
        ] {
            let mut diags = Vec::new();
            let o = Override {
                name: "kubernetes/cohort.yaml.j2".into(),
                text: text.into(),
                file: FileId(1),
            };
            let _ = Templates::new(&[o], &mut diags);
            assert_eq!(diags.len(), 1, "{text}");
            assert_eq!(diags[0].code, Code::TemplateError);
        }
        let t = Templates::new(&[], &mut diags);
        let err = t
            .render("kubernetes/cohort.yaml.j2", &json!({}))
            .unwrap_err();
        assert!(err.message.contains("undefined"), "{}", err.message);
    }

    fn one(text: &str) -> (Templates, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let o = Override {
            name: "kubernetes/cohort.yaml.j2".into(),
            text: text.into(),
            file: FileId(7),
        };
        (Templates::new(&[o], &mut diags), diags)
    }

    #[test]
    fn overrides_that_can_build_huge_values_are_refused_before_they_run() {
        // Eight `set`s of ten copies: 10^9 bytes in about 80 steps of fuel.
        let mut text = String::from("name: {% set a = 'xxxxxxxxxx' %}");
        for (prev, next) in ["a", "b", "c", "d", "e", "f", "g", "h"]
            .windows(2)
            .map(|w| (w[0], w[1]))
        {
            text.push_str(&format!("{{% set {next} = {} %}}", [prev; 10].join(" ~ ")));
        }
        text.push_str("{{ h | length }}");
        let (_, diags) = one(&text);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, Code::TemplateError);
        assert!(
            diags[0].message.contains("line 1 column"),
            "{}",
            diags[0].message
        );
        let span = diags[0].span().expect("a place");
        assert_eq!(span.file, FileId(7));
        assert!(text[span.start as usize..span.end as usize].starts_with("e ~ e"));
    }

    #[test]
    fn an_override_reading_its_context_many_times_is_held_to_the_context_it_gets() {
        // 1000 copies of the name: fine for a short name, refused for a long one.
        let (t, diags) = one("name: {{ (name * 1000) | length }}");
        assert!(diags.is_empty(), "{diags:?}");
        let out = t
            .render("kubernetes/cohort.yaml.j2", &json!({"name": "c"}))
            .unwrap();
        assert_eq!(out.trim(), "name: 1000");
        let long = "x".repeat(100_000);
        let err = t
            .render("kubernetes/cohort.yaml.j2", &json!({ "name": long }))
            .unwrap_err();
        assert!(
            err.message.contains("the limit is 67108864"),
            "{}",
            err.message
        );
        // Output past the limit stops as it is written.
        let (t, diags) = one("{% for i in range(10000) %}{{ name }}{% endfor %}");
        assert!(diags.is_empty(), "{diags:?}");
        let err = t
            .render(
                "kubernetes/cohort.yaml.j2",
                &json!({ "name": "y".repeat(200) }),
            )
            .unwrap_err();
        assert!(
            err.message.contains("more than 1048576 bytes"),
            "{}",
            err.message
        );
    }
}
