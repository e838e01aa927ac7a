//! The red dragon's Fire Breath on three goblins (each save a handoff): the last continueAction of
//! the run (one startAction with the three outcomes), against the whole run as an app makes it
//! (startAction, then a continueAction per handoff), and the Multiattack's three nested attacks,
//! each against its own goblin. `docs/perf.md` has figures.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use ocf_actions::{Answer, ContinueInput, Limits, StartInput, State};
use ocf_dice::SeededDice;
use serde_json::{Value as Json, json};

fn dragon() -> (ocf_engine::Session, ocf_engine::CharacterId) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let release = ocf_load::source::read_pack(&root.join("packs/5e-srd-5.1")).expect("pack");
    let ruleset =
        ocf_load::load_ruleset(&[release], &ocf_load::LoadOptions::default()).expect("loads");
    let path = root.join("characters/adult-red-dragon.yaml");
    let file = ocf_model::from_yaml_str(&std::fs::read_to_string(&path).expect("reads"), "c")
        .expect("parses");
    let mut s = ocf_engine::Session::new(ruleset);
    let id = s.open(&file, &[]);
    let _ = s.sheet(id);
    (s, id)
}

fn outcome(result: &str) -> Answer {
    Answer {
        outcome: Some(serde_json::Map::from_iter([(
            "result".into(),
            json!(result),
        )])),
        ..Answer::default()
    }
}

fn bench(c: &mut Criterion) {
    let (s, id) = dragon();
    let ch = s.character_input(id).expect("open");
    let goblins: Json = (1..=3)
        .map(|i| json!({ "id": format!("goblin-{i}"), "values": { "5e-srd-5.1:combat.ac": 15 } }))
        .collect();
    let breath: StartInput = serde_json::from_value(json!({
        "action": { "id": "5e-srd-5.1:monsters.adult-red-dragon#fire-breath", "entry": "dragon" },
        "participants": { "target": goblins }
    }))
    .expect("input");
    let answers = vec![outcome("failure"), outcome("success"), outcome("failure")];
    let mut last = breath.clone();
    last.answers = answers.clone();
    c.bench_function("fire breath on 3 goblins, the last call", |b| {
        b.iter(|| {
            let r = ocf_actions::start_action(
                s.db(id).expect("open"),
                ch,
                &last,
                &mut SeededDice::new(7),
                Limits::default(),
            )
            .expect("runs");
            assert_eq!(r["status"], "finished");
            r
        })
    });
    c.bench_function("fire breath on 3 goblins, start and 3 continues", |b| {
        b.iter(|| {
            let mut dice = SeededDice::new(7);
            let mut r = ocf_actions::start_action(
                s.db(id).expect("open"),
                ch,
                &breath,
                &mut dice,
                Limits::default(),
            )
            .expect("runs");
            for answer in &answers {
                let state: State = serde_json::from_value(r["state"].clone()).expect("state");
                r = ocf_actions::continue_action(
                    s.db(id).expect("open"),
                    ch,
                    &ContinueInput {
                        state,
                        answer: answer.clone(),
                    },
                    &mut dice,
                    Limits::default(),
                )
                .expect("continues");
            }
            assert_eq!(r["status"], "finished");
            r
        })
    });
    let multi: StartInput = serde_json::from_value(json!({
        "action": { "id": "5e-srd-5.1:monsters.adult-red-dragon#multiattack", "entry": "dragon" },
        "participants": { "target": goblins }
    }))
    .expect("input");
    c.bench_function("multiattack on 3 goblins", |b| {
        b.iter(|| {
            ocf_actions::start_action(
                s.db(id).expect("open"),
                ch,
                &multi,
                &mut SeededDice::new(7),
                Limits::default(),
            )
            .expect("runs")
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
