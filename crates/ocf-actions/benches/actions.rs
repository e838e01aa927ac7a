//! startAction's cost: a 5E weapon attack from start to finish on an open Session (the sheet
//! already computed, as an app's), and the replay of a 20-pause action (one startAction with its
//! twenty answers) against running it once with the engine's dice. `docs/perf.md` has figures.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
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

fn bench(c: &mut Criterion) {
    let (s, id) = session("5e-srd-5.1", Some("fighter-5.yaml"));
    let ch = s.character_input(id).expect("open");
    let attack: StartInput = serde_json::from_value(json!({
        "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" },
        "participants": { "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 13 } }] }
    }))
    .expect("input");
    c.bench_function("weapon attack, start to finish", |b| {
        b.iter(|| {
            ocf_actions::start_action(
                s.db(id).expect("open"),
                ch,
                &attack,
                &mut SeededDice::new(7),
                Limits::default(),
            )
            .expect("runs")
        })
    });

    let (s, id) = session("actions-core", None);
    let ch = s.character_input(id).expect("open");
    let once: StartInput =
        serde_json::from_value(json!({ "action": { "id": "core:twenty" } })).expect("input");
    let mut replay = once.clone();
    replay.policy.dice = Then::Pause;
    replay.answers = (0..20).map(|i| Answer::faces(vec![1 + i % 6])).collect();
    let finished = ocf_actions::start_action(
        s.db(id).expect("open"),
        ch,
        &replay,
        &mut SeededDice::new(1),
        Limits::default(),
    )
    .expect("runs");
    assert_eq!(finished["status"], "finished");
    c.bench_function("twenty rolls, one run", |b| {
        b.iter(|| {
            ocf_actions::start_action(
                s.db(id).expect("open"),
                ch,
                &once,
                &mut SeededDice::new(7),
                Limits::default(),
            )
            .expect("runs")
        })
    });
    c.bench_function("twenty rolls, replayed from 20 answers", |b| {
        b.iter(|| {
            ocf_actions::start_action(
                s.db(id).expect("open"),
                ch,
                &replay,
                &mut SeededDice::new(7),
                Limits::default(),
            )
            .expect("runs")
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
