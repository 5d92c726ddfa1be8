//! A type check of policy conditions against the fact model, at load.
//!
//! minijinja orders values of different kinds instead of refusing to compare
//! them: `request.gpus < "10"` is true for every request, and
//! `request.team < 5` false for every one, with no error. A policy that
//! decided that way would approve or escalate everything silently. So each
//! condition is parsed and the types of its operands inferred from literals,
//! the facts' documented types and the filters' results; a comparison of a
//! number with text (or of a fact, never `none`, with `none`; booleans are
//! the numbers 0 and 1 to minijinja), and a `*` that would repeat text or a
//! list instead of multiplying numbers, are diagnostics at the rule. What cannot be inferred (a map fact's entries, `first`, a mixed
//! `if`) is not judged here; evaluation still refuses what minijinja refuses.

use super::facts::{self, SubjectKind};
use minijinja::machinery::ast::{self, BinOpKind, CompareOpKind, Expr};
use minijinja::value::ValueKind;

/// What an expression is known to evaluate to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Number,
    Text,
    Bool,
    List,
    Map,
    None,
    Unknown,
}

impl Ty {
    fn said(self) -> &'static str {
        match self {
            Ty::Number => "a number",
            Ty::Text => "text",
            Ty::Bool => "a boolean",
            Ty::List => "a list",
            Ty::Map => "a map",
            Ty::None => "`none`",
            Ty::Unknown => "a value",
        }
    }
}

/// The problems of one condition, as phrases that follow "the condition of
/// `x`"; empty when it passes (or does not parse: the compiler reports that).
pub fn check(text: &str, kind: SubjectKind) -> Vec<String> {
    let Ok(expr) = minijinja::machinery::parse_expr(text) else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    let ty = infer(&expr, kind, &mut problems);
    // A condition decides: anything but true or false is an error at
    // every evaluation (`when: request.gpus`), so it is one at load.
    if !matches!(ty, Ty::Bool | Ty::Unknown) {
        problems.push(format!(
            "gives {}, not true or false: compare it (`request.gpus > 10`) or test it (`is defined`)",
            ty.said()
        ));
    }
    problems.dedup();
    problems
}

/// minijinja's tests (3.0, with its `builtins`).
const TESTS: &[&str] = &[
    "defined",
    "undefined",
    "none",
    "safe",
    "escaped",
    "boolean",
    "odd",
    "even",
    "divisibleby",
    "number",
    "integer",
    "int",
    "float",
    "string",
    "sequence",
    "iterable",
    "mapping",
    "startingwith",
    "endingwith",
    "lower",
    "upper",
    "sameas",
    "eq",
    "equalto",
    "==",
    "ne",
    "!=",
    "lt",
    "lessthan",
    "<",
    "le",
    "<=",
    "gt",
    "greaterthan",
    ">",
    "ge",
    ">=",
    "in",
    "true",
    "false",
    "filter",
    "test",
];

/// The dotted path of a variable or attribute chain (`request.window.days`).
fn path(expr: &Expr<'_>) -> Option<String> {
    match expr {
        Expr::Var(v) => Some(v.id.to_string()),
        Expr::GetAttr(g) => path(&g.expr).map(|p| format!("{p}.{}", g.name)),
        _ => None,
    }
}

fn fact_type(path: &str, kind: SubjectKind) -> Ty {
    let model = facts::model();
    if let Some(f) = model.iter().find(|f| f.path == path && f.applies_to(kind)) {
        return match f.ty.as_str() {
            "number" | "integer" => Ty::Number,
            "string" => Ty::Text,
            "boolean" => Ty::Bool,
            "map" => Ty::Map,
            t if t.starts_with("list") => Ty::List,
            _ => Ty::Unknown,
        };
    }
    // A prefix of facts (`request.window`) is a map of them.
    let nested = model.iter().any(|f| {
        f.applies_to(kind)
            && f.path.starts_with(path)
            && f.path.as_bytes().get(path.len()) == Some(&b'.')
    });
    if nested { Ty::Map } else { Ty::Unknown }
}

fn constant(v: &minijinja::Value) -> Ty {
    match v.kind() {
        ValueKind::Number => Ty::Number,
        ValueKind::String => Ty::Text,
        ValueKind::Bool => Ty::Bool,
        ValueKind::None => Ty::None,
        ValueKind::Seq | ValueKind::Iterable => Ty::List,
        ValueKind::Map => Ty::Map,
        _ => Ty::Unknown,
    }
}

