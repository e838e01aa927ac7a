//! The service over loopback, as an app uses it: a SQLite store in a temporary folder, the 5E pack,
//! requests by plain HTTP/1.1.

mod support;

use ocf_service::Limits;
use serde_json::{Value, json};
use support::*;

#[test]
fn a_character_is_stored_read_and_edited_and_an_edit_answers_only_what_changed() {
    let dir = temp_dir("edit");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    let made = post_fighter(addr, "aldric");
    assert_eq!(made["revision"], 1);
    assert_eq!(
        made["sheet"]["values"]["5e-srd-5.1:hp.current"]["value"],
        44
    );
    assert_eq!(made["inputs"]["5e-srd-5.1:hp.current"]["type"], "integer");
    assert!(made["inputs"].get("5e-srd-5.1:combat.ac").is_none());

    let (status, list) = request(addr, "GET", "/api/characters", None);
    assert_eq!(status, 200);
    assert_eq!(
        list,
        json!([{ "id": "aldric", "revision": 1, "open": true, "owner": null, "shared": false, "name": null }])
    );

    // A Constitution edit changes the score, its modifier and what reads them, nothing else.
    let (status, edited) = set(addr, "aldric", "abilities.con.score", 1, json!(16));
    assert_eq!(status, 200, "{edited}");
    assert_eq!(edited["revision"], 2);
    let changed: Vec<&String> = edited["changes"]["values"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert!(
        changed.contains(&&"5e-srd-5.1:abilities.con.score".to_owned()),
        "{changed:?}"
    );
    assert!(
        changed.contains(&&"5e-srd-5.1:abilities.con.mod".to_owned()),
        "{changed:?}"
    );
    assert!(
        !changed.iter().any(|f| f.contains("abilities.str")),
        "{changed:?}"
    );

    let (status, field) = request(
        addr,
        "GET",
        "/api/characters/aldric/fields/abilities.con.score",
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(field["field"], "5e-srd-5.1:abilities.con.score");
    assert_eq!(field["revision"], 2);
    let (_, file) = request(addr, "GET", "/api/characters/aldric", None);
    assert_eq!(
        file["character"]["values"]["5e-srd-5.1:abilities.con.score"],
        16
    );
}

#[test]
fn a_stale_or_wrong_write_is_refused_with_its_code_and_changes_nothing() {
    let dir = temp_dir("refused");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");
    assert_eq!(set(addr, "aldric", "hp.current", 1, json!(30)).0, 200);

    let (status, answer) = set(addr, "aldric", "hp.current", 1, json!(20));
    assert_eq!(
        (status, codes(&answer)),
        (409, vec!["conflict"]),
        "{answer}"
    );
    assert_eq!(answer["errors"][0]["data"]["revision"], 2);

    let (status, answer) = set(addr, "aldric", "combat.ac", 2, json!(25));
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["not-input-field"]),
        "{answer}"
    );
    let (status, answer) = set(addr, "aldric", "hp.current", 2, json!("lots"));
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["wrong-type"]),
        "{answer}"
    );

    let (_, sheet) = request(addr, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(sheet["revision"], 2);
    assert_eq!(
        sheet["sheet"]["values"]["5e-srd-5.1:hp.current"]["value"],
        30
    );
    assert_eq!(sheet["sheet"]["errors"], json!([]));

    let (status, answer) = request(
        addr,
        "PUT",
        "/api/characters/aldric/values/hp.current",
        Some("{not json"),
    );
    assert_eq!((status, codes(&answer)), (400, vec!["invalid-request"]));
    let (status, answer) = request(
        addr,
        "PUT",
        "/api/characters/aldric/values/hp.current",
        Some(r#"{"value":3}"#),
    );
    assert_eq!((status, codes(&answer)), (400, vec!["missing-revision"]));
    let (status, answer) = request(addr, "GET", "/api/characters/nobody/sheet", None);
    assert_eq!((status, codes(&answer)), (404, vec!["not-found"]));
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters",
        Some(r#"{"character": "id: [unclosed"}"#),
    );
    assert_eq!(status, 422, "{answer}");
    assert_eq!(
        answer["errors"][0]["path"]
            .as_str()
            .map(|p| p.starts_with("/character")),
        Some(true)
    );
    let text = std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap();
    let body = json!({ "id": "aldric", "character": text }).to_string();
    let (status, answer) = request(addr, "POST", "/api/characters", Some(&body));
    assert_eq!((status, codes(&answer)), (409, vec!["duplicate-id"]));
}

#[test]
fn a_request_larger_than_the_limit_is_refused() {
    let dir = temp_dir("large");
    let limits = Limits {
        max_body_bytes: 1000,
        ..Limits::default()
    };
    let addr = start(&dir.join("store.sqlite3"), limits);
    let body = json!({ "character": "x".repeat(5000) }).to_string();
    let (status, answer) = request(addr, "POST", "/api/characters", Some(&body));
    assert_eq!(
        (status, codes(&answer)),
        (413, vec!["payload-too-large"]),
        "{answer}"
    );
}

#[test]
fn a_restart_loses_nothing_and_two_instances_over_one_store_never_overwrite_each_other() {
    let dir = temp_dir("instances");
    let db = dir.join("store.sqlite3");
    let a = start(&db, Limits::default());
    post_fighter(a, "aldric");
    assert_eq!(set(a, "aldric", "hp.current", 1, json!(12)).0, 200);

    // A second instance over the same file: what the first wrote is there.
    let b = start(&db, Limits::default());
    let (_, sheet) = request(b, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(sheet["revision"], 2);
    assert_eq!(
        sheet["sheet"]["values"]["5e-srd-5.1:hp.current"]["value"],
        12
    );

    // B writes; A, which has the character open at revision 2, sees B's write on its next read,
    // and a write A's client made against revision 2 is refused.
    assert_eq!(set(b, "aldric", "hp.current", 2, json!(7)).0, 200);
    let (status, answer) = set(a, "aldric", "hp.current", 2, json!(40));
    assert_eq!(
        (status, codes(&answer)),
        (409, vec!["conflict"]),
        "{answer}"
    );
    let (_, sheet) = request(a, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(sheet["revision"], 3);
    assert_eq!(
        sheet["sheet"]["values"]["5e-srd-5.1:hp.current"]["value"],
        7
    );
}

#[test]
fn subscribers_are_pushed_only_what_changed() {
    let dir = temp_dir("events");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");
    let mut events = Events::open(addr, "aldric");
    let mut next_event = || events.next();
    let (kind, first) = next_event();
    assert_eq!(kind, "sheet");
    assert_eq!(first["revision"], 1);
    assert_eq!(set(addr, "aldric", "hp.current", 1, json!(9)).0, 200);
    let (kind, changed) = next_event();
    assert_eq!(kind, "changed");
    assert_eq!(changed["revision"], 2);
    assert_eq!(
        changed["values"],
        json!({ "5e-srd-5.1:hp.current": { "value": 9, "base": 9, "breakdown": [], "tags": [] } })
    );
    assert_eq!(changed["parts"], json!({}));
}

#[test]
fn open_characters_are_bounded_and_a_closed_one_reopens_from_the_store() {
    let dir = temp_dir("bounded");
    let limits = Limits {
        max_open: 1,
        ..Limits::default()
    };
    let addr = start(&dir.join("store.sqlite3"), limits);
    post_fighter(addr, "one");
    post_fighter(addr, "two");
    let (_, list) = request(addr, "GET", "/api/characters", None);
    assert_eq!(
        list,
        json!([
            { "id": "one", "revision": 1, "open": false, "owner": null, "shared": false, "name": null },
            { "id": "two", "revision": 1, "open": true, "owner": null, "shared": false, "name": null }
        ])
    );
    let (status, sheet) = request(addr, "GET", "/api/characters/one/sheet", None);
    assert_eq!(status, 200);
    assert_eq!(
        sheet["sheet"]["values"]["5e-srd-5.1:hp.current"]["value"],
        44
    );
    let (status, closed) = request(addr, "POST", "/api/characters/one/close", None);
    assert_eq!((status, closed["closed"].clone()), (200, json!(true)));
}

#[test]
fn the_web_editor_is_served() {
    let dir = temp_dir("web");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    let (status, page) = request(addr, "GET", "/", None);
    assert_eq!(status, 200);
    assert!(
        page.as_str()
            .unwrap()
            .contains("<script src=\"/sheet.js\">")
    );
    let (status, script) = request(addr, "GET", "/sheet.js", None);
    assert_eq!(status, 200);
    assert!(script.as_str().unwrap().contains("EventSource"));
}

#[test]
fn a_choice_is_listed_and_an_action_pauses_and_is_continued_from_its_plain_state() {
    let dir = temp_dir("options-actions");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");

    // The fighting style: Defense is picked, and every other style would lose its +1 AC.
    let body = json!({ "path": { "entry": "fighter", "choice": ["features.fighter.fighting-style/style"] } });
    let (status, listed) = request(
        addr,
        "POST",
        "/api/characters/aldric/options",
        Some(&body.to_string()),
    );
    assert_eq!(status, 200, "{listed}");
    let options = listed["options"]["options"].as_array().unwrap();
    let defense = options.iter().find(|o| o["picked"] == json!(true)).unwrap();
    assert!(
        defense["option"].to_string().contains("defense"),
        "{defense}"
    );
    let other = options
        .iter()
        .find(|o| o["picked"] == json!(false))
        .unwrap();
    let ac = other["changes"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["field"] == "5e-srd-5.1:combat.ac")
        .unwrap();
    assert_eq!(
        (ac["before"]["value"].clone(), ac["after"]["value"].clone()),
        (json!(19), json!(18))
    );
    let bad = json!({ "path": { "entry": "fighter", "choice": ["nope"] } });
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/aldric/options",
        Some(&bad.to_string()),
    );
    assert_eq!(status, 422, "{answer}");
    assert_eq!(codes(&answer), vec!["unknown-choice"]);

    // A longsword attack on a goblin, every roll paused for the player's dice; the state goes back
    // as plain JSON, as another instance would get it.
    let start = json!({
        "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" },
        "participants": { "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 15 } }] },
        "policy": { "dice": "pause" },
    });
    let (status, paused) = request(
        addr,
        "POST",
        "/api/characters/aldric/actions",
        Some(&start.to_string()),
    );
    assert_eq!(status, 200, "{paused}");
    assert_eq!(paused["result"]["status"], "paused");
    let mut state = paused["result"]["state"].clone();
    for faces in [json!([19]), json!([3, 8])] {
        let body = json!({ "state": state, "answer": { "faces": faces } }).to_string();
        let (status, next) = request(
            addr,
            "POST",
            "/api/characters/aldric/actions/continue",
            Some(&body),
        );
        assert_eq!(status, 200, "{next}");
        state = next["result"].clone();
        if next["result"]["status"] == "paused" {
            state = next["result"]["state"].clone();
        }
    }
    assert_eq!(state["status"], "finished", "{state}");
    assert_eq!(state["outcome"]["result"], "critical");
    assert_eq!(state["proposedChanges"][0]["change"]["by"], -16);

    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/aldric/actions",
        Some(&json!({ "action": { "id": "5e-srd-5.1:nope" } }).to_string()),
    );
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["unknown-action"]),
        "{answer}"
    );
}

