//! The YAML loader on well-formed, hostile and broken inputs.
use super::*;

fn codes(text: &str) -> Vec<&'static str> {
    parse(text, FileId(0))
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect()
}

#[test]
fn keeps_spans_of_keys_and_values() {
    let p = parse("a: 1\nb:\n  c: hello\n", FileId(0));
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let doc = &p.documents[0];
    let (k, v) = doc.get("b").unwrap();
    assert_eq!((k.start, k.end), (5, 6));
    let (_, c) = v.get("c").unwrap();
    assert_eq!(c.as_str(), Some("hello"));
    assert_eq!((c.start, c.end), (13, 18));
}

#[test]
fn yaml_1_1_booleans_and_dates_stay_strings() {
    let p = parse("y: n\nd: 2027-02-30\n", FileId(0));
    let doc = &p.documents[0];
    assert_eq!(doc.get("y").unwrap().1.as_str(), Some("n"));
    assert_eq!(doc.get("d").unwrap().1.as_str(), Some("2027-02-30"));
}

#[test]
fn rejects_duplicate_keys_with_position() {
    let p = parse("a: 1\nb: 2\na: 3\n", FileId(0));
    assert_eq!(p.diagnostics.len(), 1);
    let d = &p.diagnostics[0];
    assert_eq!(d.code, Code::YamlDuplicateKey);
    assert_eq!(d.span().unwrap().start, 10);
    // The first occurrence is shown too.
    assert_eq!(d.related.len(), 1);
    assert_eq!(d.related[0].span.start, 0);
    assert!(p.documents.is_empty());
}

