//! Loops between fields: every field on a loop is `circular-formula`, the error spreads to the
//! fields that read them, everything else computes, and nothing hangs (EC, "Field values"; EF,
//! "Loops").

mod common;

use common::{open, values};
use expect_test::expect;

#[test]
fn two_fields_reading_each_other() {
    let (session, pc) = open(
        r#"
fields:
  t:a: { type: integer, formula: "b + 1" }
  t:b: { type: integer, formula: "a + 1" }
  t:c: { type: integer, formula: "a * 2" }
  t:d: { type: integer, formula: "7" }
"#,
        "",
    );
    expect![[r#"
        t:a = error circular-formula
        t:b = error circular-formula
        t:c = error circular-formula
        t:d = 7
    "#]]
    .assert_eq(&values(&session, pc));
}

#[test]
fn loop_found_from_outside_first() {
    // Asking for `c` first enters the loop from outside it.
    let (session, pc) = open(
        r#"
fields:
  t:c: { type: integer, formula: "a * 2" }
  t:a: { type: integer, formula: "b + 1" }
  t:b: { type: integer, formula: "a + 1" }
"#,
        "",
    );
    let c = session.field(pc, "t:c").unwrap();
    assert_eq!(
        c.error.as_ref().map(|e| e.code.as_str()),
        Some("circular-formula")
    );
    expect![[r#"
        t:c = error circular-formula
        t:a = error circular-formula
        t:b = error circular-formula
    "#]]
    .assert_eq(&values(&session, pc));
}

#[test]
fn a_field_reading_itself() {
    let (session, pc) = open(
        r#"
fields:
  t:a: { type: integer, formula: "a + 1" }
  t:b: { type: integer, default: 3 }
"#,
        "",
    );
    expect![[r#"
        t:a = error circular-formula
        t:b = 3
    "#]]
    .assert_eq(&values(&session, pc));
}

#[test]
fn a_loop_through_an_effect_on_a_set_of_fields() {
    // An effect on every check whose value reads a check is a loop on that check (EF, "Targets").
    let (session, pc) = open(
        r#"
fields:
  t:check.a: { type: integer, default: 1, tags: [check] }
  t:check.b: { type: integer, default: 2, tags: [check] }
  t:other: { type: integer, default: 5 }
effects:
  - target: { fields: { where: "'check' in item.tags" } }
    op: add
    value: "check.a"
"#,
        "",
    );
    expect![[r#"
        t:check.a = error circular-formula
        t:check.b = error circular-formula
        t:other = 5
    "#]]
    .assert_eq(&values(&session, pc));
}

#[test]
fn breaking_the_loop_with_an_edit_recomputes() {
    let (mut session, pc) = open(
        r#"
fields:
  t:switch: { type: boolean, input: true, default: true }
  t:a: { type: integer, formula: "switch ? b + 1 : 10" }
  t:b: { type: integer, formula: "a + 1" }
"#,
        "",
    );
    expect![[r#"
        t:switch = true
        t:a = error circular-formula
        t:b = error circular-formula
    "#]]
    .assert_eq(&values(&session, pc));
    session
        .set_value(pc, "t:switch", Some(serde_json::json!(false)))
        .unwrap();
    expect![[r#"
        t:switch = false
        t:a = 10
        t:b = 11
    "#]]
    .assert_eq(&values(&session, pc));
}

fn chain(length: usize) -> String {
    let mut rules = String::from("fields:\n");
    for i in 0..length {
        rules.push_str(&format!(
            "  t:f{i}: {{ type: integer, formula: \"f{} + 1\" }}\n",
            i + 1
        ));
    }
    rules.push_str(&format!("  t:f{length}: {{ type: integer, default: 0 }}\n"));
    rules
}

#[test]
fn a_long_chain_computes() {
    // 1000 fields each reading the next: deep, but not a loop.
    let (session, pc) = open(&chain(1000), "");
    let f0 = session.field(pc, "t:f0").unwrap();
    assert_eq!(f0.value, Some(ocf_formula::Value::Int(1000)));
}

#[test]
fn a_chain_past_the_depth_limit_is_an_error_not_a_crash() {
    let (session, pc) = open(&chain(3000), "");
    let f0 = session.field(pc, "t:f0").unwrap();
    assert_eq!(
        f0.error.as_ref().map(|e| e.code.as_str()),
        Some("safety-limit-exceeded")
    );
    // Deep fields near the end still compute.
    let f2990 = session.field(pc, "t:f2990").unwrap();
    assert_eq!(f2990.value, Some(ocf_formula::Value::Int(10)));
}