#[test]
fn a_batch_of_changes_is_one_atomic_write() {
    let dir = temp_dir("apply");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");

    // Fire damage after 5 temporary hit points: they absorb 5 of the 12, the rest comes off hp.
    let batch = json!({
        "revision": 1,
        "changes": [
            { "type": "set", "field": "hp.temp", "value": "5" },
            { "type": "adjust", "field": "hp.current", "by": "-12", "tags": ["damage", "damage.fire"] },
        ],
    });
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/aldric/changes",
        Some(&batch.to_string()),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["revision"], 2);
    assert_eq!(
        answer["changes"]["values"]["5e-srd-5.1:hp.current"]["value"],
        37
    );
    // The temporary hit points are back at 0 after absorbing: not a change.
    assert!(
        answer["changes"]["values"]
            .get("5e-srd-5.1:hp.temp")
            .is_none()
    );
    assert!(answer["applied"].is_object(), "{answer}");

    // A batch whose second change fails changes nothing, and says which change and why.
    let batch = json!({
        "revision": 2,
        "changes": [
            { "type": "adjust", "field": "hp.current", "by": "-3" },
            { "type": "removeItem", "entry": "no-such-copy" },
        ],
    });
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/aldric/changes",
        Some(&batch.to_string()),
    );
    assert_eq!(status, 422, "{answer}");
    assert!(
        answer["errors"][0]["path"]
            .as_str()
            .unwrap()
            .starts_with("/changes/1"),
        "{answer}"
    );
    let (_, sheet) = request(addr, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(sheet["revision"], 2);
    assert_eq!(
        sheet["sheet"]["values"]["5e-srd-5.1:hp.current"]["value"],
        37
    );
}

