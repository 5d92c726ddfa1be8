//! Template filters that build text, bounded. minijinja's fuel counts
//! instructions, not bytes: `replace`, `indent` and `join` can turn a short
//! template into gigabytes in one step (`('x' * 1000) | replace('x', 'x' *
//! 1000000)`, `name | indent(200000000, true)`).
//! These replace the built-in ones with the same results, refusing any
//! result longer than the environment's limit before building it.

use minijinja::value::Value;
use minijinja::{Environment, Error, ErrorKind};

fn too_long(what: &str, n: usize, max: usize) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("`{what}` would build {n} characters; the limit is {max}"),
    )
}

/// Installs the bounded `replace`, `indent` and `join` filters in `env`: no
/// result longer than `max` bytes.
pub fn install(env: &mut Environment<'_>, max: usize) {
    env.add_filter(
        "replace",
        move |s: &str, from: &str, to: &str| -> Result<String, Error> {
            let count = if from.is_empty() {
                s.chars().count() + 1
            } else {
                s.matches(from).count()
            };
            let n = s
                .len()
                .saturating_add(count.saturating_mul(to.len()))
                .saturating_sub(count.saturating_mul(from.len()));
            if n > max {
                return Err(too_long("replace", n, max));
            }
            Ok(s.replace(from, to))
        },
    );
    env.add_filter(
        "indent",
        move |value: &str,
              width: Option<usize>,
              first: Option<bool>,
              blank: Option<bool>,
              kwargs: minijinja::value::Kwargs|
              -> Result<String, Error> {
            let width = match width {
                Some(w) => w,
                None => kwargs.get::<Option<usize>>("width")?.unwrap_or(4),
            };
            let first = match first {
                Some(v) => v,
                None => kwargs.get::<Option<bool>>("first")?.unwrap_or(false),
            };
            let blank = match blank {
                Some(v) => v,
                None => kwargs.get::<Option<bool>>("blank")?.unwrap_or(false),
            };
            kwargs.assert_all_used()?;
            let lines = value.split('\n').count();
            let n = value.len().saturating_add(width.saturating_mul(lines));
            if n > max {
                return Err(too_long("indent", n, max));
            }
            fn strip_newline(s: &str) -> &str {
                let s = s.strip_suffix('\n').unwrap_or(s);
                s.strip_suffix('\r').unwrap_or(s)
            }
            let pad = " ".repeat(width);
            let mut out = String::with_capacity(n);
            let mut rest = strip_newline(value).split('\n');
            if !first {
                out.push_str(rest.next().unwrap_or(""));
                out.push('\n');
            }
            for line in rest {
                if line.is_empty() || line == "\r" {
                    if blank {
                        out.push_str(&pad);
                    }
                } else {
                    out.push_str(&pad);
                }
                out.push_str(line);
                out.push('\n');
            }
            let len = strip_newline(&out).len();
            out.truncate(len);
            Ok(out)
        },
    );
    env.add_filter(
        "join",
        move |v: &Value, joiner: Option<&str>| -> Result<String, Error> {
            let joiner = joiner.unwrap_or("");
            let mut out = String::new();
            for (i, item) in v.try_iter()?.enumerate() {
                if i > 0 {
                    out.push_str(joiner);
                }
                match item.as_str() {
                    Some(s) => out.push_str(s),
                    None => out.push_str(&item.to_string()),
                }
                if out.len() > max {
                    return Err(too_long("join", out.len(), max));
                }
            }
            Ok(out)
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Environment<'static> {
        let mut env = Environment::new();
        install(&mut env, 1_000);
        env
    }

    #[test]
    fn replace_and_join_give_the_built_in_results_within_the_limit() {
        let env = env();
        let r = |t: &str| env.render_str(t, ()).unwrap();
        assert_eq!(r("{{ 'a-b-c' | replace('-', ', ') }}"), "a, b, c");
        assert_eq!(r("{{ ['x', 'y', 3] | join(', ') }}"), "x, y, 3");
        assert_eq!(r("{{ ['x', 'y'] | join }}"), "xy");
        assert_eq!(r("{{ [] | join(', ') or 'nobody' }}"), "nobody");
        assert_eq!(r("{{ 'a\nb\n\nc\n' | indent(2) }}"), "a\n  b\n\n  c");
        assert_eq!(r("{{ 'a\nb' | indent(2, true) }}"), "  a\n  b");
        assert_eq!(
            r("{{ 'a\n\nb' | indent(width=1, blank=true) }}"),
            "a\n \n b"
        );
    }

    #[test]
    fn a_result_past_the_limit_is_refused_before_it_is_built() {
        let env = env();
        for t in [
            "{{ ('x' * 100) | replace('x', 'x' * 100) }}",
            "{{ range(100) | map('string') | join('x' * 100) }}",
            "{{ 'a' | indent(100000000, true) }}",
        ] {
            let err = env.render_str(t, ()).unwrap_err();
            assert!(err.to_string().contains("the limit is 1000"), "{t}: {err}");
        }
    }
}