fn filter_result(name: &str, input: Ty) -> Ty {
    match name {
        "length" | "count" | "int" | "float" | "abs" | "round" | "sum" => Ty::Number,
        "string" | "upper" | "lower" | "title" | "capitalize" | "trim" | "join" | "replace"
        | "money" | "percent" | "number" | "format" | "tojson" | "indent" | "urlencode" => Ty::Text,
        "list" | "sort" | "unique" | "select" | "reject" | "selectattr" | "rejectattr" | "map"
        | "reverse" | "batch" | "slice" | "items" | "dictsort" | "split" | "lines" => {
            if name == "reverse" && input == Ty::Text {
                Ty::Text
            } else {
                Ty::List
            }
        }
        "bool" => Ty::Bool,
        _ => Ty::Unknown,
    }
}

fn infer(expr: &Expr<'_>, kind: SubjectKind, out: &mut Vec<String>) -> Ty {
    match expr {
        Expr::Var(_) | Expr::GetAttr(_) => {
            if let Expr::GetAttr(g) = expr {
                infer(&g.expr, kind, out);
            }
            path(expr).map_or(Ty::Unknown, |p| fact_type(&p, kind))
        }
        Expr::Const(c) => constant(&c.value),
        Expr::Slice(s) => {
            let t = infer(&s.expr, kind, out);
            for e in [&s.start, &s.stop, &s.step].into_iter().flatten() {
                infer(e, kind, out);
            }
            if matches!(t, Ty::Text | Ty::List) {
                t
            } else {
                Ty::Unknown
            }
        }
        Expr::UnaryOp(u) => {
            let t = infer(&u.expr, kind, out);
            match u.op {
                ast::UnaryOpKind::Not => Ty::Bool,
                ast::UnaryOpKind::Neg if t == Ty::Number => Ty::Number,
                ast::UnaryOpKind::Neg => Ty::Unknown,
            }
        }
        Expr::BinOp(b) => {
            let l = infer(&b.left, kind, out);
            let r = infer(&b.right, kind, out);
            binop(b.op, l, r, out)
        }
        Expr::Compare(c) => {
            let mut left = infer(&c.expr, kind, out);
            for op in &c.ops {
                let right = infer(&op.expr, kind, out);
                compare(op.op, left, right, out);
                left = right;
            }
            Ty::Bool
        }
        Expr::IfExpr(i) => {
            infer(&i.test_expr, kind, out);
            let a = infer(&i.true_expr, kind, out);
            let b = i
                .false_expr
                .as_ref()
                .map_or(Ty::None, |e| infer(e, kind, out));
            if a == b { a } else { Ty::Unknown }
        }
        Expr::Filter(f) => {
            let input = f.expr.as_ref().map_or(Ty::Unknown, |e| infer(e, kind, out));
            let given = args(&f.args, kind, out);
            match (f.name, given.first()) {
                // What `default` gives is the value or its fallback.
                ("default" | "d", Some(&fallback)) if fallback == input => input,
                ("default" | "d", _) => Ty::Unknown,
                (name, _) => filter_result(name, input),
            }
        }
        Expr::Test(t) => {
            if !TESTS.contains(&t.name) {
                out.push(format!(
                    "uses `{}`, which is not a test ({})",
                    t.name,
                    crate::diag::suggest(t.name, TESTS.iter().copied(), "tests")
                ));
            }
            let subject = infer(&t.expr, kind, out);
            let given = args(&t.args, kind, out);
            // `x is gt(10)` compares as `x > 10` does.
            let op = match t.name {
                "eq" | "equalto" | "==" | "sameas" => Some(CompareOpKind::Eq),
                "ne" | "!=" => Some(CompareOpKind::Ne),
                "lt" | "lessthan" | "<" => Some(CompareOpKind::Lt),
                "le" | "<=" => Some(CompareOpKind::Lte),
                "gt" | "greaterthan" | ">" => Some(CompareOpKind::Gt),
                "ge" | ">=" => Some(CompareOpKind::Gte),
                _ => None,
            };
            if let (Some(op), Some(&other)) = (op, given.first()) {
                compare(op, subject, other, out);
            }
            Ty::Bool
        }
        Expr::GetItem(g) => {
            let t = infer(&g.expr, kind, out);
            infer(&g.subscript_expr, kind, out);
            // A character of a text is text.
            if t == Ty::Text { Ty::Text } else { Ty::Unknown }
        }
        Expr::Call(c) => {
            let callee = match &c.expr {
                Expr::Var(v) => Some(v.id),
                _ => {
                    infer(&c.expr, kind, out);
                    None
                }
            };
            let _ = args(&c.args, kind, out);
            match callee {
                Some("range") => Ty::List,
                Some("dict") => Ty::Map,
                _ => Ty::Unknown,
            }
        }
        Expr::List(l) => {
            l.items.iter().for_each(|e| {
                infer(e, kind, out);
            });
            Ty::List
        }
        Expr::Tuple(t) => {
            t.items.iter().for_each(|e| {
                infer(e, kind, out);
            });
            Ty::List
        }
        Expr::Map(m) => {
            m.keys.iter().chain(&m.values).for_each(|e| {
                infer(e, kind, out);
            });
            Ty::Map
        }
    }
}

