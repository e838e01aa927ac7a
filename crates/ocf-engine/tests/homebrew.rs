//! A character's homebrew in a long-running Session: `update` with a changed homebrew loads it as
//! `open` does (decisions.md, "`Session::open` loads the character's homebrew").

use expect_test::expect;
use ocf_engine::{CharacterId, Session};
use serde_json::{Value, json};

fn core() -> ocf_model::Ruleset {
    let core: ocf_model::PackRelease = serde_json::from_value(json!({
        "id": "core", "version": "1.0.0", "specVersion": "1.0.0",
        "rules": {
            "fields": {
                "ac": { "type": "integer", "default": 10 },
                "level": { "type": "integer", "input": true, "default": 1 },
            },
            "contentTypes": { "feature": {} },
        },
    }))
    .unwrap();
    ocf_load::load_ruleset(&[core], &Default::default()).unwrap()
}

/// A character owning `homebrew:charm`, whose homebrew makes the charm add `bonus` to `target`.
fn file(target: &str, bonus: i64, level: i64) -> ocf_model::Character {
    serde_json::from_value(json!({
        "id": "pc", "specVersion": "1.0.0", "packs": [{ "id": "core", "version": "1.0.0" }],
        "values": { "core:level": level },
        "homebrew": { "content": [{ "id": "charm", "type": "feature",
            "effects": [{ "target": target, "op": "add", "value": bonus }] }] },
        "features": [{ "id": "c", "item": "homebrew:charm" }],
    }))
    .unwrap()
}

/// `values` of the sheet as `field = value`, then its errors' codes.
fn sheet(session: &Session, id: CharacterId) -> String {
    let sheet = session.sheet_json(id).unwrap();
    let mut out = String::new();
    for (field, v) in sheet["values"].as_object().unwrap() {
        out.push_str(&format!("{field} = {}\n", v["value"]));
    }
    for error in sheet["errors"].as_array().unwrap() {
        out.push_str(&format!("error {}\n", error["code"]));
    }
    out
}

#[test]
fn update_loads_a_changed_homebrew() {
    let mut session = Session::new(core());
    let pc = session.open(&file("ac", 1, 1), &[]);
    let other = session.open(&file("ac", 5, 2), &[]);
    let other_input = session.character_input(other);
    let original = expect![[r#"
        core:ac = 11
        core:level = 1
    "#]];
    original.assert_eq(&sheet(&session, pc));

    // An edit that leaves the homebrew as it was updates the character in place.
    let before = session.character_input(pc);
    session.update(pc, &file("ac", 1, 3)).unwrap();
    assert_eq!(session.character_input(pc), before);
    expect![[r#"
        core:ac = 11
        core:level = 3
    "#]]
    .assert_eq(&sheet(&session, pc));

    // A different homebrew: its new values, with the file's edits.
    session.update(pc, &file("ac", 3, 3)).unwrap();
    expect![[r#"
        core:ac = 13
        core:level = 3
    "#]]
    .assert_eq(&sheet(&session, pc));
    assert!(session.homebrew_errors(pc).is_empty());

    // A broken one: empty values and its homebrew-errors, as `open` gives.
    session.update(pc, &file("nowhere", 3, 3)).unwrap();
    expect![[r#"
        error "homebrew-error"
    "#]]
    .assert_eq(&sheet(&session, pc));
    assert!(!session.homebrew_errors(pc).is_empty());

    // Back to the original: its values again, and no errors.
    session.update(pc, &file("ac", 1, 1)).unwrap();
    original.assert_eq(&sheet(&session, pc));
    assert!(session.homebrew_errors(pc).is_empty());

    // The other character was never touched.
    assert_eq!(session.character_input(other), other_input);
    expect![[r#"
        core:ac = 15
        core:level = 2
    "#]]
    .assert_eq(&sheet(&session, other));
}

#[test]
fn homebrew_updates_stay_bounded_and_survive_rebuilds() {
    // Each reload frees the character's inputs (and its homebrew ruleset's) for the next one, as
    // a close does, and every character stays on its own homebrew. Each round's homebrew has a
    // formula text new to the session: its parse lives in that homebrew's ruleset, and goes with
    // it (issue 19), so nothing of an earlier round stays.
    let mut session = Session::new(core());
    let pc = session.open(&file("ac", 1, 1), &[]);
    let other = session.open(&file("ac", 5, 2), &[]);
    let cycle = ocf_engine::session::TRIM_AFTER_CLOSED as i64;
    let (mut peaks, mut peak) = (Vec::new(), 0);
    for round in 0..4 * cycle {
        session.update(pc, &file("ac", round, 1)).unwrap();
        let ac: Value = session.sheet_json(pc).unwrap()["values"]["core:ac"]["value"].clone();
        assert_eq!(ac, json!(10 + round));
        let stored = session.stored();
        peak = peak.max(stored);
        if round % cycle == cycle - 1 {
            peaks.push(std::mem::take(&mut peak));
        }
    }
    // Without reusing the inputs each cycle would hold every earlier cycle's inputs too.
    assert!(peaks[1..].iter().all(|p| *p <= peaks[0]), "{peaks:?}");
    let last = 4 * cycle - 1;
    // Unchanged since the last reload: still on that homebrew after the rebuilds.
    session.update(pc, &file("ac", last, 4)).unwrap();
    expect![[r#"
        core:ac = 73
        core:level = 4
    "#]]
    .assert_eq(&sheet(&session, pc));
    expect![[r#"
        core:ac = 15
        core:level = 2
    "#]]
    .assert_eq(&sheet(&session, other));
}
