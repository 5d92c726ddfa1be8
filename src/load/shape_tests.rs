//! Tests of the shape check: where each schema error is shown, and how.

use super::*;
use crate::load::yaml::parse;

fn shape(kind: Kind, text: &str) -> Vec<(Code, String, u32)> {
    let doc = &parse(text, FileId(0)).documents[0];
    let mut diags = Vec::new();
    check(
        kind,
        doc,
        &crate::load::json::to_json(doc),
        FileId(0),
        &mut diags,
        &mut Budget::new(),
    );
    diags
        .into_iter()
        .map(|d| (d.code, d.message.clone(), d.span().unwrap().start))
        .collect()
}

const HEAD: &str = "apiVersion: capops.dev/v1alpha1\nkind: PriorityClass\nmetadata:\n  name: p\n";

#[test]
fn reports_unknown_fields_at_the_key_with_a_suggestion() {
    let text = format!("{HEAD}spec:\n  value: 5\n  descripton: x\n");
    let d = shape(Kind::PriorityClass, &text);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].0, Code::UnknownField);
    assert_eq!(d[0].2 as usize, text.find("descripton").unwrap());
}

#[test]
fn keys_that_are_not_text_and_aliases_are_shown_where_they_are_written() {
    // A null key, and an alias used as a key: at the key itself, not at
    // the mapping or at the anchor.
    let text = format!("{HEAD}spec:\n  value: &v 5\n  ~: 1\n  *v : 2\n");
    let d = shape(Kind::PriorityClass, &text);
    let at: Vec<_> = d.iter().map(|d| (d.0, d.2 as usize)).collect();
    assert_eq!(
        at,
        [
            (Code::UnknownField, text.find("~:").unwrap()),
            (Code::UnknownField, text.find("*v").unwrap()),
        ],
        "{d:?}"
    );
}

#[test]
fn every_unknown_field_of_a_mapping_is_reported() {
    let text = format!("{HEAD}spec:\n  value: 5\n  foo: 1\n  bar: 2\n");
    let d = shape(Kind::PriorityClass, &text);
    let mut at: Vec<_> = d.iter().map(|d| (d.0, d.2 as usize)).collect();
    at.sort();
    assert_eq!(
        at,
        [
            (Code::UnknownField, text.find("foo").unwrap()),
            (Code::UnknownField, text.find("bar").unwrap()),
        ],
        "{d:?}"
    );
}

#[test]
fn reports_wrong_types_and_missing_fields() {
    let text = format!("{HEAD}spec:\n  value: high\n");
    let d = shape(Kind::PriorityClass, &text);
    assert_eq!(d[0].0, Code::WrongType);
    assert!(
        d[0].1.contains("`spec.value` must be a whole number"),
        "{}",
        d[0].1
    );
    let text = format!("{HEAD}spec:\n  description: x\n");
    let d = shape(Kind::PriorityClass, &text);
    assert_eq!(d[0].0, Code::MissingField);
    assert_eq!(d[0].2 as usize, text.find("spec:").unwrap());
}

#[test]
fn huge_and_tiny_numbers_are_shown_as_written() {
    for (v, shown) in [
        ("1e308", "the number 1e308"),
        ("1e-320", "the number 1e-320"),
    ] {
        let text = format!(
            "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: r\nspec:\n  team: t\n  cluster: c\n  pool: p\n  resources: {{nvidia.com/gpu: {v}}}\n  workloadClass: training\n"
        );
        let d = shape(Kind::CapacityRequest, &text);
        assert_eq!(d.len(), 1, "{v}: {d:?}");
        assert!(d[0].1.ends_with(shown), "{v}: {:?}", d[0].1);
    }
}

#[test]
fn a_date_in_another_form_is_a_date_problem() {
    // Quoted forms, and numbers (a date without its dashes, a bare year).
    for bad in [
        "\"tomorrow\"",
        "\"2026/06/01\"",
        "\"2026-06-01T08:00:00\"",
        "20260601",
        "2026",
    ] {
        let text = format!(
            "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: r\nspec:\n  team: t\n  cluster: c\n  pool: p\n  resources: {{nvidia.com/gpu: 1}}\n  window: {{start: {bad}, end: 2027-01-01}}\n  workloadClass: training\n"
        );
        let d = shape(Kind::CapacityRequest, &text);
        assert_eq!(d.len(), 1, "{bad}: {d:?}");
        assert_eq!(d[0].0, Code::InvalidDate, "{bad}");
    }
}

#[test]
fn a_request_asking_for_nothing_is_refused() {
    let text = "apiVersion: capops.dev/v1alpha1\nkind: CapacityRequest\nmetadata:\n  name: r\nspec:\n  team: t\n  cluster: c\n  pool: p\n  resources: {}\n  workloadClass: training\n";
    let d = shape(Kind::CapacityRequest, text);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, Code::InvalidValue);
    assert_eq!(d[0].1, "`spec.resources` must have at least 1 entry");
    assert_eq!(d[0].2 as usize, text.find("resources").unwrap());
}

