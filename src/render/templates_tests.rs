//! Tests of [`super`]: built-in templates, overrides and their limits
//! (size before they run, output as it is written, time on their own thread).

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
        text: "{% for i in range(1000) %}{% for j in range(1000) %}x{% endfor %}{% endfor %}"
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

#[test]
fn an_override_that_runs_out_of_time_is_an_error_for_every_object_left() {
    // Thirty sorts of 40,000 characters: well within fuel and size, and
    // seconds of work in a debug build; the budget here is 20 ms.
    let (t, diags) = one(
        "{% set s = 'ab' * 20000 %}{% for i in range(30) %}{% if s | sort %}{% endif %}{% endfor %}{{ name }}",
    );
    assert!(diags.is_empty(), "{diags:?}");
    let t = t.with_budget(std::time::Duration::from_millis(20));
    for _ in 0..2 {
        let err = t
            .render("kubernetes/cohort.yaml.j2", &json!({"name": "c"}))
            .unwrap_err();
        assert!(
            err.message
                .contains("ran out of time: overrides may take 0.02 s together"),
            "{}",
            err.message
        );
    }
    // An ordinary override renders as before, on its own thread.
    let (t, _) = one("name: {{ name }}");
    let out = t
        .render("kubernetes/cohort.yaml.j2", &json!({"name": "c"}))
        .unwrap();
    assert_eq!(out.trim(), "name: c");
}

#[test]
fn a_comment_may_name_what_overrides_may_not_use() {
    let (_, diags) =
        one("{#- Overrides may not use {% include %} or namespace(), so: -#}\nname: {{ name }}");
    assert!(diags.is_empty(), "{diags:?}");
    let (_, diags) = one("{% include 'x' %}");
    assert_eq!(diags.len(), 1);
}
