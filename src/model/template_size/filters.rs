//! The growth of each filter minijinja has (and the policy's number
//! filters), for [`super`]: how long its result can be against its input.

use super::{Abs, INFINITE, NUMBER, Size, Walk, add, arg_span, max, product, scale};
use minijinja::machinery::ast::{self, Expr};

/// The filters a template or policy may use: minijinja's that have a
/// bound, and capops' own.
const KNOWN: &[&str] = &[
    "abs",
    "attr",
    "batch",
    "bool",
    "capitalize",
    "chain",
    "count",
    "d",
    "default",
    "dictsort",
    "e",
    "escape",
    "first",
    "float",
    "format",
    "groupby",
    "indent",
    "int",
    "items",
    "join",
    "json",
    "last",
    "length",
    "lines",
    "list",
    "lower",
    "map",
    "max",
    "min",
    "money",
    "number",
    "percent",
    "reject",
    "rejectattr",
    "replace",
    "reverse",
    "round",
    "safe",
    "select",
    "selectattr",
    "slice",
    "sort",
    "split",
    "string",
    "sum",
    "title",
    "trim",
    "unique",
    "upper",
    "zip",
];

impl<'a> Walk<'a> {
    pub(super) fn filter(&mut self, f: &ast::Filter<'a>) -> Abs {
        let x = f.expr.as_ref().map_or(Abs::NUMBER, |e| self.expr(e));
        let args = self.args(&f.args);
        let arg = |i: usize| args.get(i).map(|a| a.size).unwrap_or_default();
        let all = args.iter().fold(Size::default(), |acc, a| add(acc, a.size));
        let s = x.size;
        let one = Size {
            per_input: 0,
            fixed: 1,
        };
        let unbounded = Size {
            per_input: INFINITE,
            fixed: INFINITE,
        };
        let size = match f.name {
            "length" | "count" | "int" | "float" | "round" | "abs" | "bool" => return Abs::NUMBER,
            // Numbers written as text ("1,234", "40%"): text, not numbers.
            "money" | "percent" | "number" => NUMBER,
            "lower" | "upper" | "title" | "capitalize" => scale(s, 3),
            // One item of the value: no longer than the value written out.
            "first" | "last" | "min" | "max" | "attr" => s,
            "trim" | "safe" | "string" | "reverse" | "sort" | "unique" | "select" | "reject"
            | "selectattr" | "rejectattr" => add(scale(s, 2), all),
            "map" => self.map(f, s),
            "list" | "items" | "dictsort" | "groupby" | "lines" | "split" | "chain" | "zip" => {
                scale(add(s, all), 8)
            }
            "sum" => add(add(s, all), NUMBER),
            "escape" | "e" | "json" => scale(s, 6),
            "tojson" if f.args.is_empty() => scale(s, 6),
            "urlencode" => scale(s, 4),
            "default" | "d" => max(s, arg(0)),
            // Every item is at least one character: at most `s` separators.
            "join" => add(s, product(s, arg(0))),
            // At most one copy of `to` per character and one more.
            "replace" => add(s, product(add(s, one), arg(1))),
            "indent" => match indent_width(f, &args) {
                Some(w) => {
                    let w = w.max(0) as u64;
                    add(
                        scale(s, w.saturating_add(1)),
                        Size {
                            per_input: 0,
                            fixed: w,
                        },
                    )
                }
                None => {
                    self.refuse_filter(f, "`indent` by a width not written in the template");
                    unbounded
                }
            },
            "format" => self.format(f, all),
            "batch" | "slice" => {
                let n = args.first().and_then(|a| a.constant);
                let fill = args.get(1).map(|a| {
                    add(
                        a.size,
                        Size {
                            per_input: 0,
                            fixed: 4,
                        },
                    )
                });
                match (f.name, n, fill) {
                    ("batch", _, None) => scale(s, 4),
                    (_, Some(n), fill) => add(
                        scale(s, 4),
                        scale(
                            fill.unwrap_or(Size {
                                per_input: 0,
                                fixed: 4,
                            }),
                            n.max(0) as u64,
                        ),
                    ),
                    _ => {
                        self.refuse_filter(f, "a count not written in the template");
                        unbounded
                    }
                }
            }
            "pprint" | "tojson" => {
                let why = format!("the filter `{}`, whose output has no known bound", f.name);
                self.refuse_filter(f, &why);
                unbounded
            }
            name => {
                // Most often a misspelling: named as such, with the filter
                // meant, not as a size.
                let why = format!(
                    "the filter `{name}`, which capops does not have ({})",
                    crate::diag::suggest(name, KNOWN.iter().copied(), "filters")
                );
                let first = self.problem.is_none();
                self.refuse_filter(f, &why);
                if let Some(p) = self.problem.as_mut().filter(|_| first) {
                    p.unknown = true;
                }
                unbounded
            }
        };
        Abs::of(size)
    }

