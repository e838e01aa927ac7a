//! Incrementality, observed through salsa's `WillExecute` events: after an edit, only the queries
//! that read what changed run again.

mod common;

use common::{character, executed, ruleset};
use expect_test::expect;
use ocf_engine::Session;
use serde_json::json;

const RULES: &str = r#"
fields:
  t:str.score: { type: integer, input: true, default: 10 }
  t:str.mod: { type: integer, formula: "floor((str.score - 10) / 2)" }
  t:dex.score: { type: integer, input: true, default: 10 }
  t:dex.mod: { type: integer, formula: "floor((dex.score - 10) / 2)" }
  t:athletics: { type: integer, formula: "str.mod + 2" }
  t:acrobatics: { type: integer, formula: "dex.mod" }
  t:carry: { type: integer, formula: "str.score * 15" }
  t:ac.base: { type: integer, formula: "10 + dex.mod" }
  t:ac: { type: integer, formula: "ac.base" }
  t:notes: { type: string, input: true }
contentTypes:
  t:armor: {}
content:
  t:shield:
    id: t:shield
    type: t:armor
    effects: [{ target: t:ac, op: add, value: 2, when: self.equipped }]
"#;

const PC: &str = r#"
values: { t:str.score: 14, t:dex.score: 12 }
inventory: [{ id: shield, item: t:shield }]
"#;

fn session() -> (Session, ocf_engine::CharacterId) {
    let mut session = Session::with_execution_log(ruleset(RULES));
    let pc = session.open(&character(PC), &[]);
    session.sheet(pc).unwrap();
    session.take_executed();
    (session, pc)
}

