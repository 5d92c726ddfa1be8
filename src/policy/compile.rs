//! Compiling an approval policy: conditions and messages checked once, at load.
//!
//! Every `when` is a minijinja expression and every `message` a minijinja
//! template. They are compiled when the policy loads; their variables are
//! checked against the fact model of the rule's subject, so a misspelled fact
//! is a diagnostic at the rule, not a condition that is silently false. The
//! environment evaluates with strict undefined values, a fuel limit and a
//! recursion limit: a bad rule is an error, never a hang.

use super::facts::{self, SubjectKind};
use crate::diag::{Code, Diagnostic, Span, suggest};
use crate::model::*;
use minijinja::{Environment, Expression, UndefinedBehavior};

/// Instructions one condition or message may run.
pub const FUEL: u64 = 50_000;
/// Deepest nesting of calls and filters.
pub const RECURSION_LIMIT: usize = 64;
/// Longest condition or message. Expressions have no loops, so with minijinja's
/// cap of 100,000 items per range this bounds the work of any condition.
pub const MAX_TEXT_CHARS: usize = 4096;

fn too_long(text: &Spanned<String>, what: &str, owner: &str, diags: &mut Vec<Diagnostic>) -> bool {
    let n = text.value.chars().count();
    if n <= MAX_TEXT_CHARS {
        return false;
    }
    diags.push(
        Diagnostic::new(
            Code::PolicySyntax,
            format!(
                "the {what} of `{owner}` is {n} characters long; the limit is {MAX_TEXT_CHARS}"
            ),
        )
        .at(text.span, "too long")
        .help("split the logic across rules, or simplify it"),
    );
    true
}

/// The environment conditions run in; `money` shows amounts in `currency`
/// (the judging Config's), whole units where it has no minor units.
pub fn environment(currency: &str) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_fuel(Some(FUEL));
    env.set_recursion_limit(RECURSION_LIMIT);
    let currency = currency.to_string();
    env.add_filter("money", move |v: f64| money_filter(v, &currency));
    env.add_filter("percent", percent_filter);
    env.add_filter("number", number_filter);
    crate::model::bounded::install(&mut env, MAX_MESSAGE_BYTES);
    env
}

/// The longest text a condition or message may build (a message is a few
/// sentences; this is a hundred pages).
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024;

/// `{{ 1610700.4 | money }}` → `1,610,700`; amounts under 100 keep cents,
/// except in a currency without minor units (JPY). The currency code itself
/// is left out: messages write it where they want it.
fn money_filter(v: f64, currency: &str) -> String {
    let text = crate::model::money::format_f64(v, currency);
    text.strip_suffix(currency)
        .unwrap_or(&text)
        .trim_end()
        .to_string()
}

/// `{{ 16.0 | number }}` → `16`, `{{ 1.4999 | number }}` → `1.5`: at most
/// two decimals, trailing zeros dropped.
fn number_filter(v: f64) -> String {
    let text = format!("{v:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.to_string()
    }
}

/// `{{ 0.3999 | percent }}` → `40%`.
fn percent_filter(v: f64) -> String {
    crate::model::money::percent(v)
}

/// The name a rule's message template is registered under.
pub fn message_name(policy: &str, rule: &str) -> String {
    format!("message:{policy}:{rule}")
}

/// The environment with every rule's message compiled in, so that messages
/// are parsed once and not at each request. Messages that do not compile are
/// left out (and reported by [`compile`]).
pub fn environment_with_messages(
    policies: &[&Document<PolicySpec>],
    currency: &str,
) -> Environment<'static> {
    let mut env = environment(currency);
    for p in policies {
        for r in &p.spec.rules {
            if r.message.value.chars().count() <= MAX_TEXT_CHARS {
                let _ = env.add_template_owned(
                    message_name(p.name(), &r.name.value.0),
                    r.message.value.clone(),
                );
            }
        }
    }
    env
}

