//! Property: random actions of the sample packs, with random faces and random answers, never
//! panic or hang, and every finished run replayed from its answers (one startAction with them
//! all) gives the same result byte for byte (EA: "replaying from answers MUST give the same
//! result").

use std::path::PathBuf;

use ocf_actions::{Answer, ContinueInput, Limits, StartInput, State, Then};
use ocf_dice::{DiceError, DiceFunction, FaceRequest};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value as Json, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn session(pack: &str, character: &str) -> (ocf_engine::Session, ocf_engine::CharacterId) {
    let release =
        ocf_load::source::read_pack(&root().join("packs").join(pack)).expect("the pack reads");
    let ruleset = ocf_load::load_ruleset(&[release], &ocf_load::LoadOptions::default())
        .expect("the pack loads");
    let path = root().join("characters").join(character);
    let text = std::fs::read_to_string(&path).expect("the character reads");
    let file =
        ocf_model::from_yaml_str(&text, &path.display().to_string()).expect("the character parses");
    let mut s = ocf_engine::Session::new(ruleset);
    let id = s.open(&file, &[]);
    (s, id)
}

/// Faces from a list of numbers, each folded onto the die asked for; past the end, cycling.
#[derive(Clone)]
struct Folded {
    values: Vec<u32>,
    next: usize,
}

impl DiceFunction for Folded {
    fn face(&mut self, request: &FaceRequest) -> Result<i64, DiceError> {
        let v = self
            .values
            .get(self.next % self.values.len().max(1))
            .copied()
            .unwrap_or(0);
        self.next += 1;
        let (low, _) = request.die.face_range();
        Ok(low + i64::from(v % request.die.face_count().max(1)))
    }
}