#[test]
fn setting_a_score_reruns_exactly_its_readers() {
    let (mut session, pc) = session();
    session
        .set_value(pc, "t:str.score", Some(json!(16)))
        .unwrap();
    let sheet = session.sheet_json(pc).unwrap();
    assert_eq!(sheet["values"]["t:athletics"]["value"], json!(5));
    expect![[r#"
        field_tree
        field_value(t:athletics)
        field_value(t:carry)
        field_value(t:str.mod)
        field_value(t:str.score)
        sheet_chunk
        sheet_fields
        sheet_group
        sheet_section"#]]
    .assert_eq(&executed(&session));
}

#[test]
fn an_unchanged_value_stops_the_spread() {
    let (mut session, pc) = session();
    // Edited once before, the score is an edited value (decisions.md, "Durability").
    session
        .set_value(pc, "t:str.score", Some(json!(16)))
        .unwrap();
    session.sheet(pc).unwrap();
    session.take_executed();
    // 16 -> 17 leaves the modifier at 3: athletics, which reads only the modifier, doesn't run.
    session
        .set_value(pc, "t:str.score", Some(json!(17)))
        .unwrap();
    session.sheet(pc).unwrap();
    expect![[r#"
        field_tree
        field_value(t:carry)
        field_value(t:str.mod)
        field_value(t:str.score)
        sheet_chunk
        sheet_fields
        sheet_group
        sheet_section"#]]
    .assert_eq(&executed(&session));
}

#[test]
fn a_values_first_edit_reruns_all_its_readers_once() {
    let (mut session, pc) = session();
    // 14 -> 15 leaves the modifier at 2, but the score's first edit lowers its durability, and
    // salsa backdates no memo whose durability dropped: athletics runs this once.
    session
        .set_value(pc, "t:str.score", Some(json!(15)))
        .unwrap();
    session.sheet(pc).unwrap();
    expect![[r#"
        field_tree
        field_value(t:athletics)
        field_value(t:carry)
        field_value(t:str.mod)
        field_value(t:str.score)
        sheet_chunk
        sheet_fields
        sheet_group
        sheet_section"#]]
    .assert_eq(&executed(&session));
}

/// A strength side and 40 skills reading dexterity: more fields than one chunk of the sheet holds.
fn wide_session() -> (Session, ocf_engine::CharacterId) {
    let mut rules = String::from(
        "fields:\n  t:str.score: { type: integer, input: true, default: 10 }\n  \
         t:str.mod: { type: integer, formula: \"floor((str.score - 10) / 2)\" }\n  \
         t:dex.score: { type: integer, input: true, default: 10 }\n  \
         t:dex.mod: { type: integer, formula: \"floor((dex.score - 10) / 2)\" }\n",
    );
    for i in 0..40 {
        rules.push_str(&format!(
            "  t:skill{i}: {{ type: integer, formula: \"dex.mod + {i}\" }}\n"
        ));
    }
    let mut session = Session::with_execution_log(ruleset(&rules));
    let pc = session.open(
        &character("values: { t:str.score: 14, t:dex.score: 12 }"),
        &[],
    );
    session.sheet(pc).unwrap();
    session.take_executed();
    session.take_validated();
    (session, pc)
}

/// The fields whose memos salsa checked and kept since the last call.
fn validated_fields(session: &Session) -> Vec<String> {
    let mut fields: Vec<String> = session
        .take_validated()
        .into_iter()
        .filter(|l| l.starts_with("field_value("))
        .collect();
    fields.sort();
    fields
}

#[test]
fn a_later_edit_checks_only_what_reads_edited_values() {
    let (mut session, pc) = wide_session();
    // The first edit of the score changes a value opened as structure: every field memo of the
    // sheet is checked (each keeps its value: only the strength side runs).
    session
        .set_value(pc, "t:str.score", Some(json!(16)))
        .unwrap();
    session.sheet(pc).unwrap();
    assert_eq!(validated_fields(&session).len(), 44 - 2);
    session.take_executed();
    // From the second edit on, the chunks of the sheet that read no edited value pass on their
    // durability: the skills past the first chunk (16 fields) are not even checked.
    session
        .set_value(pc, "t:str.score", Some(json!(18)))
        .unwrap();
    let sheet = session.sheet_json(pc).unwrap();
    assert_eq!(sheet["values"]["t:str.mod"]["value"], json!(4));
    assert_eq!(sheet["values"]["t:skill39"]["value"], json!(40));
    let checked = validated_fields(&session);
    assert!(checked.len() <= 16, "{checked:?}");
    assert!(
        !checked.iter().any(|f| f.contains("skill39")),
        "{checked:?}"
    );
    expect![[r#"
        field_tree
        field_value(t:str.mod)
        field_value(t:str.score)
        sheet_chunk
        sheet_fields
        sheet_group
        sheet_section"#]]
    .assert_eq(&executed(&session));
}

#[test]
fn equipping_a_shield_reruns_the_ac_chain_only() {
    let (mut session, pc) = session();
    session.equip(pc, "shield", true).unwrap();
    let sheet = session.sheet_json(pc).unwrap();
    assert_eq!(sheet["values"]["t:ac"]["value"], json!(13));
    expect![[r#"
        field_tree
        field_value(t:ac)
        sheet_chunk
        sheet_fields
        sheet_group
        sheet_section"#]]
    .assert_eq(&executed(&session));
}

#[test]
fn editing_a_field_nothing_reads_reruns_nothing_else() {
    let (mut session, pc) = session();
    session
        .set_value(pc, "t:notes", Some(json!("a note")))
        .unwrap();
    session.sheet(pc).unwrap();
    expect![[r#"
        field_tree
        field_value(t:notes)
        sheet_chunk
        sheet_fields
        sheet_group
        sheet_section"#]]
    .assert_eq(&executed(&session));
}

#[test]
fn adding_a_copy_reruns_activation_and_the_fields_it_reaches() {
    let (mut session, pc) = session();
    let entry =
        serde_json::from_value(json!({ "id": "shield2", "item": "t:shield", "equipped": true }))
            .unwrap();
    session
        .add_copy(pc, ocf_engine::input::CopyList::Inventory, &entry)
        .unwrap();
    let sheet = session.sheet_json(pc).unwrap();
    assert_eq!(sheet["values"]["t:ac"]["value"], json!(13));
    let executed = executed(&session);
    // The per-field effect lists run again, but only AC's changed, so only AC's value runs.
    let fields: Vec<&str> = executed
        .lines()
        .filter(|l| l.starts_with("field_value("))
        .collect();
    assert_eq!(fields, ["field_value(t:ac)"], "{executed}");
    assert!(executed.contains("activations"), "{executed}");
}

#[test]
fn a_second_sheet_without_edits_runs_nothing() {
    let (session, pc) = session();
    session.sheet(pc).unwrap();
    expect![""].assert_eq(&executed(&session));
}