    /// `map(attribute=…)` picks from each item; `map("name", …)` runs a
    /// filter on each item, so that filter's growth applies to all of them:
    /// only filters whose growth does not depend on their arguments are let
    /// through (`map("format", …)` would pad every item).
    fn map(&mut self, f: &ast::Filter<'a>, s: Size) -> Size {
        let mut size = scale(s, 2);
        for a in &f.args {
            match a {
                ast::CallArg::Kwarg("attribute", _) => {}
                ast::CallArg::Kwarg("default", e) => {
                    let d = self.expr(e).size;
                    size = add(size, product(s, d));
                }
                ast::CallArg::Pos(Expr::Const(c)) if std::ptr::eq(a, &f.args[0]) => {
                    let factor = match c.value.as_str() {
                        Some("lower" | "upper" | "title" | "capitalize" | "urlencode") => 4,
                        Some(
                            "trim" | "string" | "safe" | "first" | "last" | "reverse" | "sort"
                            | "unique" | "min" | "max",
                        ) => 2,
                        Some("escape" | "e" | "json" | "tojson") => 6,
                        Some("list" | "items" | "dictsort" | "lines") => 8,
                        Some(
                            "int" | "float" | "round" | "abs" | "bool" | "length" | "count"
                            | "money" | "percent" | "number",
                        ) => NUMBER.fixed,
                        _ => 0,
                    };
                    if factor == 0 || f.args.len() > 1 {
                        let what = format!(
                            "`map` with the filter {}, whose growth on each item is not bounded here",
                            c.value
                        );
                        self.refuse_filter(f, &what);
                        return Size {
                            per_input: INFINITE,
                            fixed: INFINITE,
                        };
                    }
                    size = scale(s, factor);
                }
                _ => {
                    self.refuse_filter(
                        f,
                        "`map` with arguments other than a filter's name or `attribute=`",
                    );
                    return Size {
                        per_input: INFINITE,
                        fixed: INFINITE,
                    };
                }
            }
        }
        size
    }

    fn refuse_filter(&mut self, f: &ast::Filter<'a>, what: &str) {
        let span = f.expr.as_ref().map_or_else(
            || f.args.first().map(arg_span).unwrap_or_default(),
            |e| e.span(),
        );
        self.refuse(span, format!("uses {what}"));
    }

    /// `"…" | format(…)`: the format string's widths bound what it pads.
    fn format(&mut self, f: &ast::Filter<'a>, args: Size) -> Size {
        let text = match &f.expr {
            Some(Expr::Const(c)) => c.value.as_str().map(str::to_string),
            _ => None,
        };
        let Some(text) = text.filter(|t| !t.contains('*')) else {
            self.refuse_filter(
                f,
                "`format` with a format string not written in the template",
            );
            return Size {
                per_input: INFINITE,
                fixed: INFINITE,
            };
        };
        let widths = spec_widths(&text);
        let places = text.matches(['%', '{']).count() as u64;
        add(
            Size {
                per_input: 0,
                fixed: (text.len() as u64).saturating_add(widths),
            },
            scale(args, places.saturating_add(1)),
        )
    }
}

/// The widths and precisions a format string asks for, summed: the digits
/// of each `%…` conversion (`%-12.3f`) and of each `{…}` field (`{:>12}`).
fn spec_widths(text: &str) -> u64 {
    let chars: Vec<char> = text.chars().collect();
    let (mut total, mut i) = (0u64, 0);
    while i < chars.len() {
        let end = match chars[i] {
            '%' => {
                let mut j = i + 1;
                while j < chars.len() && "-+ #0123456789.".contains(chars[j]) {
                    j += 1;
                }
                j
            }
            '{' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '}' {
                    j += 1;
                }
                j
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let spec: String = chars[i + 1..end].iter().collect();
        total = spec
            .split(|c: char| !c.is_ascii_digit())
            .filter(|d| !d.is_empty())
            .fold(total, |acc, d| {
                acc.saturating_add(d.parse::<u64>().unwrap_or(INFINITE))
            });
        i = end.max(i + 1);
    }
    total
}

/// The width `indent` is given: its first argument or `width=`, 4 when
/// neither is given (minijinja's default); `None` when not a number
/// written in the template.
fn indent_width(f: &ast::Filter<'_>, args: &[Abs]) -> Option<i64> {
    let mut width = Some(4);
    for (i, (a, v)) in f.args.iter().zip(args).enumerate() {
        match a {
            ast::CallArg::Pos(_) if i == 0 => width = v.constant,
            ast::CallArg::Kwarg("width", _) => width = v.constant,
            ast::CallArg::Pos(_) | ast::CallArg::Kwarg(..) => {}
            _ => return None,
        }
    }
    width
}