/// A compiled condition.
pub struct Condition<'env> {
    pub text: String,
    pub span: Span,
    pub expr: Expression<'env, 'static>,
    /// The fact paths it reads, sorted.
    pub reads: Vec<String>,
}

pub struct CompiledTier<'env> {
    pub name: String,
    pub span: Span,
    pub description: Option<String>,
    pub when: Condition<'env>,
    /// (role, count, span of the role)
    pub approvals: Vec<(String, u32, Span)>,
    pub requires: Vec<RequiredField>,
    /// The longest request window the tier approves, in days (None: no limit).
    pub max_window_days: Option<u32>,
    /// The longest reservation term the tier approves, in days (None: no limit).
    pub max_term_days: Option<u32>,
}

pub struct CompiledRule<'env> {
    pub name: String,
    pub span: Span,
    pub effect: Effect,
    pub subject: Subject,
    pub when: Condition<'env>,
    pub message: String,
    /// The registered template of the message, when the environment has it.
    pub message_template: Option<String>,
    pub message_span: Span,
    pub role: Option<String>,
    /// For `escalate`: the index of the tier to reach at least.
    pub tier: Option<usize>,
}

/// A policy ready to evaluate.
pub struct Compiled<'env> {
    /// Names of the ApprovalPolicy documents it came from.
    pub names: Vec<String>,
    pub tiers: Vec<CompiledTier<'env>>,
    pub rules: Vec<CompiledRule<'env>>,
    /// What each step of an evaluation is, for a policy that runs past its
    /// time ([`super::running`]): each tier's condition, then each rule's
    /// condition and message.
    pub labels: std::sync::Arc<[String]>,
}

impl Compiled<'_> {
    fn label(&mut self) {
        let tiers = self
            .tiers
            .iter()
            .map(|t| format!("the condition of tier `{}`", t.name));
        let rules = self.rules.iter().flat_map(|r| {
            [
                format!("the condition of rule `{}`", r.name),
                format!("the message of rule `{}`", r.name),
            ]
        });
        self.labels = tiers.chain(rules).collect();
    }
}