/// Lowering Constitution at full hit points lowers `hp.max` below the saved `hp.current`: that is
/// the sheet's `out-of-range` error, reported and clamped (EC "Round and clamp"), not a refusal of
/// the edit, whose own value is fine; the app then brings `hp.current` down (issue 36). The same
/// through a batch.
#[test]
fn an_edit_that_puts_another_field_out_of_range_is_made_and_reported() {
    let dir = temp_dir("bounds");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");
    let (status, answer) = set(addr, "aldric", "abilities.con.score", 1, json!(10));
    assert_eq!(status, 200, "{answer}");
    let (_, sheet) = request(addr, "GET", "/api/characters/aldric/sheet", None);
    let errors = &sheet["sheet"]["errors"];
    assert_eq!(codes(&json!({ "errors": errors })), vec!["out-of-range"]);
    assert_eq!(errors[0]["path"], "/values/5e-srd-5.1:hp.current");
    let max = sheet["sheet"]["values"]["5e-srd-5.1:hp.max"]["value"].clone();
    assert_eq!(
        sheet["sheet"]["values"]["5e-srd-5.1:hp.current"]["value"],
        max
    );
    let (status, answer) = set(addr, "aldric", "hp.current", 2, max);
    assert_eq!(status, 200, "{answer}");
    let (_, sheet) = request(addr, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(sheet["sheet"]["errors"], json!([]));
    // The edited value's own error still refuses it.
    let (status, answer) = set(addr, "aldric", "hp.current", 3, json!(999));
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["out-of-range"]),
        "{answer}"
    );

    post_fighter(addr, "brienne");
    let batch = json!({
        "revision": 1,
        "changes": [{ "type": "set", "field": "abilities.con.score", "value": "10" }],
    });
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/brienne/changes",
        Some(&batch.to_string()),
    );
    assert_eq!(status, 200, "{answer}");
}

