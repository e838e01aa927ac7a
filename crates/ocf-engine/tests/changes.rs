//! `Session::changes`: what an edit changed on the sheet. Applying each report to the sheet as
//! last seen gives the sheet as it now is, and a report names only what changed.

mod common;

use common::{character, ruleset};
use expect_test::expect;
use ocf_engine::{CharacterId, Session};
use serde_json::{Value, json};

const RULES: &str = r#"
fields:
  t:level: { type: integer, input: true, default: 1 }
  t:str: { type: integer, input: true, default: 10 }
  t:hp: { type: integer, formula: "level * 8" }
  t:attack: { type: integer, formula: "floor((str - 10) / 2)" }
  t:ac: { type: integer, default: 10 }
  t:copies: { type: integer, formula: "countCopies(copy.type == 'gear')" }
contentTypes:
  t:gear:
    state: { charges: { type: integer, default: 3 } }
content:
  t:shield: { id: t:shield, type: t:gear, effects: [{ target: t:ac, op: add, value: 2, when: self.equipped }] }
  t:wand: { id: t:wand, type: t:gear, effects: [{ target: t:attack, op: add, value: self.charges }] }
  t:ring: { id: t:ring, type: t:gear, prerequisites: [{ id: seasoned, check: "level >= 5" }], effects: [{ target: t:ac, op: add, value: 1 }] }
"#;

const PC: &str = r#"
values: { t:level: 3, t:str: 14 }
inventory: [{ id: s, item: t:shield }, { id: w, item: t:wand }]
"#;

/// `sheet` with `patch` applied: `values` merged by field, every other key replaced.
fn apply(sheet: &mut Value, patch: &Value) {
    for (key, value) in patch.as_object().expect("a patch is an object") {
        if key == "values" {
            for (field, entry) in value.as_object().expect("values") {
                sheet["values"][field] = entry.clone();
            }
        } else {
            sheet[key] = value.clone();
        }
    }
}

fn report(session: &mut Session, pc: CharacterId) -> String {
    let changes = session.changes(pc).unwrap();
    let fields: Vec<String> = changes.fields.iter().map(|f| f.id.to_string()).collect();
    format!("fields {fields:?}, parts {:?}", changes.parts.keys())
}

#[test]
fn each_report_names_what_the_edit_changed() {
    let mut session = Session::new(ruleset(RULES));
    let pc = session.open(&character(PC), &[]);
    let first = session.changes(pc).unwrap();
    assert!(first.whole);
    assert_eq!(first.fields.len(), 6);
    session.set_value(pc, "t:level", Some(json!(4))).unwrap();
    expect![[r#"fields ["t:level", "t:hp"], parts []"#]].assert_eq(&report(&mut session, pc));
    // Nothing changed: an empty report.
    assert!(session.changes(pc).unwrap().is_empty());
    // A value that changes nothing it reaches (floor((15 - 10) / 2) is still 2).
    session.set_value(pc, "t:str", Some(json!(15))).unwrap();
    expect![[r#"fields ["t:str"], parts []"#]].assert_eq(&report(&mut session, pc));
    session.equip(pc, "s", true).unwrap();
    expect![[r#"fields ["t:ac"], parts []"#]].assert_eq(&report(&mut session, pc));
    let ring = serde_json::from_value(json!({ "id": "r", "item": "t:ring" })).unwrap();
    session
        .add_copy(pc, ocf_engine::input::CopyList::Inventory, &ring)
        .unwrap();
    expect![[r#"fields ["t:ac", "t:copies"], parts ["effects", "activations", "issues"]"#]]
        .assert_eq(&report(&mut session, pc));
    session.set_value(pc, "t:level", Some(json!(5))).unwrap();
    expect![[r#"fields ["t:level", "t:hp"], parts ["issues"]"#]]
        .assert_eq(&report(&mut session, pc));
}

#[test]
fn applying_each_report_gives_the_sheet() {
    let mut session = Session::new(ruleset(RULES));
    let pc = session.open(&character(PC), &[]);
    let first = session.changes(pc).unwrap();
    let mut seen = first.to_json();
    assert_eq!(
        seen.as_object_mut().unwrap().remove("whole"),
        Some(json!(true))
    );
    assert_eq!(seen, session.sheet_json(pc).unwrap());
    let ring: ocf_model::CopyEntry =
        serde_json::from_value(json!({ "id": "r", "item": "t:ring" })).unwrap();
    let inventory = ocf_engine::input::CopyList::Inventory;
    for round in 0..24 {
        match round % 6 {
            0 => session
                .set_value(pc, "t:level", Some(json!(round / 3 + 1)))
                .unwrap(),
            1 => session.equip(pc, "s", round % 4 == 1).unwrap(),
            2 => session.add_copy(pc, inventory, &ring).unwrap(),
            3 => session
                .set_state(pc, "w", "charges", Some(json!(round)))
                .unwrap(),
            4 => session.remove_copy(pc, "r").unwrap(),
            _ => session.set_value(pc, "t:str", None).unwrap(),
        }
        let changes = session.changes(pc).unwrap();
        assert!(!changes.whole);
        apply(&mut seen, &changes.to_json());
        assert_eq!(seen, session.sheet_json(pc).unwrap(), "after edit {round}");
    }
}

#[test]
fn a_character_reopened_in_a_closed_ones_place_is_reported_whole() {
    let mut session = Session::new(ruleset(RULES));
    let pc = session.open(&character(PC), &[]);
    session.changes(pc).unwrap();
    session.close(pc);
    assert!(session.changes(pc).is_err());
    let again = session.open(&character(PC), &[]);
    // The closed character's ID names no character, though another took its place.
    assert_ne!(again, pc);
    assert!(session.changes(pc).is_err());
    assert!(session.set_value(pc, "t:level", Some(json!(2))).is_err());
    let changes = session.changes(again).unwrap();
    assert!(changes.whole);
    assert_eq!(
        changes.sheet().unwrap().to_json(),
        session.sheet_json(again).unwrap()
    );
}

/// On a sheet of several sections of the tree (4 096 fields a section), each report applied to the
/// sheet as last seen gives the sheet, with the changed fields in field order, for edits of scores
/// whose readers are in the first section and in the last.
#[test]
fn reports_across_the_trees_sections_give_the_sheet() {
    use ocf_synthetic::Synthetic;
    let size = Synthetic::with_fields(5000).unwrap();
    let mut session = Session::shared(std::sync::Arc::new(size.ruleset()));
    let pc = session.open(&size.character(14), &[]);
    let mut seen = session.changes(pc).unwrap().to_json();
    seen.as_object_mut().unwrap().remove("whole");
    let last = format!("g:score{}", size.scores() - 1);
    for (field, score) in [("g:score0", 16), (last.as_str(), 18), ("g:score0", 9)] {
        session.set_value(pc, field, Some(json!(score))).unwrap();
        let changes = session.changes(pc).unwrap();
        assert!(!changes.whole, "{field}");
        let order: Vec<&str> = changes.fields.iter().map(|f| &*f.id).collect();
        let sheet = session.sheet_json(pc).unwrap();
        let in_sheet: Vec<&str> = sheet["values"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|id| order.contains(id))
            .collect();
        assert_eq!(order, in_sheet, "{field}: changed fields in field order");
        assert!(order.len() > 1, "{field}: {order:?}");
        apply(&mut seen, &changes.to_json());
        assert_eq!(seen, sheet, "{field}");
    }
}
