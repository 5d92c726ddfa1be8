//! Tests of [`super::template_size`]: ordinary templates get small bounds,
//! every way found to build a huge value from a short template is refused
//! with the place it happens.

use super::{Limits, Problem, Size, expression, template};

const LIMITS: Limits = Limits {
    per_input: 1024,
    fixed: 256 * 1024,
};

fn refused(text: &str) -> Problem {
    match template(text, LIMITS) {
        Err(p) => p,
        Ok(s) => panic!("{text:?} was allowed with bound {s:?}"),
    }
}

fn bound(text: &str) -> Size {
    template(text, LIMITS).unwrap_or_else(|p| panic!("{text:?} was refused: {p:?}"))
}

#[test]
fn built_in_templates_read_each_value_a_few_times() {
    for (name, text) in crate::render::templates::BUILTIN {
        let b = bound(text);
        assert!(b.per_input <= 256, "{name}: {b:?}");
        assert!(b.fixed <= 200_000, "{name}: {b:?}");
    }
}

#[test]
fn ordinary_expressions_have_linear_bounds() {
    // Two values read, plus 3 bytes of text and quotes.
    let b = bound(r#"{{ "gpu-" ~ team ~ "-" ~ pool }}"#);
    assert_eq!(b.per_input, 2);
    // `json` escapes at most 6 bytes per byte; indent(2) triples a line of newlines.
    assert_eq!(bound("{{ name | json | indent(2) }}").per_input, 18);
    assert_eq!(bound("{{ name * 3 }}").per_input, 3);
    // Numbers multiplied are numbers: the largest value is one read.
    assert_eq!(bound("{{ (a | int) * (b | int) }}").per_input, 1);
    assert_eq!(bound(r#"{{ "%-10s" | format(name) }}"#).per_input, 2);
    bound("{% for q in quotas %}{% set n = q.name ~ '-x' %}{{ n }}{% endfor %}");
    bound(
        "{% for q in quotas if q.gpus > 0 %}{{ loop.index }}{{ loop.cycle('a', 'b') }}{% endfor %}",
    );
    bound("{% with a = x ~ x %}{{ a }}{% endwith %}{% if y %}{% set b = y %}{% endif %}{{ b }}");
    assert!(
        expression(
            "request.gpus * 2 > 10 and request.team ~ 'x' != 'y'",
            LIMITS
        )
        .is_ok()
    );
}

#[test]
fn doubling_through_set_is_refused_where_it_happens() {
    let text = "{% set a = 'xxxxxxxxxx' %}\n{% set b = a ~ a %}\n{% set c = b ~ b %}{% set d = c ~ c %}{% set e = d ~ d %}{% set f = e ~ e %}{% set g = f ~ f %}{% set h = g ~ g %}{% set i = h ~ h %}{% set j = i ~ i %}{% set k = j ~ j %}{% set l = k ~ k %}{% set m = l ~ l %}{% set n = m ~ m %}{% set o = n ~ n %}{% set p = o ~ o %}{% set q = p ~ p %}{{ q }}";
    let p = refused(text);
    // 12 bytes (with quotes) doubled: every value set stays alive, and
    // a to o hold 12 × (2^15 - 1) = 393,204 bytes together, the first sum
    // over 256 KiB.
    assert_eq!(p.line, 3);
    assert!(p.message.contains("393204 bytes"), "{}", p.message);
    assert!(
        p.message.contains("together with the values set before it"),
        "{}",
        p.message
    );
    assert_eq!(&text[p.start..p.end], "o");
    // Read values doubled: over the per-input limit after ten doublings.
    let mut t = String::from("{% set a0 = name %}");
    for i in 1..12 {
        t.push_str(&format!("{{% set a{i} = a{} ~ a{} %}}", i - 1, i - 1));
    }
    let p = refused(&t);
    assert!(p.message.contains("times as long"), "{}", p.message);
}

#[test]
fn a_name_set_in_a_loop_starts_afresh_on_every_pass() {
    // What the analysis rests on: minijinja runs each pass in a fresh scope,
    // so `set` in a loop cannot accumulate (with the version in Cargo.lock).
    let env = minijinja::Environment::new();
    let text =
        "{% set x = 'a' %}{% for i in range(3) %}{% set x = x ~ 'b' %}{{ x }}{% endfor %}{{ x }}";
    assert_eq!(env.render_str(text, ()).unwrap(), "abababa");
    let nested = "{% set x = 'a' %}{% for i in range(2) %}{% if true %}{% set x = x ~ x %}{% endif %}{% for j in range(2) %}{% set x = x ~ x %}{{ x }},{% endfor %}{% endfor %}";
    assert_eq!(env.render_str(nested, ()).unwrap(), "aaaa,aaaa,aaaa,aaaa,");
    // So doubling in a loop is one doubling, however many passes.
    let doubled =
        "{% set s = name %}{% for i in range(30) %}{% set s = s ~ s %}{{ s }}{% endfor %}";
    assert_eq!(bound(doubled).per_input, 2);
}

#[test]
fn false_alarms_found_by_review_are_not_raised() {
    // A date in a format string is text, not a width; a range written in the
    // template has its own length; reading a loop variable again is fine;
    // a comment may say namespace(s).
    assert!(bound("rev: {{ '%s-20261122' | format(name) | json }}").fixed < 100);
    assert!(bound("{{ range(1, 4) | join(',') | json }}").fixed < 5000);
    bound(
        "{%- for k, v in labels | dictsort %}{%- set v = v | trim %}{{ k }}: {{ v }}{% endfor %}",
    );
    bound("# in every namespace(s) the team holds\n{{ name }}");
    // Numbers written as text are text.
    refused("{{ (x | money) * 100000000 }}");
    refused("{% set a = (1 ~ 1) * 50000000 %}{{ a }}");
    // Text in a list is escaped when the list is written: nesting multiplies.
    refused(
        "{% set a = name %}{% set a = [a] ~ '' %}{% set a = [a] ~ '' %}{% set a = [a] ~ '' %}{% set a = [a] ~ '' %}{{ a }}",
    );
    let p = refused("{{ a * b }}");
    assert!(p.message.contains("(a | int) * (b | int)"), "{}", p.message);
}

#[test]
fn second_attack_round() {
    // A range with bounds not written in the template can be 100,000
    // numbers (minijinja's cap): refused. Floats are written in full.
    refused("{% set r = range(n) %}{{ r ~ '' }}");
    refused("{{ range(1000000000000000000 + 0, 1000000000000100000 + 0) ~ '' }}");
    assert!(bound("{{ (1.0e308 + 0) ~ '' }}").fixed >= 326);
    // Many values set, each within the limits, add up.
    let mut t = String::new();
    for i in 0..100 {
        t.push_str(&format!("{{% set a{i} = 'xxxxxxxxxx' * 300 %}}"));
    }
    assert!(
        refused(&t)
            .message
            .contains("together with the values set before it")
    );
    // No false alarms: a nested literal written once, a float factor,
    // indent's default width, a comment that names a forbidden tag.
    bound("{{ {'resource': {'r': {'id': {'tags': tags, 'a': a, 'b': b}}}} | tojson }}");
    assert_eq!(bound("{{ (x * 1.5) | int }}").per_input, 1);
    assert_eq!(bound("{{ description | indent }}").per_input, 5);
    assert_eq!(bound("{{ description | indent(first=true) }}").per_input, 5);
}

#[test]
fn map_applies_its_filters_growth_to_every_item() {
    assert_eq!(
        bound("{{ names | map('upper') | join(',') }}").per_input,
        8 + 8
    );
    assert_eq!(
        bound("{{ quotas | map(attribute='name') | list }}").per_input,
        16
    );
    for text in [
        "{{ ['%400000000s'] | map('format', 'x') | first }}",
        "{{ names | map('indent', 100000000) | first }}",
        "{{ names | map('replace', 'a', name) | first }}",
        "{{ names | map(f) | first }}",
        "{{ names | map(attribute='x', default='y' * 1000000) | first }}",
    ] {
        refused(text);
    }
}

#[test]
fn repetition_counts_widths_and_fills_must_be_written_in_the_template() {
    for text in [
        "{{ 'x' * 100000000 }}",
        "{{ ['x'] * 100000000 }}",
        "{{ name * request.gpus }}",
        "{{ '%999999999s' | format(1) }}",
        "{{ '{:>999999999}' | format(1) }}",
        "{{ '%*s' | format(1000000000, 'x') }}",
        "{{ fmt | format(1) }}",
        "{{ name | indent(width) }}",
        "{{ name | indent(100000000) }}",
        "{{ [1] | slice(100000000) }}",
        "{{ [1] | slice(n) }}",
        "{{ [1] | batch(n, 'x') }}",
        "{{ [1] | batch(100000000, 'x') }}",
        "{{ name | replace('', name) }}",
        "{{ x | pprint }}",
        "{{ x | tojson(indent=1000000) }}",
        "{% set t %}{{ x }}{% endset %}",
        "{% filter upper %}{{ x }}{% endfilter %}",
        "{% for x in tree recursive %}{{ loop(x.children) }}{% endfor %}",
        "{{ namespace(a=1) }}",
    ] {
        refused(text);
    }
    assert!(expression("'%999999999s' | format(1) == ''", LIMITS).is_err());
}

#[test]
fn a_misspelled_filter_is_named_with_the_one_meant() {
    let p = refused("{{ name | lenght }}");
    assert!(p.unknown, "{}", p.message);
    assert!(p.message.contains("`lenght`"), "{}", p.message);
    assert!(p.message.contains("`length`"), "{}", p.message);
    // A filter minijinja has but no bound can be given for is a size.
    assert!(!refused("{{ name | pprint }}").unknown);
}