/// A value of a kind spelled as `oneOf` constants is told the values
/// allowed and the nearest, never the validator's internal dump.
#[test]
fn one_of_constants_read_as_allowed_values() {
    let text = "apiVersion: capops.dev/v1alpha1\nkind: Reservation\nmetadata:\n  name: r\nspec:\n  provider: aws\n  type: aws-capacity-reservations\n  region: us-east-1\n  instanceType: p5.48xlarge\n  count: 1\n  term: {start: 2026-01-01, end: 2027-01-01}\n  covers: {cluster: c, pool: p}\n";
    let d = shape(Kind::Reservation, text);
    let bad: Vec<_> = d.iter().filter(|d| d.0 == Code::InvalidValue).collect();
    assert_eq!(bad.len(), 1, "{d:?}");
    assert!(
        bad[0].1.contains("must be one of") && bad[0].1.contains("`aws-capacity-reservation`"),
        "{}",
        bad[0].1
    );
    assert!(!bad[0].1.contains("OneOf"), "{}", bad[0].1);
    assert_eq!(
        bad[0].2 as usize,
        text.find("aws-capacity-reservations").unwrap()
    );
}

#[test]
fn a_list_item_missing_a_field_is_shown_at_the_item() {
    let text = "apiVersion: capops.dev/v1alpha1\nkind: Cluster\nmetadata:\n  name: c\nspec:\n  provider: aws\n  region: us-east-1\n  nodePools:\n    - name: a\n      gpuModel: l4\n      instanceType: g6.xlarge\n      gpusPerNode: 1\n      nodes: 1\n    - name: b\n      gpuModel: l4\n      instanceType: g6.xlarge\n      nodes: 1\n";
    let d = shape(Kind::Cluster, text);
    let missing: Vec<_> = d
        .iter()
        .filter(|d| d.0 == Code::MissingField && d.1.contains("gpusPerNode"))
        .collect();
    assert_eq!(missing.len(), 1, "{d:?}");
    assert_eq!(
        missing[0].2 as usize,
        text.find("name: b").unwrap(),
        "{d:?}"
    );
}

#[test]
fn a_currency_that_is_not_a_code_is_shown_at_its_value() {
    let text = "apiVersion: capops.dev/v1alpha1\nkind: Config\nmetadata:\n  name: c\nspec:\n  currency: usd\n";
    let d = shape(Kind::Config, text);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, Code::InvalidValue);
    assert!(d[0].1.contains("an ISO 4217 currency code"), "{d:?}");
    assert_eq!(d[0].2 as usize, text.find("usd").unwrap());
}

/// Checks every PriorityClass of a file with one budget, as loading does;
/// every one of them must be refused.
fn check_file(text: &str) -> (Vec<Diagnostic>, Budget) {
    let parsed = parse(text, FileId(0));
    let mut diags = Vec::new();
    let mut budget = Budget::new();
    for doc in &parsed.documents {
        let ok = check(
            Kind::PriorityClass,
            doc,
            &crate::load::json::to_json(doc),
            FileId(0),
            &mut diags,
            &mut budget,
        );
        assert!(!ok, "a document with problems, shown or not, is refused");
    }
    (diags, budget)
}

#[test]
fn past_the_files_budget_problems_are_counted_not_described() {
    // Two documents: the first with 1,200 unknown keys (one schema error
    // that stands for 1,200 problems), the second with a wrong type.
    let keys: String = (0..1_200).map(|i| format!("  x{i}: 1\n")).collect();
    let text = format!("{HEAD}spec:\n  value: 5\n{keys}---\n{HEAD}spec:\n  value: five\n");
    let (diags, budget) = check_file(&text);
    assert_eq!(diags.len(), DESCRIBED_PER_FILE);
    assert!(diags.iter().all(|d| d.code == Code::UnknownField));
    let mut counts = budget.finish();
    assert_eq!(counts.len(), 1, "{counts:?}");
    let last = counts.remove(0);
    assert_eq!(last.code, Code::ProblemsNotShown);
    assert!(last.is_error());
    // 200 unknown keys and the wrong type.
    assert!(
        last.message.contains(" 201 more problems"),
        "{}",
        last.message
    );
    // At the first document with a problem not shown: the first one.
    assert_eq!(last.span().unwrap().start, 0);
    // Within the budget nothing is hidden.
    assert!(Budget::new().finish().is_empty());
}

#[test]
fn a_value_of_the_wrong_type_is_one_problem_however_many_rules_it_breaks() {
    // `preemptionPolicy: 5` is of the wrong type and not one of the
    // allowed words: one problem, shown once and counted once.
    let one = format!("{HEAD}spec:\n  value: 5\n  preemptionPolicy: 5\n");
    let text: String = (0..1_200).map(|_| format!("---\n{one}")).collect();
    let (diags, budget) = check_file(&text);
    assert_eq!(diags.len(), DESCRIBED_PER_FILE);
    assert!(diags.iter().all(|d| d.code == Code::WrongType));
    let last = budget.finish().remove(0);
    assert!(
        last.message.contains(" 200 more problems"),
        "{}",
        last.message
    );
}
