//! The long-running Session: edits, file updates that set only what differs, picks, and rebuilding
//! after many closes.

mod common;

use common::{character, executed_fields, ruleset};
use expect_test::expect;
use ocf_engine::Session;
use serde_json::json;

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
  t:class: {}
  t:feat: {}
content:
  t:shield: { id: t:shield, type: t:gear, effects: [{ target: t:ac, op: add, value: 2, when: self.equipped }] }
  t:wand: { id: t:wand, type: t:gear, effects: [{ target: t:attack, op: add, value: self.charges }] }
  t:fighter:
    id: t:fighter
    type: t:class
    choices: [{ id: style, options: { content: { type: t:feat } } }]
  t:defense: { id: t:defense, type: t:feat, effects: [{ target: t:ac, op: add, value: 1 }] }
  t:dueling: { id: t:dueling, type: t:feat, effects: [{ target: t:attack, op: add, value: 2 }] }
"#;

const PC: &str = r#"
values: { t:level: 3, t:str: 14 }
features: [{ id: f, item: t:fighter, choices: { style: [{ option: t:defense }] } }]
inventory: [{ id: s, item: t:shield }, { id: w, item: t:wand }]
"#;

fn value(session: &Session, pc: ocf_engine::CharacterId, field: &str) -> serde_json::Value {
    session
        .field(pc, field)
        .unwrap()
        .value
        .as_ref()
        .unwrap()
        .to_json()
}

