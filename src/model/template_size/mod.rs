//! How large a value a template can build, worked out before it runs.
//! minijinja's fuel counts instructions, not bytes: `~` doubles a string in
//! one instruction, so eight `{% set %}`s can build gigabytes. This walks the
//! template's syntax tree and bounds the length of every value it can build
//! by `per_input × U + fixed`, where U is the length of the largest value the
//! template reads from its context (known only at render time) and `fixed`
//! is text written in the template itself. A template whose bound is
//! unbounded (a value that grows on every pass of a loop, a repetition count
//! read from the documents, a filter whose growth is not known) or over
//! [`Limits`] is refused, with the line and column of the expression.

use minijinja::Value;
use minijinja::machinery::ast::{self, BinOpKind, CallArg, Expr, Stmt};
use std::collections::BTreeMap;

mod filters;
#[cfg(test)]
mod tests;

/// The largest bound a template may have.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// How many times the longest value it reads a value may hold.
    pub per_input: u64,
    /// Bytes of text from the template itself a value may hold.
    pub fixed: u64,
}

/// The bound of one template: every value it builds is at most
/// `per_input × U + fixed` bytes long.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    pub per_input: u64,
    pub fixed: u64,
}

impl Size {
    /// Length of `per_input × u + fixed`, saturating.
    pub fn at(self, u: u64) -> u64 {
        self.per_input.saturating_mul(u).saturating_add(self.fixed)
    }
}

/// Why a template is refused, and where (0-based byte offsets in its text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub start: usize,
    pub end: usize,
    pub line: u16,
    pub column: u16,
    pub message: String,
    /// A filter capops does not have (a misspelling, most often), not a size.
    pub unknown: bool,
}

const INFINITE: u64 = u64::MAX;
/// How much longer a string gets written inside a list (quoted, escaped).
const ESCAPED: u64 = 6;
/// A number, a boolean or none, written out (a float may take 326
/// characters: `5e-324` is written in full).
const NUMBER: Size = Size {
    per_input: 0,
    fixed: 330,
};
/// A value read from the context.
const INPUT: Size = Size {
    per_input: 1,
    fixed: 0,
};
/// The most numbers `range()` makes (minijinja 3 refuses more than 100,000).
const RANGE_ITEMS: u64 = 100_000;
/// `range()` with bounds not written in the template: its numbers written
/// out (over the limits: such a range is refused).
const RANGE: Size = Size {
    per_input: 0,
    fixed: RANGE_ITEMS * 24,
};

fn add(a: Size, b: Size) -> Size {
    Size {
        per_input: a.per_input.saturating_add(b.per_input),
        fixed: a.fixed.saturating_add(b.fixed),
    }
}

fn max(a: Size, b: Size) -> Size {
    Size {
        per_input: a.per_input.max(b.per_input),
        fixed: a.fixed.max(b.fixed),
    }
}

fn scale(a: Size, k: u64) -> Size {
    Size {
        per_input: a.per_input.saturating_mul(k),
        fixed: a.fixed.saturating_mul(k),
    }
}

/// `a × b`, when one of them does not depend on the input (otherwise the
/// product grows with the square of the input: unbounded here).
fn product(a: Size, b: Size) -> Size {
    if a.per_input > 0 && b.per_input > 0 {
        return Size {
            per_input: INFINITE,
            fixed: INFINITE,
        };
    }
    Size {
        per_input: a
            .per_input
            .saturating_mul(b.fixed)
            .saturating_add(b.per_input.saturating_mul(a.fixed)),
        fixed: a.fixed.saturating_mul(b.fixed),
    }
}

/// The value of an expression: its size, whether it is surely a number, and
/// the integer it is when written as one.
#[derive(Clone, Copy, Debug)]
struct Abs {
    size: Size,
    number: bool,
    constant: Option<i64>,
    /// A number written in the template with a fraction (`1.5`): text
    /// times it is an error, not a repetition.
    fraction: bool,
}

impl Abs {
    fn of(size: Size) -> Abs {
        Abs {
            size,
            number: false,
            constant: None,
            fraction: false,
        }
    }
    const NUMBER: Abs = Abs {
        size: NUMBER,
        number: true,
        constant: None,
        fraction: false,
    };
}

struct Walk<'a> {
    limits: Limits,
    scopes: Vec<BTreeMap<&'a str, Size>>,
    worst: Size,
    problem: Option<Problem>,
    /// How deep the walk is in nested expressions and blocks.
    depth: usize,
}

/// The deepest nesting of expressions and blocks walked (25,000 `~` in a
/// row are 25,000 levels, and overflowed the stack); people nest a few.
pub const MAX_DEPTH: usize = 200;

/// Stack for a template's tree, as deep as its longest chain (drop recurses).
const STACK_BYTES: usize = 256 << 20;