/// Compiles the policy documents of a repository. Problems are pushed as
/// diagnostics; the parts that compiled are returned.
pub fn compile<'env>(
    env: &'env Environment<'static>,
    policies: &[&Document<PolicySpec>],
    diags: &mut Vec<Diagnostic>,
) -> Compiled<'env> {
    let mut out = Compiled {
        names: policies.iter().map(|p| p.name().to_string()).collect(),
        tiers: Vec::new(),
        rules: Vec::new(),
        labels: std::sync::Arc::new([]),
    };
    let with_tiers: Vec<&&Document<PolicySpec>> = policies
        .iter()
        .filter(|p| !p.spec.tiers.is_empty())
        .collect();
    if with_tiers.len() > 1 {
        for p in &with_tiers[1..] {
            diags.push(
                Diagnostic::new(
                    Code::PolicyTiersConflict,
                    format!(
                        "ApprovalPolicy `{}` defines tiers, and so does `{}`",
                        p.name(),
                        with_tiers[0].name()
                    ),
                )
                .at(p.spec.tiers[0].name.span, "second set of tiers")
                .related(with_tiers[0].spec.tiers[0].name.span, "first set of tiers")
                .help("keep the tiers in one ApprovalPolicy; other policies may add rules"),
            );
        }
    }
    if let Some(p) = with_tiers.first() {
        for tier in &p.spec.tiers {
            let Some(when) = condition(
                env,
                &tier.when,
                SubjectKind::Request,
                &tier.name.value.0,
                diags,
            ) else {
                continue;
            };
            out.tiers.push(CompiledTier {
                name: tier.name.value.0.clone(),
                span: tier.name.span,
                description: tier.description.clone(),
                when,
                approvals: tier
                    .approvals
                    .iter()
                    .map(|a| (a.role.value.clone(), a.count.0, a.role.span))
                    .collect(),
                requires: tier.requires.iter().map(|r| r.value).collect(),
                max_window_days: tier.max_window_days.as_ref().map(|d| d.value.0),
                max_term_days: tier.max_term_days.as_ref().map(|d| d.value.0),
            });
        }
    } else if let Some(p) = policies.first() {
        diags.push(
            Diagnostic::new(
                Code::PolicyNoTiers,
                "the repository's approval policy defines no tiers",
            )
            .at(p.origin.kind_span, "no tiers")
            .help("add `tiers:` to one ApprovalPolicy (see policies/default.yaml for the default ones)"),
        );
    }
    for p in policies {
        for rule in &p.spec.rules {
            let subject = rule
                .applies_to
                .as_ref()
                .map(|s| s.value)
                .unwrap_or(Subject::CapacityRequest);
            let kind = SubjectKind::of(subject);
            let Some(when) = condition(env, &rule.when, kind, &rule.name.value.0, diags) else {
                continue;
            };
            if !template_ok(env, &rule.message, kind, &rule.name.value.0, diags) {
                continue;
            }
            let tier = match &rule.tier {
                None => None,
                Some(t) => match out.tiers.iter().position(|x| x.name == t.value.0) {
                    Some(i) => Some(i),
                    None => {
                        diags.push(
                            Diagnostic::new(
                                Code::PolicyUnknownTier,
                                format!("rule `{}` escalates to tier `{}`, which the policy does not define", rule.name.value, t.value),
                            )
                            .at(t.span, "unknown tier")
                            .help(suggest(&t.value.0, out.tiers.iter().map(|x| x.name.as_str()), "tiers")),
                        );
                        continue;
                    }
                },
            };
            let template = message_name(p.name(), &rule.name.value.0);
            out.rules.push(CompiledRule {
                message_template: env.get_template(&template).is_ok().then_some(template),
                name: rule.name.value.0.clone(),
                span: rule.name.span,
                effect: rule.effect.value,
                subject,
                when,
                message: rule.message.value.clone(),
                message_span: rule.message.span,
                role: rule.role.as_ref().map(|r| r.value.clone()),
                tier,
            });
        }
    }
    out.label();
    out
}

fn condition<'env>(
    env: &'env Environment<'static>,
    text: &Spanned<String>,
    kind: SubjectKind,
    owner: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Condition<'env>> {
    if too_long(text, "condition", owner, diags) {
        return None;
    }
    let expr = match env.compile_expression_owned(text.value.clone()) {
        Ok(e) => e,
        Err(e) => {
            diags.push(
                Diagnostic::new(
                    Code::PolicySyntax,
                    format!("the condition of `{owner}` is not a valid expression: {}", error_text(&e)),
                )
                .at(text.span, "invalid condition")
                .help("conditions are minijinja expressions, e.g. `request.gpus < 10 and team.within_quota`"),
            );
            return None;
        }
    };
    let reads = not_globals(env, expr.undeclared_variables(true));
    if !unknown_facts(&reads, kind, owner, text.span, diags) {
        return None;
    }
    let problems = super::typecheck::check(&text.value, kind);
    for p in &problems {
        diags.push(
            Diagnostic::new(
                Code::PolicyTypeError,
                format!("the condition of `{owner}` {p}"),
            )
            .at(text.span, "kinds that do not go together")
            .help("compare numbers with numbers and text with text (the facts' types are in docs/policy.md); multiply numbers only"),
        );
    }
    if !problems.is_empty() || !size_ok(&text.value, text.span, "condition", owner, diags, true) {
        return None;
    }
    Some(Condition {
        text: text.value.clone(),
        span: text.span,
        expr,
        reads,
    })
}

