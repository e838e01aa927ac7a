//! Standard copies and kept templates through a session's edits (EC, "Standard copies"): after any
//! edit, the session's sheet is the sheet a fresh session gives for the file the session holds,
//! and that file is the one a player would save (no unsaved standard copy, no kept template).

use expect_test::{Expect, expect};
use ocf_engine::input::CopyList;
use ocf_engine::{CharacterId, Session};
use ocf_model::{Character, Ruleset};
use serde_json::{Value, json};

/// A pack whose items hold standard copies (through a copy, a grant whose `when` reads a value, a
/// pick, an applied entry) and keep templates (on a `when` reading a value, on a copy query
/// reading `self.equipped`, on a `when` reading the keeper's state).
fn rules() -> Ruleset {
    let core: ocf_model::PackRelease = serde_json::from_value(json!({
        "id": "core", "version": "1.0.0", "specVersion": "1.0.0",
        "rules": {
            "fields": {
                "level": { "type": "integer", "input": true, "default": 1 },
                "attacks": { "type": "integer", "default": 0 },
                "damage": { "type": "integer", "default": 0 },
                "ac": { "type": "integer", "default": 10 },
                "hp": { "type": "integer", "input": true, "default": 0 },
                "max-hp": { "type": "integer", "formula": "hp + 8" },
                "crew-id": { "type": "string", "formula": "links.crew.id" },
            },
            "links": { "crew": { "fields": { "tier": { "type": "integer", "default": 0 } } } },
            "contentTypes": {
                "weapon": { "carried": true, "effects": [{ "target": "attacks", "op": "add", "value": 1 }] },
                "feature": {},
                "class": {},
                "path": {},
                "condition": {},
                "template": {},
                "ritual": { "state": { "focus": { "type": "boolean", "default": false } } },
            },
        },
        "content": [
            { "id": "claws", "type": "weapon" },
            { "id": "fist", "type": "weapon" },
            { "id": "club", "type": "weapon", "tags": ["simple"] },
            { "id": "sword", "type": "weapon", "tags": ["martial"] },
            { "id": "magic", "type": "template", "effects": [{ "target": "damage", "op": "add", "value": 1 }] },
            { "id": "holy", "type": "template", "effects": [{ "target": "damage", "op": "add", "value": 10 }] },
            { "id": "keen", "type": "template", "effects": [{ "target": "damage", "op": "add", "value": 100 }] },
            { "id": "beast-form", "type": "feature",
              "standardCopies": [{ "type": "weapon", "where": "item.id == 'core:claws'" }] },
            { "id": "druid", "type": "class", "grants": [{ "item": "beast-form", "when": "level >= 2" }] },
            { "id": "hero", "type": "class", "choices": [{ "id": "path", "options": { "content": { "type": "path" } } }] },
            { "id": "wild", "type": "path",
              "standardCopies": [{ "type": "weapon", "where": "item.id == 'core:fist'" }] },
            { "id": "plain", "type": "path" },
            { "id": "rage", "type": "condition",
              "standardCopies": [{ "type": "weapon", "where": "item.id == 'core:claws'" }] },
            { "id": "shillelagh", "type": "feature",
              "keepsTemplates": [{ "template": "magic", "when": "level >= 3",
                                   "copies": { "type": "weapon", "where": "'simple' in item.tags" } }] },
            { "id": "enchanter", "type": "feature",
              "keepsTemplates": [{ "template": "keen", "copies": { "type": "weapon", "where": "self.equipped" } }] },
            { "id": "bless", "type": "ritual",
              "keepsTemplates": [{ "template": "holy", "when": "self.focus", "copies": { "type": "weapon" } }] },
            { "id": "mage-armor", "type": "feature", "effects": [{ "target": "ac", "op": "set", "value": 13 }] },
            { "id": "unarmored", "type": "feature", "effects": [{ "target": "ac", "op": "set", "value": 12 }] },
        ],
    }))
    .expect("the test pack");
    ocf_load::load_ruleset(&[core], &Default::default()).expect("the test ruleset")
}

