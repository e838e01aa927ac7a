//! Issue 43's command: `srd-wizard-20` casts Fireball from a 4th-level slot at the goblin, whose
//! Dexterity save the CLI runs on the goblin's own sheet against the wizard's spell save DC (19).

mod support;

use serde_json::Value as Json;

const FIREBALL: [&str; 10] = [
    "act",
    "testdata/characters/srd-wizard-20.yaml",
    "5e-srd-5.1:cast-spell",
    "--param",
    "spell=5e-srd-5.1:spells.fireball",
    "--param",
    "slotLevel=4",
    "--participant",
    "target=testdata/characters/goblin.yaml",
    "--seed",
];

fn fireball(seed: &str, json: bool) -> String {
    let mut args = FIREBALL.to_vec();
    args.push(seed);
    if json {
        args.push("--json");
    }
    let (text, code) = support::ocf(&args);
    assert_eq!(code, 0, "{text}");
    text
}

#[test]
fn the_srd_wizard_casts_fireball_from_a_4th_level_slot_at_the_goblin() {
    // The issue's exact command.
    let out: Json = serde_json::from_str(&fireball("1", true)).unwrap();
    assert_eq!(out["status"], "finished");
    assert_eq!(out["outcome"]["result"], "cast");
    let log = out["log"].as_array().unwrap();
    let save = log.iter().find(|l| l["step"] == "cast/saves[0]").unwrap();
    assert_eq!(save["kind"], "handoff");
    assert_eq!(save["participant"]["id"], "goblin-1");
    assert_eq!(save["outcome"]["result"], "failure");
    // 9d6 fire: 8d6 and 1d6 for the slot level above 3rd, in one dice item; and the School of
    // Evocation's Empowered Evocation (14th level): + the Intelligence modifier, 5.
    let roll = log.iter().find(|l| l["step"] == "cast/damageAll").unwrap();
    let items = roll["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{roll}");
    assert_eq!(
        (
            &items[1]["value"],
            &items[1]["source"]["id"],
            &items[1]["tags"]
        ),
        (
            &Json::from(5),
            &Json::from("5e-srd-5.1:features.evocation.empowered-evocation"),
            &serde_json::json!(["damage.fire"])
        )
    );
    assert_eq!(
        (&items[0]["count"], &items[0]["sides"]),
        (&Json::from(9), &Json::from(6))
    );
    assert_eq!(items[0]["tags"], serde_json::json!(["damage.fire"]));
    let total = roll["total"].as_i64().unwrap();
    assert_eq!(
        out["proposedChanges"],
        serde_json::json!([
            { "to": "self", "step": "cast/spend",
              "change": { "type": "adjust", "by": 1, "field": "5e-srd-5.1:spellSlots.level4.spent" } },
            { "to": "target", "character": "goblin-1", "step": "cast/dealAll[0]",
              "change": { "type": "adjust", "field": "5e-srd-5.1:hp.current", "by": -total,
                          "tags": ["damage", "damage.fire"] } },
        ])
    );
    // The goblin's own Dexterity save (+2) against DC 19: 17 fails (seed 1), 19 succeeds and
    // halves the damage (seed 8).
    let text = fireball("1", false);
    assert!(
        text.contains("cast/saves[0]: goblin-1 runs 5e-srd-5.1:saving-throw"),
        "{text}"
    );
    assert!(
        text.contains("+ 2 (5e-srd-5.1:saves.dex.mod) = 17 → failure"),
        "{text}"
    );
    let text = fireball("8", false);
    assert!(
        text.contains("+ 2 (5e-srd-5.1:saves.dex.mod) = 19 → success (Success: 19 or higher)"),
        "{text}"
    );
    let rolled: i64 = text
        .lines()
        .find_map(|l| l.strip_prefix("cast/damageAll: 9d6"))
        .and_then(|l| l.rsplit("= ").next())
        .and_then(|t| t.trim().parse().ok())
        .expect("the 9d6 roll");
    assert!(
        text.contains(&format!(
            r#"propose to target "goblin-1": {{"type":"adjust","field":"5e-srd-5.1:hp.current","by":{},"tags":["damage","damage.fire"]}}"#,
            -(rolled / 2)
        )),
        "{text}"
    );
}
