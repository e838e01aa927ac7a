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

/// A scratch folder for `--apply`'s written files, with copies of the sample characters (a
/// participant's file is written over too).
fn scratch(name: &str, files: &[&str]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ocf-act-spells-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in files {
        std::fs::copy(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../testdata/characters")
                .join(f),
            dir.join(std::path::Path::new(f).file_name().unwrap()),
        )
        .unwrap();
    }
    dir
}

fn act_json(args: &[&str]) -> Json {
    let mut args = args.to_vec();
    args.push("--json");
    let (text, code) = support::ocf(&args);
    assert_eq!(code, 0, "{text}");
    serde_json::from_str(&text).unwrap()
}

fn proposed_to_self(out: &Json) -> Vec<Json> {
    out["proposedChanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["to"] == "self")
        .map(|c| c["change"].clone())
        .collect()
}

/// SRD "Infernal Legacy": "Once you reach 3rd level, you can cast the hellish rebuke spell as a
/// 2nd-level spell once with this trait and regain the ability to do so when you finish a long
/// rest. Once you reach 5th level, you can also cast the darkness spell once with this trait ...
/// Charisma is your spellcasting ability for these spells." `srd-tiefling-wizard-5` (Int 17, Cha
/// 14, proficiency +3) casts hellish rebuke through its species copy: no slot, 3d10 fire, the
/// goblin's Dexterity save against DC 13 (Charisma), not the wizard's 14; the use is spent, a
/// second cast is refused, a long rest gives it back. Darkness likewise; thaumaturgy at will.
#[test]
fn the_tiefling_casts_infernal_legacy_once_per_long_rest_with_charisma() {
    let dir = scratch("tiefling", &["srd-tiefling-wizard-5.yaml", "goblin.yaml"]);
    let me = dir.join("srd-tiefling-wizard-5.yaml");
    let me = me.to_str().unwrap();
    let goblin = format!("target={}", dir.join("goblin.yaml").display());
    let rebuke = |file: &str, extra: &[&str]| {
        let mut args = vec![
            "act",
            file,
            "5e-srd-5.1:cast-spell",
            "--param",
            "spell=5e-srd-5.1:spells.hellish-rebuke",
            "--param",
            "entry=tiefling",
            "--participant",
            &goblin,
            "--seed",
            "1",
        ];
        args.extend_from_slice(extra);
        act_json(&args)
    };
    let out = rebuke(me, &[]);
    assert_eq!(out["outcome"]["result"], "cast", "{out}");
    let log = out["log"].as_array().unwrap();
    let save = log
        .iter()
        .find(|l| l["step"] == "granted/saves[0]")
        .unwrap();
    assert_eq!(save["kind"], "handoff");
    // The goblin's own Dexterity save against DC 13 (the text shows the band's condition).
    let (text, code) = support::ocf(&[
        "act",
        me,
        "5e-srd-5.1:cast-spell",
        "--param",
        "spell=5e-srd-5.1:spells.hellish-rebuke",
        "--param",
        "entry=tiefling",
        "--participant",
        &goblin,
        "--seed",
        "1",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("+ 2 (5e-srd-5.1:saves.dex.mod) = 17 → success (Success: 13 or higher)"),
        "{text}"
    );
    let roll = log
        .iter()
        .find(|l| l["step"] == "granted/damageAll")
        .unwrap();
    let items = roll["items"].as_array().unwrap();
    assert_eq!(
        (&items[0]["count"], &items[0]["sides"], &items[0]["tags"]),
        (
            &Json::from(3),
            &Json::from(10),
            &serde_json::json!(["damage.fire"])
        ),
        "{roll}"
    );
    assert_eq!(
        proposed_to_self(&out),
        [
            serde_json::json!({ "type": "adjust", "field": "5e-srd-5.1:infernalLegacy.hellishRebuke.spent", "by": 1 })
        ]
    );
    // From a slot through the trait: no (the trait casts once, without one).
    let slot = rebuke(me, &["--param", "slotLevel=2"]);
    assert_eq!(slot["outcome"]["result"], "no-slot", "{slot}");
    // Applied: the use is spent, a second cast is refused.
    let (text, code) = support::ocf(&[
        "act",
        me,
        "5e-srd-5.1:cast-spell",
        "--param",
        "spell=5e-srd-5.1:spells.hellish-rebuke",
        "--param",
        "entry=tiefling",
        "--participant",
        &goblin,
        "--seed",
        "1",
        "--apply",
    ]);
    assert_eq!(code, 0, "{text}");
    let saved = std::fs::read_to_string(me).unwrap();
    assert!(
        saved.contains("5e-srd-5.1:infernalLegacy.hellishRebuke.spent: 1"),
        "{saved}"
    );
    let again = rebuke(me, &[]);
    assert_eq!(again["outcome"]["result"], "no-slot", "{again}");
    // Darkness: its own use, once.
    let darkness = |file: &str| {
        act_json(&[
            "act",
            file,
            "5e-srd-5.1:cast-spell",
            "--param",
            "spell=5e-srd-5.1:spells.darkness",
            "--param",
            "entry=tiefling",
            "--seed",
            "1",
        ])
    };
    let out = darkness(me);
    assert_eq!(out["outcome"]["result"], "cast", "{out}");
    assert!(
        proposed_to_self(&out).contains(&serde_json::json!({ "type": "adjust", "field": "5e-srd-5.1:infernalLegacy.darkness.spent", "by": 1 })),
        "{out}"
    );
    // Thaumaturgy: a cantrip, at will, nothing spent.
    let out = act_json(&[
        "act",
        me,
        "5e-srd-5.1:cast-spell",
        "--param",
        "spell=5e-srd-5.1:spells.thaumaturgy",
        "--param",
        "entry=tiefling",
        "--seed",
        "1",
    ]);
    assert_eq!(out["outcome"]["result"], "cast", "{out}");
    assert_eq!(proposed_to_self(&out), Vec::<Json>::new());
    // A long rest gives the use back.
    let (text, code) = support::ocf(&["act", me, "5e-srd-5.1:long-rest", "--seed", "1", "--apply"]);
    assert_eq!(code, 0, "{text}");
    let saved = std::fs::read_to_string(me).unwrap();
    assert!(
        saved.contains("5e-srd-5.1:infernalLegacy.hellishRebuke.spent: 0"),
        "{saved}"
    );
    let out = rebuke(me, &[]);
    assert_eq!(out["outcome"]["result"], "cast", "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// SRD "High Elf", Cantrip: "You know one cantrip of your choice from the wizard spell list.
/// Intelligence is your spellcasting ability for it." `srd-high-elf-cleric-5` (Int 13, Wis 17,
/// proficiency +3) casts its fire bolt with a spell attack of +4 (Intelligence), not the
/// cleric's +6: 2d10 fire at 5th level, nothing spent.
#[test]
fn the_high_elf_casts_its_cantrip_with_intelligence() {
    let out = act_json(&[
        "act",
        "testdata/characters/srd-high-elf-cleric-5.yaml",
        "5e-srd-5.1:cast-spell",
        "--param",
        "spell=5e-srd-5.1:spells.fire-bolt",
        "--param",
        "entry=elf",
        "--participant",
        "target=testdata/characters/goblin.yaml",
        "--seed",
        "3",
    ]);
    assert_eq!(out["status"], "finished", "{out}");
    let log = out["log"].as_array().unwrap();
    let attack = log
        .iter()
        .find(|l| l["step"] == "granted/attack[0]")
        .unwrap();
    let items = attack["items"].as_array().unwrap();
    assert_eq!(
        (&items[1]["source"]["id"], &items[1]["value"]),
        (
            &Json::from("5e-srd-5.1:spellcasting.species.attack"),
            &Json::from(4)
        ),
        "{attack}"
    );
    if let Some(damage) = log.iter().find(|l| l["step"] == "granted/damage[0]") {
        let d = &damage["items"][0];
        assert_eq!(
            (&d["count"], &d["sides"]),
            (&Json::from(2), &Json::from(10))
        );
    }
    assert_eq!(proposed_to_self(&out), Vec::<Json>::new());
}