#[test]
fn a_character_that_costs_too_much_to_open_is_refused_before_it_is_stored() {
    let dir = temp_dir("cost");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    let text = std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap();
    let fighter = ocf_service::app::read_character(&Value::String(text), "").unwrap();
    let mut character = serde_json::to_value(&fighter).unwrap();
    for i in 0..1001 {
        character["values"][format!("nowhere:unknown-{i}")] = json!(i);
    }
    let body = json!({ "id": "costly", "character": character }).to_string();
    let (status, answer) = request(addr, "POST", "/api/characters", Some(&body));
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["safety-limit-exceeded"]),
        "{answer}"
    );
    assert_eq!(answer["errors"][0]["path"], "/character/values");
    assert_eq!(
        answer["errors"][0]["data"],
        json!({ "limit": 1000, "value": 1001 })
    );
    let (status, _) = request(addr, "GET", "/api/characters/costly", None);
    assert_eq!(status, 404);

    // A replace is held to the same bounds, and the stored file stays as it was.
    post_fighter(addr, "aldric");
    let body = json!({ "revision": 1, "character": character }).to_string();
    let (status, answer) = request(addr, "PUT", "/api/characters/aldric", Some(&body));
    assert_eq!(
        (status, codes(&answer)),
        (422, vec!["safety-limit-exceeded"]),
        "{answer}"
    );
    let (_, file) = request(addr, "GET", "/api/characters/aldric", None);
    assert_eq!(file["revision"], 1);
}

