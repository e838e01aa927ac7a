//! Untrusted packs and characters: clear errors, never a panic, a hang or unbounded growth.

mod common;

use common::{character, ruleset};
use ocf_engine::Session;
use serde_json::json;

#[test]
fn grants_that_fan_out_stop_at_the_activation_limit() {
    // Each item grants the next three times: 3^16 activations without a limit.
    let mut rules = String::from(
        "contentTypes: { t:f: {} }\nfields: { t:x: { type: integer, default: 0 } }\ncontent:\n",
    );
    for i in 0..20 {
        let next = i + 1;
        rules.push_str(&format!(
            "  t:c{i}: {{ id: t:c{i}, type: t:f, grants: [{{ item: t:c{next} }}, {{ item: t:c{next} }}, {{ item: t:c{next} }}], effects: [{{ target: t:x, op: add, value: 1 }}] }}\n"
        ));
    }
    rules.push_str("  t:c20: { id: t:c20, type: t:f }\n");
    let mut session = Session::new(ruleset(&rules));
    let pc = session.open(&character("features: [{ id: a, item: t:c0 }]"), &[]);
    let sheet = session.sheet(pc).unwrap();
    assert_eq!(
        sheet.activations.list.len(),
        ocf_engine::activation::MAX_ACTIVATIONS
    );
    let json = sheet.to_json();
    assert_eq!(json["errors"][0]["code"], json!("safety-limit-exceeded"));
}

/// Copies each under the activation limit, together over it: the walk stops at the limit where a
/// walk of every copy in one pass stops (debug builds check the two against each other).
#[test]
fn copies_under_the_limit_alone_stop_at_it_together() {
    // Each copy's item grants 3^0 + ... + 3^7 = 3 280 activations; four copies reach 13 120.
    let mut rules = String::from(
        "contentTypes: { t:f: {} }\nfields: { t:x: { type: integer, default: 0 } }\ncontent:\n",
    );
    for i in 0..7 {
        let next = i + 1;
        rules.push_str(&format!(
            "  t:c{i}: {{ id: t:c{i}, type: t:f, grants: [{{ item: t:c{next} }}, {{ item: t:c{next} }}, {{ item: t:c{next} }}] }}\n"
        ));
    }
    rules.push_str("  t:c7: { id: t:c7, type: t:f }\n");
    let mut session = Session::new(ruleset(&rules));
    let pc = session.open(
        &character(
            "features: [{ id: a, item: t:c0 }, { id: b, item: t:c0 }, { id: c, item: t:c0 }, { id: d, item: t:c0 }]",
        ),
        &[],
    );
    let sheet = session.sheet(pc).unwrap();
    let copies = sheet
        .activations
        .list
        .iter()
        .filter(|a| a.via == ocf_engine::activation::Via::Copy)
        .count();
    assert_eq!(
        (sheet.activations.list.len(), copies),
        (ocf_engine::activation::MAX_ACTIVATIONS, 4)
    );
    assert_eq!(
        sheet.to_json()["errors"][0]["code"],
        json!("safety-limit-exceeded")
    );
}

#[test]
fn broken_formulas_and_references_are_field_errors() {
    let rules = r#"
fields:
  t:a: { type: integer, formula: "1 +" }
  t:b: { type: integer, formula: "nope.field + 1" }
  t:c: { type: integer, formula: "'text'" }
  t:d: { type: integer, formula: "9223372036854775807 + 1" }
  t:e: { type: integer, formula: "a + 1" }
  t:f: { type: integer, default: 1 }
contentTypes: { t:f: {} }
content:
  t:x:
    id: t:x
    type: t:f
    effects:
      - { target: t:nothing, op: add, value: 1 }
      - { target: t:f, op: add, value: 1, when: "1" }
"#;
    let mut session = Session::new(ruleset(rules));
    let pc = session.open(
        &character("{ values: { t:nothing: 3, t:f: 'x' }, features: [{ id: x, item: t:x }, { id: y, item: t:missing }], applied: [{ id: z, source: t:missing }] }"),
        &[],
    );
    let sheet = session.sheet_json(pc).unwrap();
    let errors: Vec<String> = ["t:a", "t:b", "t:c", "t:d", "t:e", "t:f"]
        .iter()
        .map(|f| format!("{f}: {}", sheet["values"][f]["error"]))
        .collect();
    expect_test::expect![[r#"
        t:a: "formula-syntax"
        t:b: "unknown-name"
        t:c: "type-mismatch"
        t:d: "arithmetic-overflow"
        t:e: "formula-syntax"
        t:f: "type-mismatch""#]]
    .assert_eq(&errors.join("\n"));
}
