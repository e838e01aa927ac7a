//! computeSheet on the generated large character of [`ocf_synthetic`] at its default size:
//! 100 input scores, 100 modifiers and 1800 derived fields (2000 in all), each derived field
//! reading a modifier and the field 100 before it (so through formulas a score reaches 20 fields,
//! as an ability reaches its modifier, skills, saves and attacks), and 100 copies carrying 3
//! effects each (300 active effects). Measures a cold sheet, one edit (a score) recomputed
//! incrementally, and the same edit from scratch. `ocf bench-edit` measures the same character from
//! the command line.
//!
//! `cargo bench -p ocf-engine -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, criterion_group, criterion_main};
use ocf_engine::{CharacterId, Session};
use ocf_model::Ruleset;
use ocf_synthetic::Synthetic;
use serde_json::json;

/// A session with the character open and its sheet computed once: what each incremental case starts from.
fn warm(rules: &Ruleset) -> (Session, CharacterId) {
    let mut session = Session::new(rules.clone());
    let pc = session.open(&Synthetic::default().character(14), &[]);
    session.sheet(pc).unwrap();
    (session, pc)
}

fn bench(c: &mut Criterion) {
    let big = Synthetic::default();
    let rules = big.ruleset();
    let mut group = c.benchmark_group("computeSheet");
    group.bench_function("cold", |b| {
        b.iter(|| {
            let mut session = Session::new(rules.clone());
            let pc = session.open(&big.character(14), &[]);
            session.sheet(pc).unwrap()
        })
    });
    group.bench_function("edit, incremental", |b| {
        let (mut session, pc) = warm(&rules);
        let mut score = 14;
        b.iter(|| {
            score = if score == 14 { 16 } else { 14 };
            session
                .set_value(pc, Synthetic::EDITED, Some(json!(score)))
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
            session
                .deep(pc, move |db| {
                    ids.iter()
                        .map(|id| {
                            let key = ocf_engine::FieldKey::new(db, input, id.as_str());
                            ocf_engine::field_value(db, key).value.is_some()
                        })
                        .count()
                })
                .unwrap()
        })
    });
    group.bench_function("no edit, empty deep call", |b| {
        let (session, pc) = warm(&rules);
        b.iter(|| session.deep(pc, |_| 1).unwrap())
    });
    group.bench_function("edit, one field read incrementally", |b| {
        let (mut session, pc) = warm(&rules);
        let mut score = 14;
        b.iter(|| {
            score = if score == 14 { 16 } else { 14 };
            session
                .set_value(pc, Synthetic::EDITED, Some(json!(score)))
                .unwrap();
            session.field(pc, "g:f1700").unwrap()
        })
    });
    group.bench_function("edit, from scratch", |b| {
        let mut score = 14;
        b.iter(|| {
            score = if score == 14 { 16 } else { 14 };
            let mut session = Session::new(rules.clone());
            let pc = session.open(&big.character(score), &[]);
            session.sheet(pc).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
