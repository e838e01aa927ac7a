//! The SRD 5.1 subclasses' always-prepared spells in the bundled 5E pack (issue 42): the Life
//! Domain's domain spells, each Circle of the Land's circle spells and the Oath of Devotion's oath
//! spells are granted by the subclass's feature at the class levels the SRD gives, so the
//! character holds them without a pick of its class's spell choice and `cast-spell` casts them
//! (with the class copy as their entry). The Fiend's expanded spells join the warlock's choice.

use std::collections::BTreeSet;

mod srd;

use ocf_actions::{Limits, StartInput};
use ocf_dice::{DiceError, DiceFunction, FaceRequest};
use serde_json::{Value as Json, json};
use srd::{PACK, root, ruleset};

/// Faces in order, then each die's lowest.
struct Faces(Vec<i64>);

impl DiceFunction for Faces {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        Ok(if self.0.is_empty() {
            request.die.face_range().0
        } else {
            self.0.remove(0)
        })
    }
}

/// The SRD's subclass spell tables: (class level, the two spells gained).
const LIFE: [(u32, [&str; 2]); 5] = [
    (1, ["bless", "cure-wounds"]),
    (3, ["lesser-restoration", "spiritual-weapon"]),
    (5, ["beacon-of-hope", "revivify"]),
    (7, ["death-ward", "guardian-of-faith"]),
    (9, ["mass-cure-wounds", "raise-dead"]),
];
const DEVOTION: [(u32, [&str; 2]); 5] = [
    (3, ["protection-from-evil-and-good", "sanctuary"]),
    (5, ["lesser-restoration", "zone-of-truth"]),
    (9, ["beacon-of-hope", "dispel-magic"]),
    (13, ["freedom-of-movement", "guardian-of-faith"]),
    (17, ["commune", "flame-strike"]),
];
/// Circle of the Land: each land's spells at druid levels 3, 5, 7 and 9.
const LANDS: [(&str, [[&str; 2]; 4]); 8] = [
    (
        "arctic",
        [
            ["hold-person", "spike-growth"],
            ["sleet-storm", "slow"],
            ["freedom-of-movement", "ice-storm"],
            ["commune-with-nature", "cone-of-cold"],
        ],
    ),
    (
        "coast",
        [
            ["mirror-image", "misty-step"],
            ["water-breathing", "water-walk"],
            ["control-water", "freedom-of-movement"],
            ["conjure-elemental", "scrying"],
        ],
    ),
    (
        "desert",
        [
            ["blur", "silence"],
            ["create-food-and-water", "protection-from-energy"],
            ["blight", "hallucinatory-terrain"],
            ["insect-plague", "wall-of-stone"],
        ],
    ),
    (
        "forest",
        [
            ["barkskin", "spider-climb"],
            ["call-lightning", "plant-growth"],
            ["divination", "freedom-of-movement"],
            ["commune-with-nature", "tree-stride"],
        ],
    ),
    (
        "grassland",
        [
            ["invisibility", "pass-without-trace"],
            ["daylight", "haste"],
            ["divination", "freedom-of-movement"],
            ["dream", "insect-plague"],
        ],
    ),
    (
        "mountain",
        [
            ["spider-climb", "spike-growth"],
            ["lightning-bolt", "meld-into-stone"],
            ["stone-shape", "stoneskin"],
            ["passwall", "wall-of-stone"],
        ],
    ),
    (
        "swamp",
        [
            ["darkness", "acid-arrow"],
            ["water-walk", "stinking-cloud"],
            ["freedom-of-movement", "locate-creature"],
            ["insect-plague", "scrying"],
        ],
    ),
    (
        "underdark",
        [
            ["spider-climb", "web"],
            ["gaseous-form", "stinking-cloud"],
            ["greater-invisibility", "stone-shape"],
            ["cloudkill", "insect-plague"],
        ],
    ),
];