#[test]
fn picks_activate_content_with_their_path() {
    let mut session = Session::new(ruleset(RULES));
    let pc = session.open(&character(PC), &[]);
    let sheet = session.sheet_json(pc).unwrap();
    expect![[r#"[{"item":"t:fighter","entry":"f","via":"copy"},{"item":"t:defense","entry":"f","via":"pick","parent":0,"path":{"entry":"f","choice":["style","t:defense"]}},{"item":"t:shield","entry":"s","via":"copy"},{"item":"t:wand","entry":"w","via":"copy"}]"#]]
        .assert_eq(&sheet["activations"].to_string());
    assert_eq!(value(&session, pc, "t:ac"), json!(11));
    // Picking another style moves the bonus.
    let pick = serde_json::from_value(json!([{ "option": "t:dueling" }])).unwrap();
    session.pick(pc, Some("f"), "style", pick).unwrap();
    assert_eq!(value(&session, pc, "t:ac"), json!(10));
    assert_eq!(value(&session, pc, "t:attack"), json!(7));
}

#[test]
fn copy_state_reaches_effects_through_self() {
    let mut session = Session::new(ruleset(RULES));
    let pc = session.open(&character(PC), &[]);
    // The wand's default charges (3) add to attack: 2 + 3.
    assert_eq!(value(&session, pc, "t:attack"), json!(5));
    session
        .set_state(pc, "w", "charges", Some(json!(1)))
        .unwrap();
    assert_eq!(value(&session, pc, "t:attack"), json!(3));
    assert_eq!(value(&session, pc, "t:copies"), json!(2));
    session.remove_copy(pc, "w").unwrap();
    assert_eq!(value(&session, pc, "t:attack"), json!(2));
    assert_eq!(value(&session, pc, "t:copies"), json!(1));
    assert!(session.equip(pc, "w", true).is_err());
}

#[test]
fn a_value_set_by_its_bare_id_is_the_fields() {
    // A bare ID resolves as the file's keys do: in the pinned packs, then every loaded pack.
    let mut session = Session::new(ruleset(RULES));
    let pc = session.open(&character(PC), &[]);
    session.set_value(pc, "level", Some(json!(5))).unwrap();
    assert_eq!(value(&session, pc, "t:hp"), json!(40));
    // The file keeps the key as it was written: one `t:level`, no bare `level` beside it.
    let values = &session.file(pc).unwrap().values;
    assert_eq!(values.0.get("t:level"), Some(&json!(5)));
    assert!(values.0.get("level").is_none());
}

#[test]
fn updating_from_a_file_sets_only_what_differs() {
    let mut session = Session::with_execution_log(ruleset(RULES));
    let pc = session.open(&character(PC), &[]);
    session.sheet(pc).unwrap();
    session.take_executed();
    // The same file again: nothing runs.
    session.update(pc, &character(PC)).unwrap();
    session.sheet(pc).unwrap();
    expect![""].assert_eq(&executed_fields(&session));
    // Level up and equip the shield: only what reads them.
    let edited = PC.replace("t:level: 3", "t:level: 4").replace(
        "{ id: s, item: t:shield }",
        "{ id: s, item: t:shield, equipped: true }",
    );
    session.update(pc, &character(&edited)).unwrap();
    let sheet = session.sheet_json(pc).unwrap();
    assert_eq!(sheet["values"]["t:hp"]["value"], json!(32));
    assert_eq!(sheet["values"]["t:ac"]["value"], json!(13));
    expect![[r#"
        field_value(t:ac)
        field_value(t:copies)
        field_value(t:hp)
        field_value(t:level)"#]]
    .assert_eq(&executed_fields(&session));
}

#[test]
fn closing_many_characters_rebuilds_and_keeps_the_open_ones() {
    let mut session = Session::new(ruleset(RULES));
    let kept = session.open(&character(PC), &[]);
    session.set_value(kept, "t:level", Some(json!(7))).unwrap();
    for _ in 0..ocf_engine::session::TRIM_AFTER_CLOSED {
        let other = session.open(&character(PC), &[]);
        session.sheet(other).unwrap();
        session.close(other);
    }
    assert_eq!(value(&session, kept, "t:hp"), json!(56));
}

#[test]
fn a_choice_applies_its_effects_once_per_pick_with_pick_bound() {
    // A skilled human: each picked skill's rank gets +1, found by a set-of-fields `where` reading
    // `pick` (EF, "Targets").
    let rules = r#"
fields:
  t:rank.athletics: { type: integer, default: 0, tags: [skill-rank, athletics] }
  t:rank.stealth: { type: integer, default: 0, tags: [skill-rank, stealth] }
  t:rank.arcana: { type: integer, default: 0, tags: [skill-rank, arcana] }
  t:bonus: { type: integer, default: 0 }
contentTypes: { t:species: {} }
content:
  t:human:
    id: t:human
    type: t:species
    choices:
      - id: skilled
        pick: 2
        activate: false
        options: { values: [athletics, stealth, arcana] }
        effects:
          - target: { fields: { where: "'skill-rank' in item.tags && pick.value in item.tags" } }
            op: add
            value: 1
          - { target: t:bonus, op: add, value: 1 }
"#;
    let pc = "features: [{ id: h, item: t:human, choices: { skilled: [{ option: athletics }, { option: arcana }] } }]";
    let mut session = Session::new(ruleset(rules));
    let pc = session.open(&character(pc), &[]);
    let sheet = session.sheet_json(pc).unwrap();
    let shown: Vec<String> = [
        "t:rank.athletics",
        "t:rank.stealth",
        "t:rank.arcana",
        "t:bonus",
    ]
    .iter()
    .map(|f| format!("{f} = {}", sheet["values"][f]["value"]))
    .collect();
    expect![[r#"
        t:rank.athletics = 1
        t:rank.stealth = 0
        t:rank.arcana = 1
        t:bonus = 2"#]]
    .assert_eq(&shown.join("\n"));
    let ids: Vec<&str> = sheet["effects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    expect![[r#"["t:human/skilled#0@t:rank.athletics", "t:human/skilled#1", "t:human/skilled#0@t:rank.arcana", "t:human/skilled#1"]"#]]
        .assert_eq(&format!("{ids:?}"));
}

#[test]
fn choices_pending_and_choice_issues() {
    let rules = r#"
fields:
  t:level: { type: integer, input: true, default: 1 }
contentTypes: { t:class: {}, t:feat: {}, t:style: {} }
choices:
  t:background: { id: background, options: { values: [sage, soldier] } }
content:
  t:fighter:
    id: t:fighter
    type: t:class
    choices:
      - { id: style, options: { content: { type: t:style } } }
      - { id: feats, pick: { min: 0, max: 1 }, options: { content: { type: t:feat } } }
      - { id: late, when: "level >= 4", options: { content: { type: t:feat } } }
  t:archery: { id: t:archery, type: t:style, choices: [{ id: bow, options: { values: [long, short] } }] }
  t:tough: { id: t:tough, type: t:feat }
  t:alert: { id: t:alert, type: t:feat }
"#;
    let pc = r#"
features:
  - id: f
    item: t:fighter
    choices:
      style: [{ option: t:archery }]
      feats: [{ option: t:tough }, { option: t:alert }]
      late: [{ option: t:tough }]
"#;
    let mut session = Session::new(ruleset(rules));
    let pc = session.open(&character(pc), &[]);
    let sheet = session.sheet_json(pc).unwrap();
    let lines = |key: &str| -> String {
        sheet[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    };
    expect![[r#"
        {"path":{"choice":["t:background"]},"owner":"t:rules","id":"background","min":1,"max":1,"picks":[],"open":true}
        {"path":{"entry":"f","choice":["style"]},"owner":"t:fighter","id":"style","min":1,"max":1,"picks":["t:archery"],"open":false}
        {"path":{"entry":"f","choice":["style","t:archery","bow"]},"owner":"t:archery","id":"bow","min":1,"max":1,"picks":[],"open":true}
        {"path":{"entry":"f","choice":["feats"]},"owner":"t:fighter","id":"feats","min":0,"max":1,"picks":["t:tough","t:alert"],"open":false}"#]]
    .assert_eq(&lines("choices"));
    expect![[r#"
        {"path":{"choice":["t:background"]},"min":1,"max":1,"picked":0}
        {"path":{"entry":"f","choice":["style","t:archery","bow"]},"min":1,"max":1,"picked":0}"#]]
    .assert_eq(&lines("pending"));
    expect![[r#"
        {"code":"choice-not-applicable","id":"t:fighter/late","source":{"type":"item","id":"t:fighter","entry":"f"},"data":{"path":{"entry":"f","choice":["late"]}}}
        {"code":"too-many-picks","id":"t:fighter/feats","source":{"type":"item","id":"t:fighter","entry":"f"},"data":{"path":{"entry":"f","choice":["feats"]},"max":1,"picked":2}}"#]]
    .assert_eq(&lines("issues"));
}

#[test]
fn open_loads_the_characters_homebrew() {
    let core: ocf_model::PackRelease = serde_json::from_value(json!({
        "id": "core", "version": "1.0.0", "specVersion": "1.0.0",
        "rules": { "fields": { "ac": { "type": "integer", "default": 10 } }, "contentTypes": { "feature": {} } },
    }))
    .unwrap();
    let rules = ocf_load::load_ruleset(&[core], &Default::default()).unwrap();
    let file = |effect_target: &str| -> ocf_model::Character {
        serde_json::from_value(json!({
            "id": "pc", "specVersion": "1.0.0", "packs": [{ "id": "core", "version": "1.0.0" }],
            "homebrew": { "content": [{ "id": "charm", "type": "feature", "effects": [{ "target": effect_target, "op": "add", "value": 1 }] }] },
            "features": [{ "id": "c", "item": "homebrew:charm" }],
        }))
        .unwrap()
    };
    let mut session = Session::new(rules);
    let pc = session.open(&file("ac"), &[]);
    assert_eq!(value(&session, pc, "core:ac"), json!(11));
    assert!(session.homebrew_errors(pc).is_empty());
    // One that fails to load: empty values and its homebrew-error, as computeSheet gives.
    let bad = session.open(&file("nowhere"), &[]);
    let sheet = session.sheet_json(bad).unwrap();
    assert_eq!(sheet["values"], json!({}));
    assert_eq!(sheet["errors"][0]["code"], json!("homebrew-error"));
    // Rebuilding after many closes keeps the homebrew.
    for _ in 0..ocf_engine::session::TRIM_AFTER_CLOSED {
        let other = session.open(&character(PC), &[]);
        session.close(other);
    }
    assert_eq!(value(&session, pc, "core:ac"), json!(11));
}

#[test]
fn memory_stays_bounded_over_a_long_session() {
    let mut session = Session::new(ruleset(RULES));
    let kept = session.open(&character(PC), &[]);
    // One trim cycle is TRIM_AFTER_CLOSED open/edit/close rounds; the most the database holds in
    // a cycle must not grow from one cycle to the next.
    let cycle = ocf_engine::session::TRIM_AFTER_CLOSED;
    let mut peaks = Vec::new();
    let mut peak = 0;
    for round in 0..6 * cycle {
        let level = (round % 20) as i64 + 1;
        session
            .set_value(kept, "t:level", Some(json!(level)))
            .unwrap();
        session.equip(kept, "s", round % 2 == 0).unwrap();
        let other = session.open(&character(PC), &[]);
        for str in 8..14 {
            session.set_value(other, "t:str", Some(json!(str))).unwrap();
            session.sheet(other).unwrap();
        }
        session.sheet(kept).unwrap();
        peak = peak.max(session.stored());
        session.close(other);
        if round % cycle == cycle - 1 {
            peaks.push(peak);
            peak = 0;
        }
    }
    let last_level = ((6 * cycle - 1) % 20) as i64 + 1;
    assert_eq!(value(&session, kept, "t:hp"), json!(8 * last_level));
    // Without the rebuilds each cycle would hold the closed characters of all the cycles before.
    assert!(peaks.iter().all(|p| *p <= peaks[0]), "{peaks:?}");
}

/// One edit of [`edits_then_sheet_equals_a_fresh_compute_sheet`].
#[derive(Debug, Clone)]
enum Edit {
    Value(&'static str, Option<i64>),
    Equip(usize, bool),
    AddCopy(&'static str),
    RemoveCopy(usize),
    Pick(Option<&'static str>),
    Charges(usize, i64),
}

fn edit() -> impl proptest::strategy::Strategy<Value = Edit> {
    use proptest::prelude::*;
    prop_oneof![
        (
            prop::sample::select(vec!["t:level", "t:str"]),
            prop::option::of(-5i64..30)
        )
            .prop_map(|(f, v)| Edit::Value(f, v)),
        (0usize..4, any::<bool>()).prop_map(|(i, e)| Edit::Equip(i, e)),
        prop::sample::select(vec!["t:shield", "t:wand"]).prop_map(Edit::AddCopy),
        (0usize..4).prop_map(Edit::RemoveCopy),
        prop::option::of(prop::sample::select(vec!["t:defense", "t:dueling"])).prop_map(Edit::Pick),
        (0usize..4, 0i64..5).prop_map(|(i, c)| Edit::Charges(i, c)),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// After any edits, a session's sheet is the sheet a fresh computeSheet gives for the file the
    /// edits make.
    #[test]
    fn edits_then_sheet_equals_a_fresh_compute_sheet(edits in proptest::collection::vec(edit(), 1..12)) {
        let rules = ruleset(RULES);
        let mut session = Session::new(rules.clone());
        let pc = session.open(&character(PC), &[]);
        session.sheet(pc).unwrap();
        let mut added = 0;
        for edit in edits {
            let copies: Vec<String> = session.file(pc).unwrap().inventory.iter().map(|c| c.id.clone()).collect();
            let copy = |i: usize| copies.get(i % copies.len().max(1)).cloned();
            match edit {
                Edit::Value(field, v) => session.set_value(pc, field, v.map(|v| json!(v))).unwrap(),
                Edit::Equip(i, on) => if let Some(id) = copy(i) { session.equip(pc, &id, on).unwrap() },
                Edit::AddCopy(item) => {
                    added += 1;
                    let entry = serde_json::from_value(json!({ "id": format!("n{added}"), "item": item })).unwrap();
                    session.add_copy(pc, ocf_engine::input::CopyList::Inventory, &entry).unwrap();
                }
                Edit::RemoveCopy(i) => if let Some(id) = copy(i) { session.remove_copy(pc, &id).unwrap() },
                Edit::Pick(option) => {
                    let picks = option.map(|o| serde_json::from_value(json!([{ "option": o }])).unwrap()).unwrap_or_default();
                    session.pick(pc, Some("f"), "style", picks).unwrap();
                }
                Edit::Charges(i, c) => if let Some(id) = copy(i) { session.set_state(pc, &id, "charges", Some(json!(c))).unwrap() },
            }
            // Read the sheet between edits too, so later edits meet remembered memos.
            session.sheet(pc).unwrap();
        }
        let file = session.file(pc).unwrap().clone();
        let fresh = ocf_engine::compute_sheet_call(&rules, &file, &[], &Default::default());
        proptest::prop_assert_eq!(session.sheet_json(pc).unwrap(), fresh);
    }
}

/// computeSheet's `no-eligible-option` reads an option on its trial sheet when its own effects can
/// change its verdict (EC "Rules issues": "as `listOptions` lists them"): the trial is a character
/// derived in the database once per revision, so reading the sheet again derives nothing, an edit
/// tries again, and the verdict follows the edited value.
#[test]
fn no_eligible_option_trials_are_made_once_a_revision() {
    const RULES: &str = r#"
fields:
  t:str: { type: integer, input: true, default: 12 }
contentTypes: { t:class: {}, t:feat: {} }
content:
  t:athlete:
    id: t:athlete
    type: t:feat
    prerequisites: [{ id: strong, check: 'str >= 13' }]
    effects: [{ target: t:str, op: add, value: 2 }]
  t:fighter:
    id: t:fighter
    type: t:class
    choices: [{ id: feat, requiresOption: true, options: { content: { type: t:feat } } }]
"#;
    let mut session = Session::new(ruleset(RULES));
    let pc = session.open(&character("features: [{ id: f, item: t:fighter }]"), &[]);
    let codes = |session: &Session| -> Vec<String> {
        let sheet = session.sheet(pc).unwrap();
        sheet
            .issues_json()
            .iter()
            .map(|i| i["code"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let derived = |session: &Session| session.db(pc).unwrap().derived();
    assert_eq!(derived(&session), 0);
    // At 12 the feat is eligible on its trial sheet (14).
    assert!(codes(&session).is_empty());
    let once = derived(&session);
    assert!(once > 0, "a trial was derived");
    assert!(codes(&session).is_empty());
    assert_eq!(derived(&session), once, "read again: no new trial");
    // At 10 its trial sheet has 12: no eligible option.
    session.set_value(pc, "t:str", Some(json!(10))).unwrap();
    assert_eq!(codes(&session), ["no-eligible-option"]);
    assert!(derived(&session) > once, "an edit tries again");
}
