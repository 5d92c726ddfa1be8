//! The growth of each filter minijinja has (and the policy's number
//! filters), for [`super`]: how long its result can be against its input.

use super::{Abs, INFINITE, NUMBER, Size, Walk, add, arg_span, max, product, scale};
use minijinja::machinery::ast::{self, Expr};

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
            "length" | "count" | "int" | "float" | "round" | "abs" | "bool" | "money"
            | "percent" | "number" => return Abs::NUMBER,
            "lower" | "upper" | "title" | "capitalize" => scale(s, 3),
            "trim" | "safe" | "string" | "reverse" | "sort" | "unique" | "first" | "last"
            | "min" | "max" | "attr" | "select" | "reject" | "selectattr" | "rejectattr"
            | "map" => add(scale(s, 2), all),
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
            "indent" => match args.first().and_then(|a| a.constant) {
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
            name => {
                let why = format!("the filter `{name}`, whose output has no known bound");
                self.refuse_filter(f, &why);
                unbounded
            }
        };
        Abs::of(size)
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
        // Any run of digits may be a width or a precision.
        let widths = text
            .split(|c: char| !c.is_ascii_digit())
            .filter(|d| !d.is_empty())
            .fold(0u64, |acc, d| {
                acc.saturating_add(d.parse::<u64>().unwrap_or(INFINITE))
            });
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