fn template_ok(
    env: &Environment<'static>,
    text: &Spanned<String>,
    kind: SubjectKind,
    owner: &str,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    if too_long(text, "message", owner, diags) {
        return false;
    }
    if !size_ok(&text.value, text.span, "message", owner, diags, false) {
        return false;
    }
    match env.template_from_str(&text.value) {
        Ok(t) => {
            let reads = not_globals(env, t.undeclared_variables(true));
            unknown_facts(&reads, kind, owner, text.span, diags)
        }
        Err(e) => {
            diags.push(
                Diagnostic::new(
                    Code::PolicySyntax,
                    format!(
                        "the message of `{owner}` is not a valid template: {}",
                        error_text(&e)
                    ),
                )
                .at(text.span, "invalid template")
                .help("messages are minijinja templates, e.g. `{{ team.name }} is over quota`"),
            );
            false
        }
    }
}

/// How large a value a condition or message can build, per
/// [`crate::model::template_size`]: fuel counts steps, not bytes.
const SIZE_LIMITS: crate::model::template_size::Limits = crate::model::template_size::Limits {
    // Facts hold free text up to a file's size (a justification): a message
    // reads each a few times.
    per_input: 32,
    fixed: MAX_MESSAGE_BYTES as u64,
};

fn size_ok(
    text: &str,
    span: Span,
    what: &str,
    owner: &str,
    diags: &mut Vec<Diagnostic>,
    expression: bool,
) -> bool {
    use crate::model::template_size;
    let bound = if expression {
        template_size::expression(text, SIZE_LIMITS)
    } else {
        template_size::template(text, SIZE_LIMITS)
    };
    let Err(p) = bound else {
        return true;
    };
    diags.push(
        Diagnostic::new(
            Code::PolicySyntax,
            format!(
                "the {what} of `{owner}`, at its line {} column {}: the expression {}",
                p.line, p.column, p.message
            ),
        )
        .at(span, if p.unknown { "unknown filter" } else { "too large a value" })
        .help(if p.unknown {
            "use one of minijinja's filters or capops' `money`, `number` and `percent` (docs/policy.md)"
        } else {
            "build text from the facts with at most a few copies of each, with widths and counts written in the policy"
        }),
    );
    false
}

/// The variables read, less the environment's global functions (`range`, `dict`, ...), sorted.
fn not_globals(env: &Environment<'static>, vars: std::collections::HashSet<String>) -> Vec<String> {
    let globals: Vec<&str> = env.globals().map(|(name, _)| name).collect();
    let mut reads: Vec<String> = vars
        .into_iter()
        .filter(|v| !globals.contains(&v.split('.').next().unwrap_or("")))
        .collect();
    reads.sort();
    reads
}

/// Reports fact paths the subject does not have; returns whether all are known.
fn unknown_facts(
    reads: &[String],
    kind: SubjectKind,
    owner: &str,
    span: Span,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    let mut ok = true;
    for path in reads {
        if !facts::known(path, kind) {
            ok = false;
            let known = facts::paths(kind);
            let what = kind.described();
            diags.push(
                Diagnostic::new(
                    Code::PolicyUnknownFact,
                    format!("`{owner}` reads `{path}`, which is not a fact of {what}"),
                )
                .at(span, format!("unknown fact `{path}`"))
                .help(format!(
                    "{}; the facts are listed in docs/policy.md",
                    suggest(path, known.iter().copied(), "facts")
                )),
            );
        }
    }
    ok
}

/// A minijinja error in one line.
pub fn error_text(e: &minijinja::Error) -> String {
    let mut text = e.kind().to_string();
    if let Some(detail) = e.detail() {
        text = format!("{text}: {detail}");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(currency: &str, amount: f64) -> String {
        environment(currency)
            .render_str("{{ x | money }}", minijinja::context! { x => amount })
            .unwrap()
    }

    #[test]
    fn money_follows_the_configs_currency() {
        assert_eq!(render("USD", 1_610_700.4), "1,610,700");
        assert_eq!(render("USD", 12.345), "12.35");
        assert_eq!(render("USD", 99.999), "100");
        // A currency without minor units never shows cents.
        assert_eq!(render("JPY", 12.345), "12");
        assert_eq!(render("JPY", 1234.5), "1,235");
    }
}