/// The bound of a whole template, or why it has none.
pub fn template(text: &str, limits: Limits) -> Result<Size, Problem> {
    let run = move || match minijinja::machinery::parse(text, "<template>", Default::default()) {
        Ok(stmt) => walk(limits, |w| w.stmt(&stmt)),
        // Syntax errors are the compiler's to report.
        Err(_) => Ok(Size::default()),
    };
    // On a thread with a deep stack; where none can be made, here.
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("template-size".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, run)
        {
            Ok(handle) => handle.join().unwrap_or_else(|_| {
                Err(Problem {
                    start: 0,
                    end: 0,
                    line: 1,
                    column: 1,
                    message: "could not be analysed".into(),
                    unknown: false,
                })
            }),
            Err(_) => run(),
        }
    })
}

/// The bound of one expression (a policy condition), or why it has none.
pub fn expression(text: &str, limits: Limits) -> Result<Size, Problem> {
    match minijinja::machinery::parse_expr(text) {
        Ok(expr) => walk(limits, |w| {
            w.expr(&expr);
        }),
        Err(_) => Ok(Size::default()),
    }
}

fn walk<'a>(limits: Limits, run: impl FnOnce(&mut Walk<'a>)) -> Result<Size, Problem> {
    let mut w = Walk {
        limits,
        scopes: vec![BTreeMap::new()],
        worst: Size::default(),
        problem: None,
        depth: 0,
    };
    run(&mut w);
    match w.problem {
        Some(p) => Err(p),
        None => Ok(w.worst),
    }
}

fn describe(s: Size, limits: Limits) -> Option<String> {
    if s.per_input == INFINITE || s.fixed == INFINITE {
        return Some("can build a value whose length has no bound".into());
    }
    if s.per_input > limits.per_input {
        return Some(format!(
            "can build a value {} times as long as the longest value it reads (the limit is {})",
            s.per_input, limits.per_input
        ));
    }
    if s.fixed > limits.fixed {
        return Some(format!(
            "can build {} bytes of text from the template alone (the limit is {})",
            s.fixed, limits.fixed
        ));
    }
    None
}

impl<'a> Walk<'a> {
    fn refuse(&mut self, span: minijinja::machinery::Span, message: String) {
        if self.problem.is_none() {
            self.problem = Some(Problem {
                start: span.start_offset as usize,
                end: span.end_offset as usize,
                line: span.start_line,
                column: span.start_col.saturating_add(1),
                message,
                unknown: false,
            });
        }
    }

    /// Records an expression's size, refusing it when over the limits.
    fn seen(&mut self, e: &Expr<'a>, a: Abs) -> Abs {
        self.worst = max(self.worst, a.size);
        if let Some(why) = describe(a.size, self.limits) {
            self.refuse(e.span(), why);
        }
        a
    }

    fn lookup(&self, name: &str) -> Option<Size> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn bind(&mut self, target: &Expr<'a>, size: Size) {
        match target {
            Expr::Var(v) => {
                let top = self.scopes.last_mut().expect("a scope");
                top.insert(v.id, size);
                // Every value set stays alive until its scope ends: together
                // they are held to the same limits as one.
                let live = self
                    .scopes
                    .iter()
                    .flat_map(|s| s.values())
                    .fold(Size::default(), |acc, s| add(acc, *s));
                if let Some(why) = describe(live, self.limits) {
                    self.refuse(
                        v.span(),
                        format!("together with the values set before it {why}"),
                    );
                }
            }
            Expr::List(l) => l.items.iter().for_each(|t| self.bind(t, size)),
            Expr::Tuple(t) => t.items.iter().for_each(|t| self.bind(t, size)),
            _ => {}
        }
    }

