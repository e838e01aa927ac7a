//! A character file's problems through a Session's edits: an edit that makes the file say what the
//! ruleset can't take reports it in the sheet's `errors`, and undoing the edit clears it
//! (decisions.md, "Character files").

mod common;

use common::{character, ruleset};
use expect_test::expect;
use ocf_engine::Session;
use serde_json::json;

const RULES: &str = r#"
fields:
  t:charges: { type: integer, default: 0 }
contentTypes:
  t:gear:
    state: { charges: { type: integer, default: 3, min: 0, max: 5 } }
content:
  t:wand: { id: t:wand, type: t:gear, effects: [{ target: t:charges, op: set, value: self.charges }] }
"#;

fn errors(session: &Session, id: ocf_engine::CharacterId) -> String {
    let sheet = session.sheet_json(id).unwrap();
    let value = &sheet["values"]["t:charges"]["value"];
    let errors: Vec<String> = sheet["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| format!("{} {} {}", e["code"], e["path"], e["data"]))
        .collect();
    format!("charges = {value}\n{}\n", errors.join("\n"))
}

#[test]
fn edits_report_what_the_ruleset_cant_take() {
    let mut session = Session::new(ruleset(RULES));
    let id = session.open(&character("inventory: [{ id: w, item: t:wand }]"), &[]);
    expect![[r#"
        charges = 3

    "#]]
    .assert_eq(&errors(&session, id));

    session
        .set_state(id, "w", "chrages", Some(json!(1)))
        .unwrap();
    session
        .set_state(id, "w", "charges", Some(json!(9)))
        .unwrap();
    expect![[r#"
        charges = 5
        "unknown-key" "/inventory/0/state/chrages" {"entry":"w","key":"chrages","suggestion":"charges"}
        "out-of-range" "/inventory/0/state/charges" {"entry":"w","key":"charges","value":9,"bound":5}
    "#]].assert_eq(&errors(&session, id));

    session.set_state(id, "w", "chrages", None).unwrap();
    session
        .set_state(id, "w", "charges", Some(json!("two")))
        .unwrap();
    expect![[r#"
        charges = 3
        "wrong-type" "/inventory/0/state/charges" {"entry":"w","key":"charges","expected":"integer"}
    "#]]
    .assert_eq(&errors(&session, id));

    // A file update with a newer spec refuses the file; going back computes it again.
    let mut newer = character("inventory: [{ id: w, item: t:wand }]");
    newer.spec_version = "3.0.0".into();
    session.update(id, &newer).unwrap();
    expect![[r#"
        charges = null
        "spec-version-unsupported" "/specVersion" {"specVersion":"3.0.0","supported":"1.0.0"}
    "#]]
    .assert_eq(&errors(&session, id));
    session
        .update(id, &character("inventory: [{ id: w, item: t:wand }]"))
        .unwrap();
    expect![[r#"
        charges = 3

    "#]]
    .assert_eq(&errors(&session, id));
}

#[test]
fn saved_values_the_engines_dont_take_are_errors_after_an_edit_as_at_open() {
    let rules = r#"
fields:
  t:str: { type: integer, input: true, default: 10 }
"#;
    let mut session = Session::new(ruleset(rules));
    let id = session.open(&character("values: { t:str: 12 }"), &[]);
    session
        .set_value(id, "t:str", Some(json!("strong")))
        .unwrap();
    session.set_value(id, "t:wis", Some(json!(3))).unwrap();
    let edited = session.sheet_json(id).unwrap();
    let fresh = ocf_engine::compute_sheet_call(
        &ruleset(rules),
        session.file(id).unwrap(),
        &[],
        &Default::default(),
    );
    assert_eq!(edited, fresh);
    expect![[r#"
        {"value":10,"base":10,"breakdown":[],"tags":[]}
        [{"code":"wrong-type","message":"the saved value \"strong\" of `t:str` is not an integer; its default is used","path":"/values/t:str","data":{"field":"t:str","expected":"integer"}},{"code":"unknown-reference","message":"no pack declares the field `t:wis`; its saved value is ignored","path":"/values/t:wis","data":{"kind":"field","id":"t:wis"}}]
    "#]].assert_eq(&format!(
        "{}\n{}\n",
        edited["values"]["t:str"], edited["errors"]
    ));
    session.set_value(id, "t:str", Some(json!(14))).unwrap();
    session.set_value(id, "t:wis", None).unwrap();
    let mended = session.sheet_json(id).unwrap();
    expect![[r#"
        {"value":14,"base":14,"breakdown":[],"tags":[]}
        []
    "#]]
    .assert_eq(&format!(
        "{}\n{}\n",
        mended["values"]["t:str"], mended["errors"]
    ));
}
