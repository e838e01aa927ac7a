//! The odds of an action (issue 45): the fighter's longsword attack against a target, and the adult
//! red dragon's Fire Breath on three goblins (18d6 against three saves, each handed off to the
//! goblin's own character: 91 × 2³ = 728 runs). `docs/perf.md` has figures.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use ocf_actions::StartInput;
use ocf_actions::odds::SessionOdds;
use ocf_actions::odds::handoffs::Characters;
use serde_json::json;

fn character(name: &str) -> ocf_model::Character {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/characters");
    let text = std::fs::read_to_string(root.join(name)).expect("reads");
    ocf_model::from_yaml_str(&text, name).expect("parses")
}

fn session() -> ocf_engine::Session {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/packs");
    let release = ocf_load::source::read_pack(&root.join("5e-srd-5.1")).expect("pack");
    let ruleset =
        ocf_load::load_ruleset(&[release], &ocf_load::LoadOptions::default()).expect("loads");
    ocf_engine::Session::new(ruleset)
}

fn bench(c: &mut Criterion) {
    let mut s = session();
    let fighter = s.open(&character("fighter-5.yaml"), &[]);
    let _ = s.sheet(fighter);
    let attack: StartInput = serde_json::from_value(json!({
        "action": { "id": "5e-srd-5.1:weapon-attack", "entry": "longsword" },
        "participants": { "target": [{ "id": "goblin", "values": { "5e-srd-5.1:combat.ac": 15 } }] }
    }))
    .expect("input");
    c.bench_function("odds: fighter's longsword attack", |b| {
        b.iter(|| {
            s.odds(fighter, &attack, &mut ocf_actions::odds::NoHandoffs)
                .expect("odds")
        })
    });

    let dragon = s.open(&character("adult-red-dragon.yaml"), &[]);
    let mut goblins = Vec::new();
    for i in 1..=3 {
        let mut g = character("goblin.yaml");
        g.id = format!("goblin-{i}").parse().expect("an id");
        goblins.push(s.open(&g, &[]));
    }
    let mut group = c.benchmark_group("odds");
    group.sample_size(10);
    group.bench_function("Fire Breath on three goblins", |b| {
        b.iter(|| {
            let mut handoffs = Characters::new(
                goblins
                    .iter()
                    .enumerate()
                    .map(|(i, g)| (format!("goblin-{}", i + 1), &s, *g))
                    .collect(),
            );
            let views: Vec<_> = (1..=3)
                .map(|i| handoffs.view(&format!("goblin-{i}")).expect("view"))
                .collect();
            let input: StartInput = serde_json::from_value(json!({
                "action": { "id": "5e-srd-5.1:monsters.adult-red-dragon#fire-breath", "entry": "dragon" },
                "participants": { "target": views }
            }))
            .expect("input");
            s.odds(dragon, &input, &mut handoffs).expect("odds")
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