/// A character of `class` at `level` with its subclass picked (`subclass` choice and option,
/// the option's nested picks), every ability 14.
fn character(class: &str, level: u32, subclass: Option<(&str, Json)>) -> ocf_model::Character {
    let mut values = serde_json::Map::new();
    for ab in ["str", "dex", "con", "int", "wis", "cha"] {
        values.insert(format!("{PACK}:abilities.{ab}.score"), json!(14));
    }
    let mut choices = serde_json::Map::new();
    if let Some((choice, pick)) = subclass {
        choices.insert(choice.to_owned(), json!([pick]));
    }
    serde_json::from_value(json!({
        "id": format!("{class}-{level}"),
        "specVersion": "1.0.0",
        "packs": [{ "id": PACK, "version": "0.1.0" }],
        "values": values,
        "features": [{
            "id": class,
            "item": format!("{PACK}:classes.{class}"),
            "state": { "level": level },
            "choices": choices,
        }],
    }))
    .expect("a character")
}

/// The spells a sheet's activations hold.
fn held(sheet: &Json) -> BTreeSet<String> {
    sheet["activations"]
        .as_array()
        .expect("activations")
        .iter()
        .filter_map(|a| a["item"].as_str())
        .filter_map(|i| i.strip_prefix(&format!("{PACK}:spells.")))
        .map(str::to_owned)
        .collect()
}

fn expected(table: &[(u32, [&str; 2])], level: u32) -> BTreeSet<String> {
    table
        .iter()
        .filter(|(at, _)| *at <= level)
        .flat_map(|(_, spells)| spells.iter().map(|s| (*s).to_owned()))
        .collect()
}