/// The actions the property drives: (session index, action, entry, params, situational, participants).
fn calls() -> Vec<(usize, Json)> {
    let goblin =
        json!({ "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 13 } }] });
    vec![
        (
            0,
            json!({ "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" }, "participants": goblin }),
        ),
        (
            0,
            json!({ "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" }, "params": { "targetAc": 18 }, "situational": { "5e-srd-5.1:advantage": true } }),
        ),
        (
            0,
            json!({ "action": { "id": "5e-srd-5.1:saving-throw" }, "params": { "ability": "dex", "dc": 14 } }),
        ),
        (
            0,
            json!({ "action": { "id": "5e-srd-5.1:ability-check" }, "params": { "check": "skills.athletics.mod" }, "situational": { "5e-srd-5.1:advantage": true } }),
        ),
        (0, json!({ "action": { "id": "5e-srd-5.1:long-rest" } })),
        (
            1,
            json!({ "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" }, "participants": goblin }),
        ),
        (
            2,
            json!({ "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "shortbow" }, "participants": goblin }),
        ),
        (
            3,
            json!({ "action": { "id": "fitd-scoundrel:action-roll" }, "params": { "rating": "ratings.skirmish" }, "situational": { "fitd-scoundrel:bonusDie": "push", "fitd-scoundrel:pushEffect": true } }),
        ),
        (
            3,
            json!({ "action": { "id": "fitd-scoundrel:action-roll" }, "params": { "rating": "ratings.study" } }),
        ),
        (
            3,
            json!({ "action": { "id": "fitd-scoundrel:resistance-roll" }, "params": { "attribute": "attributes.prowess" } }),
        ),
        (
            3,
            json!({ "action": { "id": "fitd-scoundrel:take-trauma" } }),
        ),
    ]
}

/// An answer for `needs` from random numbers: the right number of faces, or an offered option;
/// sometimes a wrong one, which must fail cleanly.
fn answer(needs: &Json, pick: u32, faces: &[u32], wrong: bool) -> Answer {
    match needs["kind"].as_str() {
        Some("dice") => {
            let mut out = Vec::new();
            for d in needs["dice"].as_array().into_iter().flatten() {
                let sides = d["sides"].as_i64().unwrap_or(6).max(1);
                for i in 0..d["count"].as_u64().unwrap_or(0) {
                    let v = faces
                        .get(i as usize % faces.len().max(1))
                        .copied()
                        .unwrap_or(1);
                    out.push(1 + i64::from(v) % sides);
                }
            }
            if wrong {
                out.push(0);
            }
            Answer::faces(out)
        }
        _ => {
            let options: Vec<&str> = needs["options"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|o| o["id"].as_str())
                .collect();
            if wrong || options.is_empty() {
                return Answer::option("#not-an-option");
            }
            Answer::option(options[pick as usize % options.len()])
        }
    }
}

#[test]
fn random_runs_replay_exactly() {
    let sessions = [
        session("5e-srd-5.1", "fighter-5.yaml"),
        session("5e-srd-5.1", "fighter-5-flame-tongue.yaml"),
        session("5e-srd-5.1", "rogue-5.yaml"),
        session("fitd-scoundrel", "scoundrel-cutter.yaml"),
    ];
    let calls = calls();
    let strategy = (
        0..calls.len(),
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(any::<u32>(), 1..40),
        proptest::collection::vec((any::<u32>(), proptest::bool::weighted(0.1)), 0..30),
    );
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(
            &strategy,
            |(which, pause_dice, auto_choices, faces, answers)| {
                let (index, call) = &calls[which];
                let (s, id) = &sessions[*index];
                let c = s.character_input(*id).expect("open");
                let mut input: StartInput = serde_json::from_value(call.clone()).expect("a call");
                if pause_dice {
                    input.policy.dice = Then::Pause;
                }
                if auto_choices {
                    input.policy.choices = Then::Auto;
                }
                let dice = Folded {
                    values: faces,
                    next: 0,
                };
                let mut engine = dice.clone();
                let mut result = match ocf_actions::start_action(
                    s.db(*id).expect("open"),
                    c,
                    &input,
                    &mut engine,
                    Limits::default(),
                ) {
                    Ok(r) => r,
                    Err(_) => return Ok(()),
                };
                let mut given = Vec::new();
                let mut k = 0;
                while result["status"] == "paused" {
                    prop_assert!(k < 60, "more pauses than answers could explain");
                    let (pick, wrong) = answers.get(k).copied().unwrap_or((k as u32, false));
                    let a = answer(&result["needs"], pick, &[pick, pick / 7, pick / 13], wrong);
                    k += 1;
                    let state: State =
                        serde_json::from_str(&result["state"].to_string()).expect("a state");
                    given.push(a.clone());
                    match ocf_actions::continue_action(
                        s.db(*id).expect("open"),
                        c,
                        &ContinueInput { state, answer: a },
                        &mut engine,
                        Limits::default(),
                    ) {
                        Ok(r) => result = r,
                        Err(_) => return Ok(()),
                    }
                }
                let mut replay = input.clone();
                replay.answers = given;
                let again = ocf_actions::start_action(
                    s.db(*id).expect("open"),
                    c,
                    &replay,
                    &mut dice.clone(),
                    Limits::default(),
                )
                .expect("the replay runs as the original did");
                prop_assert_eq!(again.to_string(), result.to_string());
                Ok(())
            },
        )
        .unwrap();
}

#[test]
fn safety_limits_stop_a_long_run() {
    let (s, id) = session("5e-srd-5.1", "fighter-5.yaml");
    let c = s.character_input(id).expect("open");
    let input: StartInput = serde_json::from_value(json!({
        "action": { "id": "5e-srd-5.1:saving-throw" }, "params": { "ability": "dex" }
    }))
    .expect("a call");
    let limits = Limits {
        max_action_steps: 1,
        max_action_depth: 16,
    };
    let mut dice = Folded {
        values: vec![3],
        next: 0,
    };
    let e = ocf_actions::start_action(s.db(id).expect("open"), c, &input, &mut dice, limits)
        .expect_err("two steps");
    assert_eq!(e.code, "safety-limit-exceeded");
    assert_eq!(e.data["limit"], "maxActionSteps");
}

// Each steps and handoffs (issue 15): the red dragon's actions on one to three goblins, and the
// conformance pack's each and handoff examples, with random faces and random outcomes.

/// A session of the conformance pack `actions-core` with a bare character `pc`.
fn core_session() -> (ocf_engine::Session, ocf_engine::CharacterId) {
    let release =
        ocf_load::source::read_pack(&root().join("conformance-packs").join("actions-core"))
            .expect("the pack reads");
    let ruleset = ocf_load::load_ruleset(&[release], &ocf_load::LoadOptions::default())
        .expect("the pack loads");
    let file = ocf_model::from_yaml_str("{ id: pc, specVersion: 1.0.0 }", "pc").expect("parses");
    let mut s = ocf_engine::Session::new(ruleset);
    let id = s.open(&file, &[]);
    (s, id)
}

/// `n` goblin views for a role (AC 15, as their sheets give it).
fn goblins(n: usize) -> Json {
    Json::Array(
        (1..=n)
            .map(|i| json!({ "id": format!("goblin-{i}"), "values": { "5e-srd-5.1:combat.ac": 15, "ac": 12 + i } }))
            .collect(),
    )
}

/// The calls over participants: (0 the dragon, 1 the core pack; the call without participants).
fn each_calls() -> Vec<(usize, Json)> {
    let dragon = |a: &str| json!({ "action": { "id": format!("5e-srd-5.1:monsters.adult-red-dragon#{a}"), "entry": "dragon" } });
    let core = |a: &str| json!({ "action": { "id": format!("core:{a}") } });
    vec![
        (0, dragon("fire-breath")),
        (0, dragon("frightful-presence")),
        (0, dragon("multiattack")),
        (1, core("fireball")),
        (1, core("spell")),
        (1, core("volley")),
        (1, core("challenge")),
    ]
}

/// A handoff's answer: one of the results the used actions declare, or (`wrong`) one they don't.
fn handoff_answer(needs: &Json, pick: u32, wrong: bool) -> Answer {
    let results = [
        "success",
        "failure",
        "rolled",
        "critical-success",
        "critical-failure",
        "held",
        "hit",
    ];
    let result = if wrong {
        "fled"
    } else {
        results[pick as usize % results.len()]
    };
    Answer {
        step: needs["step"].as_str().map(str::to_owned),
        outcome: Some(serde_json::Map::from_iter([(
            "result".into(),
            json!(result),
        )])),
        ..Answer::default()
    }
}

#[test]
fn random_each_and_handoff_runs_replay_exactly() {
    let sessions = [
        session("5e-srd-5.1", "adult-red-dragon.yaml"),
        core_session(),
    ];
    let calls = each_calls();
    let strategy = (
        0..calls.len(),
        0usize..4,
        any::<bool>(),
        proptest::collection::vec(any::<u32>(), 1..40),
        proptest::collection::vec((any::<u32>(), proptest::bool::weighted(0.1)), 0..30),
    );
    let mut runner = TestRunner::new(Config {
        cases: 32,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&strategy, |(which, n, pause_dice, faces, answers)| {
            let (index, call) = &calls[which];
            let (s, id) = &sessions[*index];
            let c = s.character_input(*id).expect("open");
            let mut input: StartInput = serde_json::from_value(call.clone()).expect("a call");
            input.participants.insert("target".into(), goblins(n));
            if pause_dice {
                input.policy.dice = Then::Pause;
            }
            let dice = Folded {
                values: faces,
                next: 0,
            };
            let mut engine = dice.clone();
            let mut result = match ocf_actions::start_action(
                s.db(*id).expect("open"),
                c,
                &input,
                &mut engine,
                Limits::default(),
            ) {
                Ok(r) => r,
                Err(_) => return Ok(()),
            };
            let mut given = Vec::new();
            let mut k = 0;
            while result["status"] == "paused" {
                prop_assert!(k < 80, "more pauses than answers could explain");
                let (pick, wrong) = answers.get(k).copied().unwrap_or((k as u32, false));
                let needs = &result["needs"];
                let a = if needs["kind"] == "handoff" {
                    handoff_answer(needs, pick, wrong)
                } else {
                    answer(needs, pick, &[pick, pick / 7, pick / 13], wrong)
                };
                k += 1;
                let state: State =
                    serde_json::from_str(&result["state"].to_string()).expect("a state");
                given.push(a.clone());
                match ocf_actions::continue_action(
                    s.db(*id).expect("open"),
                    c,
                    &ContinueInput { state, answer: a },
                    &mut engine,
                    Limits::default(),
                ) {
                    Ok(r) => result = r,
                    Err(_) => return Ok(()),
                }
            }
            // Every change for a role names the participant it is for.
            for p in result["proposedChanges"].as_array().into_iter().flatten() {
                if p["to"] == "target" && n > 0 {
                    prop_assert!(p["character"].is_string(), "{p}");
                }
            }
            let mut replay = input.clone();
            replay.answers = given;
            let again = ocf_actions::start_action(
                s.db(*id).expect("open"),
                c,
                &replay,
                &mut dice.clone(),
                Limits::default(),
            )
            .expect("the replay runs as the original did");
            prop_assert_eq!(again.to_string(), result.to_string());
            Ok(())
        })
        .unwrap();
}

#[test]
fn each_runs_count_toward_max_action_steps() {
    let (s, id) = core_session();
    let c = s.character_input(id).expect("open");
    let mut input: StartInput =
        serde_json::from_value(json!({ "action": { "id": "core:volley" } })).expect("a call");
    input.participants.insert("target".into(), goblins(3));
    // volley: shots ×3, hits ×3, coin and result: 8 counted; 7 is one short.
    let limits = Limits {
        max_action_steps: 7,
        max_action_depth: 16,
    };
    let mut dice = Folded {
        values: vec![3],
        next: 0,
    };
    let e = ocf_actions::start_action(s.db(id).expect("open"), c, &input, &mut dice, limits)
        .expect_err("8 steps");
    assert_eq!(e.code, "safety-limit-exceeded");
    let limits = Limits {
        max_action_steps: 8,
        max_action_depth: 16,
    };
    ocf_actions::start_action(s.db(id).expect("open"), c, &input, &mut dice, limits)
        .expect("8 steps fit");
}

/// An allocation answer from random numbers (issue 15): the values spread over the offered fields,
/// or the budget's units each given to a field with room; sometimes a negative amount, which must
/// fail cleanly.
fn allocation(needs: &Json, numbers: &[u32], wrong: bool) -> Answer {
    let fields: Vec<(&str, Option<i64>)> = needs["fields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| Some((f["id"].as_str()?, f["max"].as_i64())))
        .collect();
    let n = |i: usize| numbers.get(i % numbers.len().max(1)).copied().unwrap_or(0) as usize;
    let mut amounts = serde_json::Map::new();
    if let Some(values) = needs["values"].as_array() {
        let mut free: Vec<&str> = fields.iter().map(|f| f.0).collect();
        for (i, v) in values.iter().enumerate() {
            if free.is_empty() {
                break;
            }
            let f = free.remove(n(i) % free.len());
            amounts.insert(f.to_owned(), v.clone());
        }
    } else {
        let budget = needs["budget"].as_i64().unwrap_or(0).clamp(0, 64);
        let mut given = vec![0i64; fields.len()];
        for i in 0..budget as usize {
            let room: Vec<usize> = (0..fields.len())
                .filter(|&k| fields[k].1.is_none_or(|m| given[k] < m))
                .collect();
            if room.is_empty() {
                break;
            }
            given[room[n(i) % room.len()]] += 1;
        }
        for (k, f) in fields.iter().enumerate() {
            if given[k] != 0 {
                amounts.insert(f.0.to_owned(), json!(given[k]));
            }
        }
    }
    if wrong && let Some((f, _)) = fields.first() {
        amounts.insert((*f).to_owned(), json!(-1));
    }
    Answer {
        amounts: Some(amounts),
        ..Answer::default()
    }
}

/// Property (issue 15): choice steps with `repeat`, `#done` and random draws, allocate steps and
/// proposed sheets, driven with random answers, never panic, and a finished run replays exactly.
#[test]
fn random_choices_and_allocations_replay_exactly() {
    let read = |folder: &str, pack: &str| {
        let release =
            ocf_load::source::read_pack(&root().join(folder).join(pack)).expect("the pack reads");
        ocf_load::load_ruleset(&[release], &ocf_load::LoadOptions::default())
            .expect("the pack loads")
    };
    let open = |ruleset: ocf_model::Ruleset, file: Json| {
        let file: ocf_model::Character = serde_json::from_value(file).expect("a character");
        let mut s = ocf_engine::Session::new(ruleset);
        let id = s.open(&file, &[]);
        (s, id)
    };
    let classes = json!({ "id": "pc", "specVersion": "1.0.0", "features": [
        { "id": "fighter", "item": "alloc:classes.fighter", "state": { "level": 3, "hitDiceSpent": 2 } },
        { "id": "wizard", "item": "alloc:classes.wizard", "state": { "level": 2, "hitDiceSpent": 1 } },
        { "id": "sorc", "item": "alloc:classes.sorcerer" } ] });
    let sessions = [
        open(read("conformance-packs", "actions-choice"), classes),
        open(
            read("packs", "fitd-scoundrel"),
            json!({ "id": "new", "specVersion": "1.0.0", "creating": true }),
        ),
    ];
    let calls: Vec<(usize, Json)> = [
        "long-rest",
        "regain-proposed",
        "take-gifts",
        "random-gift",
        "point-buy",
        "standard-array",
        "pyramid",
        "dots",
        "level-up",
    ]
    .iter()
    .map(|a| (0, json!({ "action": { "id": format!("alloc:{a}") } })))
    .chain([
        (
            1,
            json!({ "action": { "id": "fitd-scoundrel:create-scoundrel" } }),
        ),
        (
            1,
            json!({ "action": { "id": "fitd-scoundrel:create-scoundrel" }, "params": { "random": true } }),
        ),
    ])
    .collect();
    let strategy = (
        0..calls.len(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        proptest::collection::vec(any::<u32>(), 1..40),
        proptest::collection::vec((any::<u32>(), proptest::bool::weighted(0.1)), 0..30),
    );
    let mut runner = TestRunner::new(Config {
        cases: 48,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(
            &strategy,
            |(which, pause_dice, auto_choices, pause_allocations, faces, answers)| {
                let (index, call) = &calls[which];
                let (s, id) = &sessions[*index];
                let c = s.character_input(*id).expect("open");
                let mut input: StartInput = serde_json::from_value(call.clone()).expect("a call");
                if pause_dice {
                    input.policy.dice = Then::Pause;
                }
                if auto_choices {
                    input.policy.choices = Then::Auto;
                }
                if pause_allocations {
                    input.policy.allocations = Then::Pause;
                }
                let dice = Folded {
                    values: faces,
                    next: 0,
                };
                let mut engine = dice.clone();
                let Ok(mut result) = ocf_actions::start_action(
                    s.db(*id).expect("open"),
                    c,
                    &input,
                    &mut engine,
                    Limits::default(),
                ) else {
                    return Ok(());
                };
                let mut given = Vec::new();
                let mut k = 0;
                while result["status"] == "paused" {
                    prop_assert!(k < 60, "more pauses than answers could explain");
                    let (pick, wrong) = answers.get(k).copied().unwrap_or((k as u32, false));
                    let needs = &result["needs"];
                    let a = if needs["kind"] == "allocation" {
                        allocation(needs, &[pick, pick / 7, pick / 13, pick / 31], wrong)
                    } else {
                        answer(needs, pick, &[pick, pick / 7, pick / 13], wrong)
                    };
                    k += 1;
                    let state: State =
                        serde_json::from_str(&result["state"].to_string()).expect("a state");
                    given.push(a.clone());
                    match ocf_actions::continue_action(
                        s.db(*id).expect("open"),
                        c,
                        &ContinueInput { state, answer: a },
                        &mut engine,
                        Limits::default(),
                    ) {
                        Ok(r) => result = r,
                        Err(_) => return Ok(()),
                    }
                }
                let mut replay = input.clone();
                replay.answers = given;
                let again = ocf_actions::start_action(
                    s.db(*id).expect("open"),
                    c,
                    &replay,
                    &mut dice.clone(),
                    Limits::default(),
                )
                .expect("the replay runs as the original did");
                prop_assert_eq!(again.to_string(), result.to_string());
                Ok(())
            },
        )
        .unwrap();
}
