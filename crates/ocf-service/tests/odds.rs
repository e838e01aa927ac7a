//! `POST /api/characters/{id}/odds` (issue 45) over loopback: the odds of the stored fighter's
//! longsword attack on a goblin, and a refusal with its code.

mod support;

use ocf_service::Limits;
use serde_json::json;
use support::*;

#[test]
fn the_odds_of_a_stored_characters_attack_are_answered_and_nothing_is_stored() {
    let dir = temp_dir("odds");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");
    // +8 against AC 15: 1-6 miss, 7-18 hit, 19-20 critical (Improved Critical).
    let body = json!({
        "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" },
        "participants": { "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 15 } }] },
    });
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/aldric/odds",
        Some(&body.to_string()),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["revision"], 1);
    let results = &answer["odds"]["results"];
    assert_eq!(
        (&results["miss"], &results["hit"], &results["critical"]),
        (&json!(0.3), &json!(0.6), &json!(0.1))
    );
    let damage = &answer["odds"]["changes"][0];
    assert_eq!(damage["character"], "goblin");
    assert!(
        (damage["mean"].as_f64().unwrap() + 7.1).abs() < 1e-12,
        "{damage}"
    );

    let bad = json!({ "action": { "id": "5e-srd-5.1:no-such-action" } });
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/aldric/odds",
        Some(&bad.to_string()),
    );
    assert_eq!(status, 422, "{answer}");
    assert_eq!(codes(&answer), vec!["unknown-action"]);
}

/// Dueling's +2 damage, tried on a copy: the longsword's expected damage rises by 2 on a hit and
/// 2 on a critical (60 % + 10 %: +1.4), and nothing is stored. A batch the engine refuses is its
/// code at `/trial`.
#[test]
fn trial_changes_give_the_odds_after_a_pick_and_store_nothing() {
    let dir = temp_dir("odds-trial");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "aldric");
    let attack = json!({
        "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" },
        "participants": { "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 15 } }] },
    });
    let mean = |answer: &serde_json::Value| answer["odds"]["changes"][0]["mean"].as_f64().unwrap();
    let (_, before) = request(
        addr,
        "POST",
        "/api/characters/aldric/odds",
        Some(&attack.to_string()),
    );
    let path = json!({ "entry": "fighter", "choice": ["features.fighter.fighting-style/style"] });
    let mut trial = attack.clone();
    trial["trial"] = json!([
        { "type": "unchoose", "path": path, "option": "'defense'" },
        { "type": "choose", "path": path, "option": "'dueling'" },
    ]);
    let (status, after) = request(
        addr,
        "POST",
        "/api/characters/aldric/odds",
        Some(&trial.to_string()),
    );
    assert_eq!(status, 200, "{after}");
    assert!(
        (mean(&after) - (mean(&before) - 1.4)).abs() < 1e-9,
        "{before} → {after}"
    );
    let (_, file) = request(addr, "GET", "/api/characters/aldric", None);
    assert_eq!(file["revision"], 1, "nothing stored");

    let mut refused = attack.clone();
    refused["trial"] = json!([{ "type": "adjust", "field": "no.such.field", "by": "1" }]);
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/aldric/odds",
        Some(&refused.to_string()),
    );
    assert_eq!(status, 422, "{answer}");
    assert!(
        answer["errors"][0]["path"]
            .as_str()
            .unwrap()
            .starts_with("/trial"),
        "{answer}"
    );
}

/// A handoff (the target's own Dexterity save against Fire Breath-like damage) runs on the
/// target's stored character: the caster's Fireball against the stored fighter.
#[test]
fn a_handoff_runs_on_the_participants_stored_character() {
    let dir = temp_dir("odds-handoff");
    let addr = start(&dir.join("store.sqlite3"), Limits::default());
    post_fighter(addr, "brute");
    let mut wizard: serde_json::Value = serde_yaml::from_str(
        &std::fs::read_to_string(repo().join("testdata/characters/srd-wizard-5.yaml")).unwrap(),
    )
    .unwrap();
    wizard["choices"]["5e-srd-5.1:spells-wizard"] =
        json!([{ "option": "5e-srd-5.1:spells.fireball" }]);
    let body = json!({ "id": "orrin", "character": wizard }).to_string();
    assert_eq!(request(addr, "POST", "/api/characters", Some(&body)).0, 200);
    let (_, sheet) = request(addr, "GET", "/api/characters/brute/sheet", None);
    let ac = &sheet["sheet"]["values"]["5e-srd-5.1:combat.ac"]["value"];
    let fireball = json!({
        "action": { "id": "5e-srd-5.1:cast-spell" },
        "params": { "spell": "5e-srd-5.1:spells.fireball", "slotLevel": 3 },
        "participants": { "target": [{ "id": "brute", "values": { "5e-srd-5.1:combat.ac": ac } }] },
    });
    let (status, answer) = request(
        addr,
        "POST",
        "/api/characters/orrin/odds",
        Some(&fireball.to_string()),
    );
    assert_eq!(status, 200, "{answer}");
    // DC 14 (8 + 3 + Int +3) against the fighter's Dexterity save +2: 12 or more saves, 45 %.
    let saves = &answer["odds"]["participants"]["target"][0];
    assert_eq!(saves["id"], "brute");
    assert!(
        (saves["results"]["success"].as_f64().unwrap() - 0.45).abs() < 1e-12,
        "{saves}"
    );
}