#[test]
fn subclass_spells_are_granted_at_the_srd_levels() {
    let ruleset = ruleset();
    let mut session = ocf_engine::Session::new(ruleset.clone());
    let mut wrong = Vec::new();
    let mut check = |label: String, c: ocf_model::Character, want: BTreeSet<String>| {
        let id = session.open(&c, &[]);
        let sheet = session.sheet_json(id).unwrap();
        session.close(id);
        if sheet["errors"] != json!([]) {
            wrong.push(format!("{label}: errors {}", sheet["errors"]));
        }
        let got = held(&sheet);
        if got != want {
            wrong.push(format!("{label}: holds {got:?}, the SRD gives {want:?}"));
        }
    };
    for level in 1..=20 {
        let life = json!({ "option": format!("{PACK}:subclasses.life") });
        check(
            format!("life cleric {level}"),
            character("cleric", level, Some(("domain", life))),
            expected(&LIFE, level),
        );
        let devotion = json!({ "option": format!("{PACK}:subclasses.devotion") });
        check(
            format!("devotion paladin {level}"),
            character("paladin", level, (level >= 3).then_some(("oath", devotion))),
            expected(&DEVOTION, level),
        );
        if level < 2 {
            continue;
        }
        for (land, spells) in LANDS {
            let table: Vec<(u32, [&str; 2])> = [3, 5, 7, 9].into_iter().zip(spells).collect();
            let pick = json!({
                "option": format!("{PACK}:subclasses.land"),
                "choices": { "land": [{ "option": land }] },
            });
            check(
                format!("{land} druid {level}"),
                character("druid", level, Some(("circle", pick))),
                expected(&table, level),
            );
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

struct Run<'a> {
    db: &'a ocf_engine::Database,
    input: ocf_engine::input::CharacterInput,
}

impl Run<'_> {
    fn cast(
        &self,
        spell: &str,
        slot: i64,
        entry: Option<&str>,
        targets: Json,
        faces: Vec<i64>,
    ) -> Result<Json, String> {
        let mut params = json!({ "spell": format!("{PACK}:spells.{spell}"), "slotLevel": slot });
        if let Some(entry) = entry {
            params["entry"] = json!(entry);
        }
        let call: StartInput = serde_json::from_value(json!({
            "action": { "id": format!("{PACK}:cast-spell") },
            "params": params,
            "participants": { "target": targets },
        }))
        .unwrap();
        ocf_actions::start_action(
            self.db,
            self.input,
            &call,
            &mut Faces(faces),
            Limits::default(),
        )
        .map_err(|e| e.code.to_string())
    }
}

fn proposed(result: &Json, to: &str) -> Vec<Json> {
    result["proposedChanges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["character"] == to || (to == "self" && c["to"] == "self"))
        .map(|c| c["change"].clone())
        .collect()
}

/// The issue's case: a 5th-level Life cleric (testdata/characters/srd-cleric-5.yaml, no spell
/// picked) has Bless and Cure Wounds prepared from its domain and casts them; its 8 prepared
/// spells are all still to pick.
#[test]
fn a_fifth_level_life_cleric_casts_bless_and_cure_wounds_without_picking_them() {
    let ruleset = ruleset();
    let text =
        std::fs::read_to_string(root().join("testdata/characters/srd-cleric-5.yaml")).unwrap();
    let cleric: ocf_model::Character = serde_yaml::from_str(&text).unwrap();
    assert!(
        !text.contains("spells-cleric"),
        "the sample picks no cleric spell"
    );
    let mut session = ocf_engine::Session::new(ruleset.clone());
    let id = session.open(&cleric, &[]);
    let sheet = session.sheet_json(id).unwrap();
    assert_eq!(sheet["errors"], json!([]));
    let spells = held(&sheet);
    for s in [
        "bless",
        "cure-wounds",
        "lesser-restoration",
        "spiritual-weapon",
        "beacon-of-hope",
        "revivify",
    ] {
        assert!(spells.contains(s), "{s} not held: {spells:?}");
    }
    assert!(
        !spells.contains("death-ward"),
        "death ward is a 7th-level domain spell"
    );
    assert_eq!(
        sheet["values"][format!("{PACK}:spellcasting.cleric.prepared")]["value"],
        json!(8)
    );
    let run = Run {
        db: session.db(id).unwrap(),
        input: session.character_input(id).unwrap(),
    };
    let allies = json!([{ "id": "a" }, { "id": "b" }, { "id": "c" }]);
    // Bless from a 1st-level slot, on three allies: the slot is spent, each ally gets the spell.
    let bless = run
        .cast("bless", 1, Some("cleric"), allies.clone(), vec![])
        .unwrap();
    assert_eq!(bless["status"], "finished");
    assert_eq!(bless["outcome"]["result"], "cast");
    assert_eq!(
        proposed(&bless, "self")[0],
        json!({ "type": "adjust", "field": format!("{PACK}:spellSlots.level1.spent"), "by": 1 })
    );
    for ally in ["a", "b", "c"] {
        assert_eq!(proposed(&bless, ally)[0]["type"], "applyEffect", "{ally}");
    }
    // Without the entry the granted spell is found by its source alone.
    let again = run.cast("bless", 1, None, allies, vec![]).unwrap();
    assert_eq!(again["outcome"]["result"], "cast");
    // Cure Wounds from a 2nd-level slot: 2d8 (4 and 5) + Wisdom 3 + Disciple of Life's 2 + the
    // spell's level 2 = 16.
    let cure = run
        .cast(
            "cure-wounds",
            2,
            Some("cleric"),
            json!([{ "id": "a" }]),
            vec![4, 5],
        )
        .unwrap();
    assert_eq!(cure["outcome"]["result"], "cast");
    let heal = proposed(&cure, "a");
    assert_eq!(heal[0]["field"], format!("{PACK}:hp.current"));
    assert_eq!(heal[0]["by"], json!(16), "{cure}");
    // A domain spell of a level not reached, and a cleric spell not picked, are not held.
    assert_eq!(
        run.cast(
            "death-ward",
            3,
            Some("cleric"),
            json!([{ "id": "a" }]),
            vec![]
        )
        .unwrap_err(),
        "unknown-action"
    );
    assert_eq!(
        run.cast(
            "guiding-bolt",
            1,
            Some("cleric"),
            json!([{ "id": "a" }]),
            vec![]
        )
        .unwrap_err(),
        "unknown-action"
    );
}

/// A character of `class` at `level`, every ability 16, with the class's `choices` and the
/// rules-level `spells` choices (`cantrips-<class>` / `spells-<class>`: spell IDs).
fn caster(class: &str, level: u32, choices: Json, spells: Json) -> ocf_model::Character {
    let mut values = serde_json::Map::new();
    for ab in ["str", "dex", "con", "int", "wis", "cha"] {
        values.insert(format!("{PACK}:abilities.{ab}.score"), json!(16));
    }
    let mut rules = serde_json::Map::new();
    for (choice, ids) in spells.as_object().unwrap() {
        let picks: Vec<Json> = ids
            .as_array()
            .unwrap()
            .iter()
            .map(|s| json!({ "option": format!("{PACK}:spells.{}", s.as_str().unwrap()) }))
            .collect();
        rules.insert(format!("{PACK}:{choice}"), json!(picks));
    }
    serde_json::from_value(json!({
        "id": format!("{class}-{level}"),
        "specVersion": "1.0.0",
        "packs": [{ "id": PACK, "version": "0.1.0" }],
        "values": values,
        "features": [{
            "id": class,
            "item": format!("{PACK}:classes.{class}"),
            "state": { "level": level },
            "choices": choices,
        }],
        "choices": rules,
    }))
    .expect("a character")
}

/// The first roll of `step` in a result's log: its total.
fn total(result: &Json, step: &str) -> Json {
    result["log"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["step"] == step)
        .map(|l| l["total"].clone())
        .unwrap_or(Json::Null)
}

/// The subclass riders on a spell's roll (decisions.md, "SRD 5.1 classes, the rest"): Supreme
/// Healing's maximum dice, Empowered Evocation's Intelligence, Elemental Affinity's Charisma on
/// the ancestor's damage type, Agonizing Blast's Charisma per beam. Every ability is 16 (+3).
#[test]
fn subclass_riders_reach_the_cast_spells_rolls() {
    let ruleset = ruleset();
    let mut session = ocf_engine::Session::new(ruleset.clone());
    let mut cast = |c: ocf_model::Character, spell: &str, slot: Option<i64>, faces: Vec<i64>| {
        let id = session.open(&c, &[]);
        let sheet = session.sheet_json(id).unwrap();
        assert_eq!(sheet["errors"], json!([]), "{}", sheet["errors"]);
        assert_eq!(sheet["issues"], json!([]), "{}", sheet["issues"]);
        let mut params = json!({ "spell": format!("{PACK}:spells.{spell}") });
        if let Some(slot) = slot {
            params["slotLevel"] = json!(slot);
        }
        let call: StartInput = serde_json::from_value(json!({
            "action": { "id": format!("{PACK}:cast-spell") },
            "params": params,
            "participants": { "target": [{ "id": "t", "values": { "5e-srd-5.1:combat.ac": 0 } }] },
        }))
        .unwrap();
        let r = ocf_actions::start_action(
            session.db(id).unwrap(),
            session.character_input(id).unwrap(),
            &call,
            &mut Faces(faces),
            Limits::default(),
        )
        .unwrap();
        session.close(id);
        r
    };
    // Supreme Healing (Life 17th): Cure Wounds at 1st level heals 8 (the d8's maximum) + 3 Wisdom
    // + Disciple of Life's 2 + 1, whatever the die shows.
    let life = json!({ "domain": [{ "option": format!("{PACK}:subclasses.life") }] });
    let cleric = caster("cleric", 17, life, json!({}));
    let r = cast(cleric, "cure-wounds", Some(1), vec![2]);
    assert_eq!(total(&r, "cast/healing"), json!(14), "{r}");
    // Empowered Evocation (Evocation 10th): Fire Bolt at 10th level, 2d10 (1 and 1) + 3 Int.
    let evocation = json!({ "tradition": [{ "option": format!("{PACK}:subclasses.evocation") }] });
    let wizard = caster(
        "wizard",
        10,
        evocation,
        json!({ "cantrips-wizard": ["fire-bolt"] }),
    );
    let r = cast(wizard, "fire-bolt", None, vec![15, 1, 1]);
    assert_eq!(total(&r, "cast/damage[0]"), json!(5), "{r}");
    // Elemental Affinity (a red dragon's sorcerer, 6th): Fire Bolt 2d10 + 3 Cha; not Ray of Frost.
    let draconic = json!({ "origin": [{
        "option": format!("{PACK}:subclasses.draconic"),
        "choices": { "features.draconic.dragon-ancestor/dragon": [{ "option": "red" }] },
    }] });
    let sorcerer = caster(
        "sorcerer",
        6,
        draconic,
        json!({ "cantrips-sorcerer": ["fire-bolt", "ray-of-frost"] }),
    );
    let r = cast(sorcerer.clone(), "fire-bolt", None, vec![15, 1, 1]);
    assert_eq!(total(&r, "cast/damage[0]"), json!(5), "{r}");
    let r = cast(sorcerer, "ray-of-frost", None, vec![15, 1, 1]);
    assert_eq!(total(&r, "cast/damage[0]"), json!(2), "{r}");
    // Agonizing Blast (warlock 5th): two beams' 2d10 (1 and 1) + 3 Cha each.
    let warlock = caster(
        "warlock",
        5,
        json!({
            "patron": [{ "option": format!("{PACK}:subclasses.fiend") }],
            "invocations": [{ "option": format!("{PACK}:features.invocations.agonizing-blast") },
                            { "option": format!("{PACK}:features.invocations.devils-sight") },
                            { "option": format!("{PACK}:features.invocations.mask-of-many-faces") }],
        }),
        json!({ "cantrips-warlock": ["eldritch-blast"] }),
    );
    let r = cast(warlock, "eldritch-blast", None, vec![15, 1, 1]);
    assert_eq!(total(&r, "cast/damage[0]"), json!(8), "{r}");
}

/// The Fiend's Expanded Spell List: a fiend warlock may pick Fireball (not on the warlock's list);
/// a warlock of another patron may not.
#[test]
fn the_fiends_expanded_spells_join_the_warlock_choice() {
    let ruleset = ruleset();
    let mut session = ocf_engine::Session::new(ruleset.clone());
    let fiend = json!({ "patron": [{ "option": format!("{PACK}:subclasses.fiend") }] });
    let c = caster(
        "warlock",
        5,
        fiend,
        json!({ "spells-warlock": ["fireball", "hellish-rebuke"] }),
    );
    let id = session.open(&c, &[]);
    let sheet = session.sheet_json(id).unwrap();
    assert_eq!(sheet["issues"], json!([]), "{}", sheet["issues"]);
    assert!(held(&sheet).contains("fireball"));
    session.close(id);
    let mut file = serde_json::to_value(&c).unwrap();
    file["features"][0]["choices"]["patron"] = json!([{ "option": "homebrew:subclasses.other" }]);
    file["homebrew"] = json!({ "content": [{
        "id": "subclasses.other",
        "type": format!("{PACK}:subclass"),
        "tags": [format!("{PACK}:warlock")],
    }] });
    let other: ocf_model::Character = serde_json::from_value(file).unwrap();
    let id = session.open(&other, &[]);
    let sheet = session.sheet_json(id).unwrap();
    let issues = sheet["issues"].as_array().unwrap();
    assert!(
        issues.iter().any(|i| i["code"] == "option-not-eligible"),
        "{}",
        sheet["issues"]
    );
}