    fn body(&mut self, stmts: &[Stmt<'a>]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt<'a>) {
        if self.too_deep(Default::default()) {
            return;
        }
        self.depth += 1;
        self.stmt_within(s);
        self.depth -= 1;
    }

    /// Whether the walk is nested past [`MAX_DEPTH`] (refused when so).
    fn too_deep(&mut self, span: minijinja::machinery::Span) -> bool {
        let deep = self.depth >= MAX_DEPTH;
        if deep {
            self.refuse(span, format!("nests more than {MAX_DEPTH} deep"));
        }
        deep
    }

    fn stmt_within(&mut self, s: &Stmt<'a>) {
        match s {
            Stmt::Template(t) => self.body(&t.children),
            Stmt::EmitExpr(e) => {
                self.expr(&e.expr);
            }
            Stmt::EmitRaw(_) => {}
            Stmt::Set(set) => {
                let a = self.expr(&set.expr);
                self.bind(&set.target, a.size);
            }
            Stmt::SetBlock(b) => self.refuse(
                b.span(),
                "`{% set %}…{% endset %}` captures text without a limit; write `{% set name = … %}`"
                    .into(),
            ),
            Stmt::FilterBlock(b) => self.refuse(
                b.span(),
                "`{% filter %}` captures text without a limit; apply the filter to an expression"
                    .into(),
            ),
            Stmt::AutoEscape(a) => {
                self.expr(&a.enabled);
                self.body(&a.body);
            }
            Stmt::Do(d) => {
                self.call(&d.call, d.call.span());
            }
            Stmt::IfCond(c) => {
                self.expr(&c.expr);
                let before = self.scopes.clone();
                self.body(&c.true_body);
                let taken = std::mem::replace(&mut self.scopes, before);
                self.body(&c.false_body);
                for (mine, theirs) in self.scopes.iter_mut().zip(taken) {
                    for (name, size) in theirs {
                        let merged = mine.get(name).map_or(size, |s| max(*s, size));
                        mine.insert(name, merged);
                    }
                }
            }
            Stmt::WithBlock(w) => {
                self.scopes.push(BTreeMap::new());
                for (target, value) in &w.assignments {
                    let a = self.expr(value);
                    self.bind(target, a.size);
                }
                self.body(&w.body);
                self.scopes.pop();
            }
            Stmt::ForLoop(f) => self.for_loop(f),
        }
    }

    fn for_loop(&mut self, f: &ast::Spanned<ast::ForLoop<'a>>) {
        let span = f.span();
        if f.recursive {
            self.refuse(
                span,
                "recursive loops build text without a limit; loop over the items directly".into(),
            );
            return;
        }
        let items = self.expr(&f.iter).size;
        self.scopes.push(BTreeMap::new());
        self.bind(&f.target, items);
        self.scopes
            .last_mut()
            .expect("a scope")
            .insert("loop", max(items, NUMBER));
        if let Some(cond) = &f.filter_expr {
            self.expr(cond);
        }
        // minijinja runs each pass of a loop in a fresh scope: a name set in
        // the body starts from its value outside on every pass (tested in
        // `tests.rs`), so one walk of the body bounds them all.
        self.body(&f.body);
        self.scopes.pop();
        self.body(&f.else_body);
    }

    fn args(&mut self, args: &[CallArg<'a>]) -> Vec<Abs> {
        args.iter()
            .map(|a| match a {
                CallArg::Pos(e) | CallArg::Kwarg(_, e) | CallArg::PosSplat(e) => self.expr(e),
                CallArg::KwargSplat(e) => self.expr(e),
            })
            .collect()
    }

    fn expr(&mut self, e: &Expr<'a>) -> Abs {
        if self.too_deep(e.span()) {
            return Abs::of(Size {
                per_input: INFINITE,
                fixed: INFINITE,
            });
        }
        self.depth += 1;
        let a = self.expr_within(e);
        self.depth -= 1;
        a
    }

    fn expr_within(&mut self, e: &Expr<'a>) -> Abs {
        let a = match e {
            Expr::Var(v) => match self.lookup(v.id) {
                Some(size) => Abs::of(size),
                None => Abs::of(INPUT),
            },
            Expr::Const(c) => constant(&c.value),
            Expr::Slice(s) => {
                for part in [&s.start, &s.stop, &s.step].into_iter().flatten() {
                    self.expr(part);
                }
                Abs::of(self.expr(&s.expr).size)
            }
            Expr::UnaryOp(u) => {
                let inner = self.expr(&u.expr);
                match (&u.op, inner.constant) {
                    (ast::UnaryOpKind::Neg, Some(k)) => Abs {
                        constant: k.checked_neg(),
                        ..Abs::NUMBER
                    },
                    _ => Abs::NUMBER,
                }
            }
            Expr::BinOp(b) => self.binop(b),
            Expr::Compare(c) => {
                self.expr(&c.expr);
                for op in &c.ops {
                    self.expr(&op.expr);
                }
                Abs::NUMBER
            }
            Expr::IfExpr(i) => {
                self.expr(&i.test_expr);
                let t = self.expr(&i.true_expr).size;
                let f = i.false_expr.as_ref().map_or(NUMBER, |f| self.expr(f).size);
                Abs::of(max(t, f))
            }
            Expr::Filter(f) => self.filter(f),
            Expr::Test(t) => {
                self.expr(&t.expr);
                self.args(&t.args);
                Abs::NUMBER
            }
            Expr::GetAttr(g) => Abs::of(self.expr(&g.expr).size),
            Expr::GetItem(g) => {
                self.expr(&g.subscript_expr);
                Abs::of(self.expr(&g.expr).size)
            }
            Expr::Call(c) => Abs::of(self.call(c, e.span())),
            Expr::List(l) => Abs::of(self.items(&l.items)),
            Expr::Tuple(t) => Abs::of(self.items(&t.items)),
            Expr::Map(m) => {
                let keys = self.items(&m.keys);
                Abs::of(add(keys, self.items(&m.values)))
            }
        };
        self.seen(e, a)
    }

    /// A list, tuple or map written in the template: written out as text,
    /// each string in it is quoted and escaped (a `\\` becomes two, a
    /// control character four), so each item counts six times its length,
    /// and a list in a list six times again.
    fn items(&mut self, items: &[Expr<'a>]) -> Size {
        items.iter().fold(
            Size {
                per_input: 0,
                fixed: 2,
            },
            |acc, i| {
                let s = self.expr(i).size;
                // A list written in a list is written once; text is escaped.
                let escaped = match i {
                    Expr::List(_) | Expr::Tuple(_) | Expr::Map(_) => 1,
                    _ => ESCAPED,
                };
                add(
                    add(acc, scale(s, escaped)),
                    Size {
                        per_input: 0,
                        fixed: 4,
                    },
                )
            },
        )
    }

    fn binop(&mut self, b: &ast::BinOp<'a>) -> Abs {
        let l = self.expr(&b.left);
        let r = self.expr(&b.right);
        match b.op {
            // `1 ~ 1` is the text "11": only `+` of two numbers is a number.
            BinOpKind::Add if l.number && r.number => Abs::NUMBER,
            BinOpKind::Concat | BinOpKind::Add => Abs::of(add(l.size, r.size)),
            BinOpKind::ScAnd | BinOpKind::ScOr => Abs::of(max(l.size, r.size)),
            BinOpKind::Mul if (l.number && r.number) || l.fraction || r.fraction => Abs::NUMBER,
            BinOpKind::Mul => match (l.constant, r.constant) {
                (_, Some(k)) => Abs::of(max(scale(l.size, k.max(0) as u64), NUMBER)),
                (Some(k), _) => Abs::of(max(scale(r.size, k.max(0) as u64), NUMBER)),
                _ => {
                    self.refuse(
                        b.left.span(),
                        "multiplies two values read from the documents, which may repeat text that many times; write `(a | int) * (b | int)` to multiply numbers".into(),
                    );
                    Abs::of(Size {
                        per_input: INFINITE,
                        fixed: INFINITE,
                    })
                }
            },
            _ => Abs::NUMBER,
        }
    }

    fn call(&mut self, c: &ast::Call<'a>, span: minijinja::machinery::Span) -> Size {
        let args = self.args(&c.args);
        let sum = args.iter().fold(NUMBER, |acc, a| add(acc, a.size));
        match &c.expr {
            Expr::Var(v) if v.id == "range" && self.lookup("range").is_none() => {
                range_size(&args).unwrap_or(RANGE)
            }
            Expr::Var(v) if v.id == "dict" && self.lookup("dict").is_none() => scale(sum, 2),
            // loop.cycle(...) returns one of its arguments; loop.changed(...) a boolean.
            Expr::GetAttr(g) if matches!(&g.expr, Expr::Var(v) if v.id == "loop") => sum,
            _ => {
                self.refuse(
                    span,
                    "calls other than `range`, `dict` and the loop's `cycle` and `changed` are refused".into(),
                );
                sum
            }
        }
    }
}

/// `range(…)` with its bounds written in the template: its numbers, written out.
fn range_size(args: &[Abs]) -> Option<Size> {
    let k: Vec<i64> = args.iter().map(|a| a.constant).collect::<Option<_>>()?;
    let (start, stop, step) = match k[..] {
        [stop] => (0, stop, 1),
        [start, stop] => (start, stop, 1),
        [start, stop, step] if step != 0 => (start, stop, step),
        _ => return None,
    };
    let n = (i128::from(stop) - i128::from(start)) / i128::from(step);
    let n = u64::try_from(n.clamp(0, RANGE_ITEMS as i128))
        .ok()?
        .saturating_add(1);
    Some(Size {
        per_input: 0,
        fixed: n * 24,
    })
}

fn constant(v: &Value) -> Abs {
    if let Some(s) = v.as_str() {
        return Abs::of(Size {
            per_input: 0,
            fixed: s.len() as u64 + 2,
        });
    }
    let number = v.is_number()
        || v.is_true()
        || v.is_none()
        || v.kind() == minijinja::value::ValueKind::Bool;
    let text = v.to_string().len() as u64;
    Abs {
        size: Size {
            per_input: 0,
            fixed: text.max(NUMBER.fixed) * 2,
        },
        number,
        constant: i64::try_from(v.clone()).ok().filter(|_| v.is_integer()),
        fraction: v.is_number() && !v.is_integer(),
    }
}

fn arg_span(a: &CallArg<'_>) -> minijinja::machinery::Span {
    match a {
        CallArg::Pos(e) | CallArg::Kwarg(_, e) | CallArg::PosSplat(e) | CallArg::KwargSplat(e) => {
            e.span()
        }
    }
}
