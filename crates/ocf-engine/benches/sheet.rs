//! computeSheet on a generated large character: 100 input scores, 100 modifiers and 1800 derived
//! fields (2000 in all), each derived field reading a modifier and the field 100 before it (so a
//! score reaches 20 fields, as an ability reaches its modifier, skills, saves and attacks), and 100
//! copies carrying 3 effects each (300 active effects). Measures a cold sheet, one edit (a score)
//! recomputed incrementally, and the same edit from scratch.
//!
//! `cargo bench -p ocf-engine -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, criterion_group, criterion_main};
use ocf_engine::{CharacterId, Session};
use ocf_model::{Character, Ruleset};
use serde_json::{Value, json};

const SCORES: usize = 100;
const FIELDS: usize = 2000;
const COPIES: usize = 100;

fn ruleset() -> Ruleset {
    let mut fields = serde_json::Map::new();
    for a in 0..SCORES {
        fields.insert(
            format!("g:score{a}"),
            json!({ "declaredIn": "g", "type": "integer", "input": true, "default": 10 }),
        );
        fields.insert(
            format!("g:mod{a}"),
            json!({ "declaredIn": "g", "type": "integer", "formula": format!("floor((score{a} - 10) / 2)") }),
        );
    }
    for i in 0..FIELDS - 2 * SCORES {
        let formula = if i < SCORES {
            format!("mod{} + 1", i % SCORES)
        } else {
            format!("f{} + mod{} + 1", i - SCORES, i % SCORES)
        };
        fields.insert(
            format!("g:f{i}"),
            json!({ "declaredIn": "g", "type": "integer", "formula": formula, "tags": ["derived"] }),
        );
    }
    let mut content = serde_json::Map::new();
    for c in 0..COPIES {
        let target = |k: usize| format!("g:f{}", (c * 7 + k * 13) % (FIELDS - 2 * SCORES));
        content.insert(
            format!("g:item{c}"),
            json!({
                "declaredIn": "g",
                "id": format!("g:item{c}"),
                "type": "g:gear",
                "effects": [
                    { "target": target(0), "op": "add", "value": "1", "when": "self.equipped" },
                    { "target": target(1), "op": "add", "value": format!("mod{}", c % SCORES), "stackKey": "item" },
                    { "target": target(2), "op": "atLeast", "value": "3" },
                ],
            }),
        );
    }
    serde_json::from_value(json!({
        "packs": [{ "id": "g", "version": "1.0.0", "specVersion": "1.0.0", "scope": ["g"] }],
        "settings": { "stacking": { "keys": { "item": "highestOnly" } } },
        "fields": fields,
        "contentTypes": { "g:gear": { "declaredIn": "g" } },
        "content": content,
    }))
    .expect("the generated ruleset")
}

fn character(score0: i64) -> Character {
    let mut values = serde_json::Map::new();
    for a in 0..SCORES {
        values.insert(
            format!("g:score{a}"),
            json!(if a == 0 { score0 } else { 12 }),
        );
    }
    let inventory: Vec<Value> = (0..COPIES)
        .map(|c| json!({ "id": format!("c{c}"), "item": format!("g:item{c}"), "equipped": c % 2 == 0 }))
        .collect();
    serde_json::from_value(json!({
        "id": "big", "specVersion": "1.0.0", "values": values, "inventory": inventory,
    }))
    .expect("the generated character")
}

/// A session with the character open and its sheet computed once: what each incremental case starts from.
fn warm(rules: &Ruleset) -> (Session, CharacterId) {
    let mut session = Session::new(rules.clone());
    let pc = session.open(&character(14), &[]);
    session.sheet(pc).unwrap();
    (session, pc)
}

fn bench(c: &mut Criterion) {
    let rules = ruleset();
    let mut group = c.benchmark_group("computeSheet");
    group.bench_function("cold", |b| {
        b.iter(|| {
            let mut session = Session::new(rules.clone());
            let pc = session.open(&character(14), &[]);
            session.sheet(pc).unwrap()
        })
    });
    group.bench_function("edit, incremental", |b| {
        let (mut session, pc) = warm(&rules);
        let mut score = 14;
        b.iter(|| {
            score = if score == 14 { 16 } else { 14 };
            session
                .set_value(pc, "g:score0", Some(json!(score)))
                .unwrap();
            session.sheet(pc).unwrap()
        })
    });
    group.bench_function("no edit, sheet again", |b| {
        let (session, pc) = warm(&rules);
        b.iter(|| session.sheet(pc).unwrap())
    });
    group.bench_function("no edit, every field value", |b| {
        let (session, pc) = warm(&rules);
        let ids: Vec<String> = rules.fields.iter().map(|(id, _)| id.to_owned()).collect();
        let ids = std::sync::Arc::new(ids);
        let input = session.character_input(pc).unwrap();
        b.iter(|| {
            let ids = ids.clone();
            session.deep(move |db| {
                ids.iter()
                    .map(|id| {
                        let key = ocf_engine::FieldKey::new(db, input, id.clone());
                        ocf_engine::field_value(db, key).value.is_some()
                    })
                    .count()
            })
        })
    });
    group.bench_function("no edit, empty deep call", |b| {
        let session = Session::new(rules.clone());
        b.iter(|| session.deep(|_| 1))
    });
    group.bench_function("edit, one field read incrementally", |b| {
        let (mut session, pc) = warm(&rules);
        let mut score = 14;
        b.iter(|| {
            score = if score == 14 { 16 } else { 14 };
            session
                .set_value(pc, "g:score0", Some(json!(score)))
                .unwrap();
            session.field(pc, "g:f1700").unwrap()
        })
    });
    group.bench_function("edit, from scratch", |b| {
        let mut score = 14;
        b.iter(|| {
            score = if score == 14 { 16 } else { 14 };
            let mut session = Session::new(rules.clone());
            let pc = session.open(&character(score), &[]);
            session.sheet(pc).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