/// A character with all the file holds that the inputs don't: pins, links, follow-ups, a
/// homebrew, extensions, a bare saved value ID.
fn file() -> Character {
    serde_json::from_value(json!({
        "id": "pc", "specVersion": "1.0.0",
        "packs": [{ "id": "core", "version": "1.0.0" }],
        "values": { "level": 1 },
        "features": [
            { "id": "cls", "item": "core:hero" },
            { "id": "spell", "item": "core:shillelagh" },
            { "id": "ench", "item": "core:enchanter" },
            { "id": "b", "item": "core:bless" },
            { "id": "h", "item": "homebrew:charm" },
            { "id": "ma", "item": "core:mage-armor" },
            { "id": "un", "item": "core:unarmored" },
        ],
        "inventory": [{ "id": "c", "item": "core:club" }, { "id": "s", "item": "core:sword" }],
        "links": { "core:crew": "crew-1" },
        "followUps": [{ "id": "f1", "followUp": "core:second-wind" }],
        "homebrew": { "content": [{ "id": "charm", "type": "feature",
            "effects": [{ "target": "core:ac", "op": "add", "value": 1 }] }] },
        "extensions": { "app": { "colour": "red" } },
    }))
    .expect("the test character")
}

/// One edit of a session.
#[derive(Debug, Clone)]
enum Edit {
    Value(&'static str, Option<Value>),
    Add(CopyList, Value),
    Remove(&'static str),
    Equip(&'static str, bool),
    State(&'static str, &'static str, Option<Value>),
    Pick(&'static str, &'static str, Option<&'static str>),
    Applied(Value),
    Competing(&'static [&'static str]),
}

fn apply(session: &mut Session, pc: CharacterId, edit: &Edit) {
    try_apply(session, pc, edit).unwrap_or_else(|e| panic!("{edit:?}: {e}"));
}

fn try_apply(
    session: &mut Session,
    pc: CharacterId,
    edit: &Edit,
) -> Result<(), ocf_engine::EditError> {
    match edit.clone() {
        Edit::Value(field, value) => session.set_value(pc, field, value),
        Edit::Add(list, entry) => {
            session.add_copy(pc, list, &serde_json::from_value(entry).unwrap())
        }
        Edit::Remove(copy) => session.remove_copy(pc, copy),
        Edit::Equip(copy, on) => session.equip(pc, copy, on),
        Edit::State(copy, key, value) => session.set_state(pc, copy, key, value),
        Edit::Pick(copy, choice, option) => {
            let picks = option
                .map(|o| serde_json::from_value(json!([{ "option": o }])).unwrap())
                .unwrap_or_default();
            session.pick(pc, Some(copy), choice, picks)
        }
        Edit::Applied(list) => session.set_applied(pc, serde_json::from_value(list).unwrap()),
        Edit::Competing(picks) => {
            session.set_competing(pc, picks.iter().map(|p| p.to_string()).collect())
        }
    }
}

/// What the edits are seen by: `attacks`, `damage` and `ac`, then each active copy with its
/// templates, from the sheet's activations.
fn summary(sheet: &Value) -> String {
    let value = |f: &str| sheet["values"][f]["value"].to_string();
    let mut out = format!(
        "attacks {} damage {} ac {}\n",
        value("core:attacks"),
        value("core:damage"),
        value("core:ac")
    );
    for a in sheet["activations"].as_array().unwrap() {
        let item = a["item"].as_str().unwrap();
        match (&a["entry"], &a["via"]) {
            (Value::String(entry), Value::String(via)) if via == "copy" => {
                out.push_str(&format!("{entry}: {item}"))
            }
            (Value::String(entry), _) => out.push_str(&format!("  {entry} + {item}")),
            _ => out.push_str(&format!("  {item}")),
        }
        out.push('\n');
    }
    out
}

/// Opens the file, applies `edits` reading the sheet after each (so later edits meet memos), and
/// checks the sheet against a fresh session opened on the session's file, after each edit.
fn check(edits: &[Edit], expect: Expect) {
    let rules = rules();
    let mut session = Session::new(rules.clone());
    let pc = session.open(&file(), &[]);
    session.sheet(pc).unwrap();
    for (n, edit) in edits.iter().enumerate() {
        apply(&mut session, pc, edit);
        let edited = session.sheet_json(pc).unwrap();
        let file = session.file(pc).unwrap().clone();
        let mut fresh = Session::new(rules.clone());
        let again = fresh.open(&file, &[]);
        let fresh = fresh.sheet_json(again).unwrap();
        assert_eq!(
            summary(&edited),
            summary(&fresh),
            "after edit {n} ({edit:?}) of {edits:?}"
        );
        assert_eq!(edited, fresh, "after edit {n} ({edit:?}) of {edits:?}");
    }
    expect.assert_eq(&summary(&session.sheet_json(pc).unwrap()));
}

#[test]
fn opened_as_saved() {
    check(
        &[],
        expect![[r#"
            attacks 2 damage 0 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            c: core:club
            s: core:sword
        "#]],
    );
}

#[test]
fn a_value_edit_grants_content_whose_standard_copies_follow() {
    // Level 2 grants the druid beast form, whose claws are a standard copy; level 1 takes them back.
    let druid = json!({ "id": "d", "item": "core:druid" });
    check(
        &[
            Edit::Add(CopyList::Features, druid),
            Edit::Value("core:level", Some(json!(2))),
        ],
        expect![[r#"
            attacks 3 damage 0 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            d: core:druid
              d + core:beast-form
            c: core:club
            s: core:sword
            core-claws: core:claws
        "#]],
    );
    check(
        &[
            Edit::Value("core:level", Some(json!(2))),
            Edit::Add(
                CopyList::Features,
                json!({ "id": "d", "item": "core:druid" }),
            ),
            Edit::Value("core:level", None),
        ],
        expect![[r#"
            attacks 2 damage 0 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            d: core:druid
            c: core:club
            s: core:sword
        "#]],
    );
}

#[test]
fn a_value_edit_keeps_and_drops_templates() {
    check(
        &[Edit::Value("core:level", Some(json!(3)))],
        expect![[r#"
            attacks 2 damage 1 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            c: core:club
              c + core:magic
            s: core:sword
        "#]],
    );
    check(
        &[
            Edit::Value("core:level", Some(json!(3))),
            Edit::Value("core:level", Some(json!(2))),
        ],
        expect![[r#"
            attacks 2 damage 0 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            c: core:club
            s: core:sword
        "#]],
    );
}

#[test]
fn adding_and_removing_a_copy_moves_its_standard_copies() {
    check(
        &[
            Edit::Value("core:level", Some(json!(2))),
            Edit::Add(
                CopyList::Features,
                json!({ "id": "bf", "item": "core:beast-form" }),
            ),
        ],
        expect![[r#"
            attacks 3 damage 0 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            bf: core:beast-form
            c: core:club
            s: core:sword
            core-claws: core:claws
        "#]],
    );
    check(
        &[
            Edit::Add(
                CopyList::Features,
                json!({ "id": "bf", "item": "core:beast-form" }),
            ),
            Edit::Add(
                CopyList::Inventory,
                json!({ "id": "x", "item": "core:sword" }),
            ),
            Edit::Remove("bf"),
        ],
        expect![[r#"
            attacks 3 damage 0 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            c: core:club
            s: core:sword
            x: core:sword
        "#]],
    );
}

#[test]
fn equipping_makes_a_kept_template_match() {
    check(
        &[Edit::Equip("s", true)],
        expect![[r#"
        attacks 2 damage 100 ac 14
        cls: core:hero
        spell: core:shillelagh
        ench: core:enchanter
        b: core:bless
        h: homebrew:charm
        ma: core:mage-armor
        un: core:unarmored
        c: core:club
        s: core:sword
          s + core:keen
    "#]],
    );
    check(
        &[Edit::Equip("s", true), Edit::Equip("s", false)],
        expect![[r#"
            attacks 2 damage 0 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            c: core:club
            s: core:sword
        "#]],
    );
}

#[test]
fn a_state_edit_makes_a_kept_template_hold() {
    check(
        &[Edit::State("b", "focus", Some(json!(true)))],
        expect![[r#"
            attacks 2 damage 20 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            c: core:club
              c + core:holy
            s: core:sword
              s + core:holy
        "#]],
    );
    check(
        &[
            Edit::State("b", "focus", Some(json!(true))),
            Edit::State("b", "focus", None),
        ],
        expect![[r#"
            attacks 2 damage 0 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            c: core:club
            s: core:sword
        "#]],
    );
}

#[test]
fn a_pick_adds_its_standard_copies() {
    check(
        &[Edit::Pick("cls", "path", Some("core:wild"))],
        expect![[r#"
            attacks 3 damage 0 ac 14
            cls: core:hero
              cls + core:wild
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            c: core:club
            s: core:sword
            core-fist: core:fist
        "#]],
    );
    check(
        &[
            Edit::Pick("cls", "path", Some("core:wild")),
            Edit::Pick("cls", "path", Some("core:plain")),
        ],
        expect![[r#"
            attacks 2 damage 0 ac 14
            cls: core:hero
              cls + core:plain
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            c: core:club
            s: core:sword
        "#]],
    );
}

#[test]
fn an_applied_entry_adds_its_standard_copies() {
    check(
        &[Edit::Applied(json!([{ "id": "r", "source": "core:rage" }]))],
        expect![[r#"
            attacks 3 damage 0 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            c: core:club
            s: core:sword
            core-claws: core:claws
              r + core:rage
        "#]],
    );
    check(
        &[
            Edit::Applied(json!([{ "id": "r", "source": "core:rage" }])),
            Edit::Applied(json!([{ "id": "r", "source": "core:rage", "active": false }])),
        ],
        expect![[r#"
            attacks 2 damage 0 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            c: core:club
            s: core:sword
        "#]],
    );
}

#[test]
fn competing_picks_are_kept_in_the_file() {
    check(
        &[Edit::Competing(&["core:unarmored#0"])],
        expect![[r#"
        attacks 2 damage 0 ac 13
        cls: core:hero
        spell: core:shillelagh
        ench: core:enchanter
        b: core:bless
        h: homebrew:charm
        ma: core:mage-armor
        un: core:unarmored
        c: core:club
        s: core:sword
    "#]],
    );
}

#[test]
fn edits_of_a_standard_copy_save_it() {
    // The claws are an unsaved standard copy until an edit gives them something to save.
    check(
        &[
            Edit::Value("core:level", Some(json!(2))),
            Edit::Add(
                CopyList::Features,
                json!({ "id": "d", "item": "core:druid" }),
            ),
            Edit::Equip("core-claws", true),
            Edit::Value("core:level", Some(json!(1))),
        ],
        expect![[r#"
            attacks 3 damage 100 ac 14
            cls: core:hero
            spell: core:shillelagh
            ench: core:enchanter
            b: core:bless
            h: homebrew:charm
            ma: core:mage-armor
            un: core:unarmored
            d: core:druid
            c: core:club
            s: core:sword
            core-claws: core:claws
              core-claws + core:keen
        "#]],
    );
}

#[test]
fn the_file_is_the_one_opened_until_an_edit() {
    // Level 3 keeps a template on the club, and the beast form holds the claws: neither is saved.
    let mut opened = file();
    opened.values.0.insert("level".into(), json!(3));
    opened
        .features
        .push(serde_json::from_value(json!({ "id": "bf", "item": "core:beast-form" })).unwrap());
    let mut session = Session::new(rules());
    let pc = session.open(&opened, &[]);
    let sheet = session.sheet_json(pc).unwrap();
    assert!(summary(&sheet).contains("core-claws: core:claws"));
    assert!(summary(&sheet).contains("c + core:magic"));
    let held = session.file(pc).unwrap().clone();
    assert_eq!(held, opened);
    // An edit writes the value where the file had it, under the ID as written.
    session.set_value(pc, "core:level", Some(json!(4))).unwrap();
    let held = session.file(pc).unwrap().clone();
    opened.values.0.insert("level".into(), json!(4));
    assert_eq!(held, opened);
}

#[test]
fn a_standard_copy_is_not_removed() {
    let mut session = Session::new(rules());
    let mut opened = file();
    opened
        .features
        .push(serde_json::from_value(json!({ "id": "bf", "item": "core:beast-form" })).unwrap());
    let pc = session.open(&opened, &[]);
    let removed = session.remove_copy(pc, "core-claws").unwrap_err();
    expect!["`core-claws` is a standard copy, there while the content that holds it is active"]
        .assert_eq(&removed.to_string());
    let removed = session.remove_copy(pc, "nothing").unwrap_err();
    expect!["no copy `nothing`"].assert_eq(&removed.to_string());
    assert!(session.equip(pc, "nothing", true).is_err());
    assert_eq!(session.file(pc).unwrap(), &opened);
}

/// The queries a sheet read runs after `edit`, on a session whose ruleset has activation rounds.
fn executed_after(edit: Edit) -> String {
    let mut session = Session::with_execution_log(rules());
    let pc = session.open(&file(), &[]);
    session.sheet(pc).unwrap();
    session.take_executed();
    apply(&mut session, pc, &edit);
    session.sheet(pc).unwrap();
    let mut lines = session.take_executed();
    lines.sort();
    lines.join("\n")
}

#[test]
fn an_edit_the_rounds_leave_alone_sets_nothing_else() {
    // A value no activation condition reads: the rounds run and find what the inputs hold, so
    // only the value's readers run again.
    expect![[r#"
        field_tree
        field_value(core:hp)
        field_value(core:max-hp)
        sheet_chunk
        sheet_fields
        sheet_group
        sheet_section"#]]
    .assert_eq(&executed_after(Edit::Value("core:hp", Some(json!(5)))));
    // Unequipping an unequipped copy changes no input.
    expect![[r#""#]].assert_eq(&executed_after(Edit::Equip("c", false)));
}

#[test]
fn a_rebuild_keeps_the_held_file() {
    let rules = rules();
    let mut session = Session::new(rules.clone());
    let pc = session.open(&file(), &[]);
    session.set_value(pc, "core:level", Some(json!(3))).unwrap();
    let view = json!({ "id": "crew-2", "values": {} });
    let links = json!({ "core:crew": view }).as_object().unwrap().clone();
    session.set_links(pc, links.clone()).unwrap();
    for _ in 0..ocf_engine::session::TRIM_AFTER_CLOSED {
        let other = session.open(&file(), &[]);
        session.close(other);
    }
    let mut expected = file();
    expected.values.0.insert("level".into(), json!(3));
    assert_eq!(session.file(pc).unwrap(), &expected);
    let mut fresh = Session::new(rules);
    let again = fresh.open(&expected, &[]);
    fresh.set_links(again, links).unwrap();
    assert_eq!(
        session.sheet_json(pc).unwrap(),
        fresh.sheet_json(again).unwrap()
    );
    let sheet = session.sheet_json(pc).unwrap();
    assert!(summary(&sheet).contains("c + core:magic"));
    assert_eq!(sheet["values"]["core:crew-id"]["value"], json!("crew-2"));
}

fn edit() -> impl proptest::strategy::Strategy<Value = Edit> {
    use proptest::prelude::*;
    let copy = prop::sample::select(vec!["c", "s", "b", "cls", "core-claws", "core-fist", "n"]);
    prop_oneof![
        prop::option::of(0i64..5).prop_map(|v| Edit::Value("core:level", v.map(|v| json!(v)))),
        prop::sample::select(vec!["core:druid", "core:beast-form", "core:club"]).prop_map(|item| {
            let list = if item == "core:club" {
                CopyList::Inventory
            } else {
                CopyList::Features
            };
            Edit::Add(list, json!({ "id": "n", "item": item }))
        }),
        copy.clone().prop_map(Edit::Remove),
        (copy.clone(), any::<bool>()).prop_map(|(c, on)| Edit::Equip(c, on)),
        prop::option::of(any::<bool>()).prop_map(|v| Edit::State(
            "b",
            "focus",
            v.map(|v| json!(v))
        )),
        prop::option::of(prop::sample::select(vec!["core:wild", "core:plain"]))
            .prop_map(|o| Edit::Pick("cls", "path", o)),
        any::<bool>().prop_map(|on| Edit::Applied(
            json!([{ "id": "r", "source": "core:rage", "active": on }])
        )),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    /// After any edits (those refused included), the session's sheet is a fresh session's sheet
    /// of the file it holds.
    #[test]
    fn any_edits_give_the_sheet_of_the_held_file(edits in proptest::collection::vec(edit(), 1..10)) {
        let rules = rules();
        let mut session = Session::new(rules.clone());
        let pc = session.open(&file(), &[]);
        for edit in &edits {
            // A refused edit (a copy removed before, a standard copy) leaves the file as it was.
            let before = session.file(pc).unwrap().clone();
            if try_apply(&mut session, pc, edit).is_err() {
                proptest::prop_assert_eq!(session.file(pc).unwrap(), &before);
            }
            session.sheet(pc).unwrap();
        }
        let mut fresh = Session::new(rules);
        let again = fresh.open(session.file(pc).unwrap(), &[]);
        proptest::prop_assert_eq!(session.sheet_json(pc).unwrap(), fresh.sheet_json(again).unwrap());
    }
}