/// Checks the arguments; returns the types of the positional ones.
fn args(args: &[ast::CallArg<'_>], kind: SubjectKind, out: &mut Vec<String>) -> Vec<Ty> {
    let mut positional = Vec::new();
    for a in args {
        match a {
            ast::CallArg::Pos(e) => positional.push(infer(e, kind, out)),
            ast::CallArg::Kwarg(_, e) | ast::CallArg::PosSplat(e) | ast::CallArg::KwargSplat(e) => {
                infer(e, kind, out);
            }
        }
    }
    positional
}

fn known(t: Ty) -> bool {
    t != Ty::Unknown
}

/// Booleans compare as the numbers 0 and 1 in minijinja.
fn numeric(t: Ty) -> Ty {
    if t == Ty::Bool { Ty::Number } else { t }
}

fn binop(op: BinOpKind, l: Ty, r: Ty, out: &mut Vec<String>) -> Ty {
    use BinOpKind::*;
    match op {
        Eq | Ne | Lt | Lte | Gt | Gte | In => {
            let c = match op {
                Eq => CompareOpKind::Eq,
                Ne => CompareOpKind::Ne,
                Lt => CompareOpKind::Lt,
                Lte => CompareOpKind::Lte,
                Gt => CompareOpKind::Gt,
                Gte => CompareOpKind::Gte,
                _ => CompareOpKind::In,
            };
            compare(c, l, r, out);
            Ty::Bool
        }
        ScAnd | ScOr => {
            if l == r {
                l
            } else {
                Ty::Unknown
            }
        }
        Concat => Ty::Text,
        Mul if matches!(l, Ty::Text | Ty::List) || matches!(r, Ty::Text | Ty::List) => {
            let what = if l == Ty::Number || r == Ty::Number {
                let t = if matches!(l, Ty::Text | Ty::List) {
                    l
                } else {
                    r
                };
                format!(
                    "would repeat {} with `*` instead of multiplying numbers",
                    t.said()
                )
            } else {
                format!(
                    "multiplies {} and {} with `*`, which multiplies numbers only",
                    l.said(),
                    r.said()
                )
            };
            out.push(what);
            Ty::Unknown
        }
        Add if l == Ty::List && r == Ty::List => Ty::List,
        Add if l == Ty::Text && r == Ty::Text => Ty::Text,
        Add | Sub | Mul | Div | FloorDiv | Rem | Pow => {
            if l == Ty::Number && r == Ty::Number {
                Ty::Number
            } else {
                Ty::Unknown
            }
        }
    }
}

fn compare(op: CompareOpKind, l: Ty, r: Ty, out: &mut Vec<String>) {
    use CompareOpKind::*;
    match op {
        Lt | Lte | Gt | Gte => {
            // minijinja orders booleans as the numbers 0 and 1.
            let (l, r) = (numeric(l), numeric(r));
            let orderable = matches!((l, r), (Ty::Number, Ty::Number) | (Ty::Text, Ty::Text));
            if known(l) && known(r) && !orderable {
                out.push(format!(
                    "compares {} with {}: minijinja orders values of different kinds instead of refusing, so the result is the same for every subject",
                    l.said(),
                    r.said()
                ));
            } else if matches!(l, Ty::None | Ty::List | Ty::Map)
                || matches!(r, Ty::None | Ty::List | Ty::Map)
            {
                let t = if matches!(l, Ty::None | Ty::List | Ty::Map) {
                    l
                } else {
                    r
                };
                out.push(format!(
                    "orders {}: only numbers and text have an order",
                    t.said()
                ));
            }
        }
        Eq | Ne => {
            let verdict = if matches!(op, Eq) { "false" } else { "true" };
            let (nl, nr) = (numeric(l), numeric(r));
            if known(l) && known(r) && nl != nr && l != Ty::None && r != Ty::None {
                out.push(format!(
                    "compares {} with {}: this is {verdict} for every subject",
                    l.said(),
                    r.said()
                ));
            } else if (l == Ty::None) != (r == Ty::None) && known(l) && known(r) {
                // Facts are never `none` (text facts are "" when unset).
                out.push(format!(
                    "compares {} with `none`: facts are never none, so this is {verdict} for every subject (an unset text fact is \"\", an unset number 0)",
                    if l == Ty::None { r.said() } else { l.said() }
                ));
            }
        }
        In | NotIn => {
            if matches!(r, Ty::Number | Ty::Bool | Ty::None) {
                out.push(format!("looks for a value in {}", r.said()));
            } else if r == Ty::Text && known(l) && l != Ty::Text {
                out.push(format!("looks for {} in text", l.said()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<String> {
        check(text, SubjectKind::Request)
    }

    #[test]
    fn comparisons_of_different_kinds_are_refused() {
        // minijinja says `256 < "x"` is true: every request would match.
        let p = problems("request.gpus < \"x\"");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("compares a number with text"), "{p:?}");
        assert_eq!(problems("request.team < 5").len(), 1);
        assert_eq!(problems("request.gpus < none").len(), 1);
        // Booleans are the numbers 0 and 1 to minijinja: those compare.
        assert!(problems("request.gpus >= true").is_empty());
        assert!(problems("request.preemptible == 1").is_empty());
        assert!(problems("team.within_quota < 1").is_empty());
        // Tests with arguments, `default`, and a character of a text.
        assert_eq!(problems("request.gpus is gt(\"10\")").len(), 1);
        assert_eq!(problems("request.gpus is eq(\"8\")").len(), 1);
        assert_eq!(problems("(request.gpus | default(0)) < \"10\"").len(), 1);
        assert!(problems("request.gpus is gt(10)").is_empty());
        // Facts are never none.
        assert!(problems("request.priority_class == none")[0].contains("never none"));
        assert!(problems("request.team == 5")[0].contains("false for every subject"));
        assert!(problems("request.gpus != \"8\"")[0].contains("true for every subject"));
        // Chained, nested and negated forms are checked too.
        assert_eq!(problems("not (1 < request.gpus < \"9\")").len(), 1);
        assert_eq!(
            problems("request.gpus > 1 and (request.team | length) > \"2\"").len(),
            1
        );
    }

    #[test]
    fn conditions_that_cannot_give_true_or_false_and_unknown_tests_are_refused() {
        // Each problem reads on from "the condition of `x` ".
        assert!(problems("request.gpus")[0].starts_with("gives a number, not true or false"));
        assert!(problems("request.team")[0].contains("gives text"));
        assert!(problems("request.gpus + 1")[0].contains("gives a number"));
        let p = problems("request.gpus is evn");
        assert!(
            p[0].starts_with("uses `evn`, which is not a test") && p[0].contains("`even`"),
            "{p:?}"
        );
        for fine in [
            "request.gpus is even",
            "request.preemptible",
            "request.gpus > 1 and request.preemptible",
            "not request.team",
            "request.team is startingwith('m')",
            "request.gpus is int",
        ] {
            assert!(problems(fine).is_empty(), "{fine}: {:?}", problems(fine));
        }
    }

    #[test]
    fn repetition_is_refused_and_arithmetic_is_not() {
        assert!(problems("('x' * 100000000) | length > 0")[0].contains("would repeat text"));
        assert!(problems("([0] * 100000000) | length > 0")[0].contains("would repeat a list"));
        assert_eq!(problems("(range(10) * 1000) | length > 0").len(), 1);
        assert_eq!(problems("(request.team * 3) | length > 0").len(), 1);
        assert_eq!(
            problems("(request.team[0] * 100000000) | length > 0").len(),
            1
        );
        assert!(problems("request.gpus * 2 > 10").is_empty());
        assert!(problems("12 * change.recent_growth_monthly_cost > 1").is_empty());
    }

    #[test]
    fn the_default_pack_and_ordinary_conditions_pass() {
        for ok in [
            "request.gpus < 10 and team.within_quota",
            "request.workload_class == \"inference\" and request.gpus >= 8",
            "request.team in [\"a\", \"b\"] or request.team not in [\"c\"]",
            "\"gpu\" in request.team",
            "request.window.days > 183",
            "(request.name | length) <= 63",
            "request.priority_class == \"\" or request.priority >= 1000",
            "request.gpus is number and request.team is string",
            "(request.team | default(\"x\")) == \"a\"",
            "(request.resources | length) > 0",
            "(request.gpus if request.preemptible else 0) < 10",
        ] {
            assert!(problems(ok).is_empty(), "{ok}: {:?}", problems(ok));
        }
    }
}
