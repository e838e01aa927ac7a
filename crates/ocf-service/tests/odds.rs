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
