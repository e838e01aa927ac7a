//! The benchmark's scenarios run a given number of times, for instruction counts under callgrind
//! (`docs/perf.md`, issues 14 and 35): `valgrind --tool=callgrind
//! --toggle-collect=action_cost::runs` counts the `N` runs alone, without the process and the
//! session's setup; over `N` it is one run's cost. (The count of `N` runs minus the count of none
//! gives the same, give or take the setup's own variation between processes.)
//!
//!   action_cost attack N     a 5E weapon attack against a goblin, start to finish, on an open
//!                            Session whose sheet is computed
//!   action_cost once N       the twenty-roll action run once with the engine's dice
//!   action_cost replay N     the same action replayed from its twenty answers
//!   action_cost firebreath N the adult red dragon's Fire Breath on three goblins: started, then
//!                            continued with each goblin's handed-off save (three answers)

use std::path::PathBuf;

use ocf_actions::{Answer, Limits, StartInput, Then};
use ocf_dice::SeededDice;
use serde_json::json;

fn session(pack: &str, character: Option<&str>) -> (ocf_engine::Session, ocf_engine::CharacterId) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let folder = if pack == "actions-core" {
        "conformance-packs"
    } else {
        "packs"
    };
    let release = ocf_load::source::read_pack(&root.join(folder).join(pack)).expect("pack");
    let ruleset =
        ocf_load::load_ruleset(&[release], &ocf_load::LoadOptions::default()).expect("loads");
    let file: ocf_model::Character = match character {
        Some(c) => {
            let path = root.join("characters").join(c);
            ocf_model::from_yaml_str(&std::fs::read_to_string(&path).expect("reads"), "c")
                .expect("parses")
        }
        None => ocf_model::from_json_str(r#"{ "id": "pc", "specVersion": "1.0.0" }"#, "c")
            .expect("parses"),
    };
    let mut s = ocf_engine::Session::new(ruleset);
    let id = s.open(&file, &[]);
    let _ = s.sheet(id);
    (s, id)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let scenario = args.get(1).map(String::as_str).unwrap_or("attack");
    let n: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1);
    let (s, id, input) = match scenario {
        "attack" => {
            let (s, id) = session("5e-srd-5.1", Some("fighter-5.yaml"));
            let input: StartInput = serde_json::from_value(json!({
                "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" },
                "participants": { "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 13 } }] }
            }))
            .expect("input");
            (s, id, input)
        }
        "once" | "replay" => {
            let (s, id) = session("actions-core", None);
            let mut input: StartInput =
                serde_json::from_value(json!({ "action": { "id": "core:twenty" } }))
                    .expect("input");
            if scenario == "replay" {
                input.policy.dice = Then::Pause;
                input.answers = (0..20).map(|i| Answer::faces(vec![1 + i % 6])).collect();
            }
            (s, id, input)
        }
        "firebreath" => {
            let (s, id) = session("5e-srd-5.1", Some("adult-red-dragon.yaml"));
            let input: StartInput = serde_json::from_value(json!({
                "action": { "id": "5e-srd-5.1:monsters.adult-red-dragon#fire-breath", "entry": "dragon" },
                "participants": { "target": [{ "id": "goblin-1" }, { "id": "goblin-2" }, { "id": "goblin-3" }] }
            }))
            .expect("input");
            (s, id, input)
        }
        other => panic!("no scenario `{other}`: attack, once, replay or firebreath"),
    };
    runs(&s, id, &input, scenario == "firebreath", n);
}

/// The `n` runs, apart from the setup: `valgrind --tool=callgrind --toggle-collect=action_cost::runs`
/// counts only them, so that the setup's own variation (its hash maps' random seeds) doesn't
/// reach one run's figure.
#[inline(never)]
fn runs(
    s: &ocf_engine::Session,
    id: ocf_engine::CharacterId,
    input: &StartInput,
    firebreath: bool,
    n: usize,
) {
    let ch = s.character_input(id).expect("open");
    if firebreath {
        for _ in 0..n {
            let db = s.db(id).expect("open");
            let mut dice = SeededDice::new(7);
            let mut out = ocf_actions::start_action(db, ch, input, &mut dice, Limits::default())
                .expect("runs");
            for (i, result) in ["failure", "success", "failure"].iter().enumerate() {
                // Read from the result in place, as an app reads the state it was sent.
                let state = <ocf_actions::State as serde::Deserialize>::deserialize(&out["state"])
                    .expect("a state");
                let answer = Answer {
                    step: Some(format!("saves[{i}]")),
                    outcome: Some(serde_json::from_value(json!({ "result": result })).unwrap()),
                    ..Answer::default()
                };
                out = ocf_actions::continue_action(
                    db,
                    ch,
                    &ocf_actions::ContinueInput { state, answer },
                    &mut dice,
                    Limits::default(),
                )
                .expect("continues");
            }
            assert_eq!(out["status"], "finished");
        }
        return;
    }
    for _ in 0..n {
        let out = ocf_actions::start_action(
            s.db(id).expect("open"),
            ch,
            input,
            &mut SeededDice::new(7),
            Limits::default(),
        )
        .expect("runs");
        assert_eq!(out["status"], "finished");
    }
}