#[test]
fn stops_alias_bombs_quickly() {
    let mut s = String::from("a0: &a0 [x,x,x,x,x,x,x,x,x]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 9].join(",");
        s.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let p = parse(&s, FileId(0));
    assert_eq!(
        p.diagnostics[0].code,
        Code::YamlAliasLimit,
        "{}",
        p.diagnostics[0].message
    );
}

#[test]
fn limits_nesting() {
    let deep = format!("a: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    assert_eq!(codes(&deep), vec!["yaml-too-deep"]);
    let block: String = (0..10_000)
        .map(|i| format!("{}k{i}:\n", "  ".repeat(i)))
        .collect();
    assert_eq!(codes(&block), vec!["yaml-too-deep"]);
}

#[test]
fn reports_tabs_and_syntax_errors() {
    let p = parse("a:\n\tb: 1\n", FileId(0));
    assert_eq!(p.diagnostics[0].code, Code::YamlSyntax);
    assert!(p.diagnostics[0].help.as_deref().unwrap().contains("tabs"));
    assert_eq!(codes("a: [1, 2\nb: 3\n"), vec!["yaml-syntax"]);
}

#[test]
fn refuses_integer_overflow() {
    assert_eq!(
        codes("n: 99999999999999999999999\n"),
        vec!["yaml-integer-overflow"]
    );
    assert!(codes("n: 18446744073709551615\nf: 1.5e3\n").is_empty());
}

#[test]
fn warns_on_empty_documents_and_files() {
    assert_eq!(
        codes("a: 1\n---\n# nothing\n---\nb: 2\n"),
        vec!["document-empty"]
    );
    assert_eq!(codes("# only a comment\n"), vec!["file-empty"]);
    assert_eq!(codes(""), vec!["file-empty"]);
    assert!(codes("---\na: 1\n---\nb: 2\n").is_empty());
    // Between separators: remove one. A document that is only `null`: at
    // the `null`, with nothing to remove but the file.
    let p = parse("a: 1\n---\n---\nb: 2\n", FileId(0));
    assert_eq!(
        p.diagnostics[0].help.as_deref(),
        Some("remove the extra `---` separator")
    );
    let p = parse("# a team\nnull\n", FileId(0));
    assert_eq!(p.diagnostics[0].code, Code::DocumentEmpty);
    assert_eq!(p.diagnostics[0].span().unwrap().start, 9);
    assert!(
        p.diagnostics[0]
            .help
            .as_deref()
            .unwrap()
            .contains("or remove the file"),
        "{:?}",
        p.diagnostics[0].help
    );
}

#[test]
fn resolves_scalars_by_the_core_schema() {
    let text = "a: 0x1F\nb: 0o17\nc: -12\nd: 1.5e3\ne: .inf\nf: '42'\ng: !!str 42\nh: ~\ni: 1_000\nj: 08\nk: True\n";
    let doc = &parse(text, FileId(0)).documents[0];
    let v = |k: &str| doc.get(k).unwrap().1.value.clone();
    assert_eq!(v("a"), Value::Int(31));
    assert_eq!(v("b"), Value::Int(15));
    assert_eq!(v("c"), Value::Int(-12));
    assert_eq!(v("d"), Value::Float(1500.0));
    assert_eq!(v("e"), Value::Float(f64::INFINITY));
    assert_eq!(v("f"), Value::Str("42".into()));
    assert_eq!(v("g"), Value::Str("42".into()));
    assert_eq!(v("h"), Value::Null);
    assert_eq!(v("i"), Value::Str("1_000".into()));
    assert_eq!(v("j"), Value::Int(8));
    assert_eq!(v("k"), Value::Bool(true));
}

#[test]
fn aliases_expand_and_tags_are_checked() {
    let doc = &parse("base: &b {x: 1}\ncopy: *b\n", FileId(0)).documents[0];
    assert_eq!(
        doc.get("copy").unwrap().1.get("x").unwrap().1.value,
        Value::Int(1)
    );
    assert_eq!(codes("a: !custom 1\n"), vec!["yaml-syntax"]);
    assert_eq!(codes("? [a, b]\n: 1\n"), vec!["yaml-syntax"]);
    assert_eq!(codes("a: !!int abc\n"), vec!["yaml-syntax"]);
    // A collection's tag on a single value, quoted or not.
    assert_eq!(codes("a: !!map \"abc\"\n"), vec!["yaml-syntax"]);
    assert_eq!(codes("a: !!seq abc\n"), vec!["yaml-syntax"]);
    assert_eq!(codes("a: !!binary aGVsbG8=\n"), vec!["yaml-syntax"]);
    // The core scalar tags read as their kind.
    assert!(codes("a: !!str 42\nb: !!int \"5\"\nc: !!map {x: 1}\n").is_empty());
    // Anchors do not carry over to the next document.
    assert_eq!(codes("a: &x 1\n---\nb: *x\n"), vec!["yaml-syntax"]);
}

#[test]
fn large_mappings_still_catch_duplicates() {
    let mut text: String = (0..100).map(|i| format!("k{i}: {i}\n")).collect();
    text.push_str("k42: again\n");
    let p = parse(&text, FileId(0));
    assert_eq!(p.diagnostics[0].code, Code::YamlDuplicateKey);
    assert_eq!(p.diagnostics[0].message, "duplicate mapping key `k42`");
}

#[test]
fn an_unclosed_bracket_or_quote_is_named_where_it_opens() {
    let open_at = |text: &str| {
        let p = parse(text, FileId(0));
        let d = p
            .diagnostics
            .iter()
            .find(|d| d.code == Code::YamlSyntax)
            .unwrap_or_else(|| panic!("{text:?}: {:?}", p.diagnostics))
            .clone();
        (d.message.clone(), d.related.first().map(|l| l.span.start))
    };
    let text = "a: 1\nwindow: {start: 2026-06-01, end: 2027-06-01\nb: 2\n";
    let (m, at) = open_at(text);
    assert!(
        m.starts_with("the `{` at line 2, column 9 is not closed"),
        "{m}"
    );
    assert_eq!(at, Some(13));
    let text = "list: [a, b\nc: d\n";
    let (m, at) = open_at(text);
    assert!(
        m.starts_with("the `[` at line 1, column 7 is not closed"),
        "{m}"
    );
    assert_eq!(at, Some(6));
    // An apostrophe inside a plain value opens nothing; the quote does.
    let text = "note: don't stop\nname: 'abc\nx: y\n";
    let (m, at) = open_at(text);
    assert!(
        m.starts_with("the quoted value that starts with `'` at line 2, column 7 is not closed"),
        "{m}"
    );
    assert_eq!(at, Some(23));
    // An alias to an unknown anchor inside a flow value is that, not an
    // open bracket.
    let text = "metadata: {name: x, labels: {a: *nope}}\n";
    let (m, at) = open_at(text);
    assert_eq!(m, "an alias refers to an unknown anchor");
    assert_eq!(at, None);
}

#[test]
fn a_plain_key_past_1024_characters_is_named_as_such() {
    let text = format!("spec:\n  {}: 1\n  b: 2\n", "x".repeat(1100));
    let parsed = parse(&text, FileId(0));
    let d = parsed
        .diagnostics
        .iter()
        .find(|d| d.code == Code::YamlSyntax)
        .expect("a syntax error");
    assert!(
        d.message
            .starts_with("a key on this line is longer than the 1024 characters"),
        "{}",
        d.message
    );
    // A short key with the same parser message keeps the general help.
    let parsed = parse("a: b: c\n", FileId(0));
    let d = &parsed.diagnostics[0];
    assert!(!d.message.contains("1024"), "{}", d.message);
}

#[test]
fn aliases_of_a_long_text_count_its_bytes() {
    // A megabyte named 5,000 times would be 5 GB once expanded.
    let big = "x".repeat(1 << 20);
    let aliases = vec!["*a"; 5000].join(", ");
    let text = format!("a: &a \"{big}\"\nb: [{aliases}]\n");
    assert_eq!(codes(&text), vec!["yaml-alias-limit"]);
    // A short text named many times is fine.
    let aliases = vec!["*a"; 5000].join(", ");
    assert!(codes(&format!("a: &a hello\nb: [{aliases}]\n")).is_empty());
}

#[test]
fn a_document_that_declares_another_yaml_version_is_refused() {
    // YAML 1.1 reads `010` as eight and `yes` as true; capops reads 1.2.
    let p = parse("%YAML 1.1\n---\nn: 010\n", FileId(0));
    let d = &p.diagnostics[0];
    assert_eq!(d.code, Code::YamlSyntax);
    assert!(d.message.contains("declares YAML 1.1"), "{}", d.message);
    assert_eq!(d.span().unwrap().start, 0, "at the %YAML line");
    // 1.2, declared or not, reads.
    assert!(codes("%YAML 1.2\n---\nn: 010\n").is_empty());
    assert!(codes("n: 010\n").is_empty());
}