/// A write tells only what it changed (the engine's report of it), and the sheet the service keeps
/// for reads is patched with that: after edits, a refused edit, a batch and an undo, the sheet read
/// is the one the stored file computes afresh (the character closed and opened again), and every
/// write's `changes` patched onto the first sheet gives it too.
#[test]
fn the_sheet_kept_across_writes_is_the_one_the_stored_file_computes() {
    let dir = temp_dir("kept");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    let made = post_fighter(addr, "aldric");
    let mut patched = made["sheet"].clone();
    let mut patch = |answer: &Value| {
        let changes = &answer["changes"];
        let sheet = patched.as_object_mut().unwrap();
        for (field, value) in changes["values"].as_object().unwrap() {
            sheet["values"][field] = value.clone();
        }
        for field in changes["removed"].as_array().unwrap() {
            sheet["values"]
                .as_object_mut()
                .unwrap()
                .shift_remove(field.as_str().unwrap());
        }
        for (part, value) in changes["parts"].as_object().unwrap() {
            sheet.insert(part.clone(), value.clone());
        }
    };
    let (status, answer) = set(addr, "aldric", "abilities.con.score", 1, json!(10));
    assert_eq!(status, 200, "{answer}");
    patch(&answer);
    // Refused: its own value is out of range (read as 30, the bound, while it was tried).
    assert_eq!(
        set(addr, "aldric", "abilities.str.score", 2, json!(99)).0,
        422
    );
    let (status, answer) = set(addr, "aldric", "hp.current", 2, json!(20));
    assert_eq!(status, 200, "{answer}");
    patch(&answer);
    let batch = json!({
        "revision": 3,
        "changes": [
            { "type": "set", "field": "hp.temp", "value": "5" },
            { "type": "adjust", "field": "hp.current", "by": "-12" },
        ],
    });
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/aldric/changes",
        Some(&batch.to_string()),
    );
    assert_eq!(status, 200, "{answer}");
    patch(&answer);
    // What the refused edit computed, made for real: told against the sheet before it.
    let (status, answer) = set(addr, "aldric", "abilities.str.score", 4, json!(30));
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer["changes"]["values"]
            .get("5e-srd-5.1:abilities.str.mod")
            .is_some(),
        "{answer}"
    );
    patch(&answer);
    let (status, answer) = set(addr, "aldric", "abilities.str.score", 5, json!(8));
    assert_eq!(status, 200, "{answer}");
    patch(&answer);
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/aldric/undo",
        Some(r#"{"revision":6}"#),
    );
    assert_eq!(status, 200, "{answer}");
    patch(&answer);

    let (_, kept) = request(addr, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(kept["revision"], 7);
    let (status, _) = request(addr, "POST", "/api/characters/aldric/close", Some("{}"));
    assert_eq!(status, 200);
    let (_, fresh) = request(addr, "GET", "/api/characters/aldric/sheet", None);
    assert_eq!(fresh["revision"], 7);
    assert_eq!(kept["sheet"], fresh["sheet"]);
    assert_eq!(patched, fresh["sheet"]);
}
