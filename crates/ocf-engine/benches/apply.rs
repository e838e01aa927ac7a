//! applyChanges on the generated large character of [`ocf_synthetic`] (2 000 fields, 100
//! copies): one adjust of a score through an open [`Session`] (`Session::apply`, then the sheet)
//! against a fresh `applyChanges` plus `computeSheet`, and a batch of 100 adjusts through the session.
//!
//! `cargo bench -p ocf-engine --bench apply -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, criterion_group, criterion_main};
use ocf_engine::{ApplyOptions, Session};
use ocf_model::Change;
use ocf_synthetic::Synthetic;

fn adjust(field: &str, by: i64) -> Change {
    serde_json::from_value(
        serde_json::json!({ "type": "adjust", "field": field, "by": by.to_string() }),
    )
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let big = Synthetic::default();
    let rules = big.ruleset();
    let character = big.character(14);
    let mut group = c.benchmark_group("applyChanges");
    group.bench_function("one adjust, session", |b| {
        let mut session = Session::new(rules.clone());
        let pc = session.open(&character, &[]);
        session.sheet(pc).unwrap();
        let mut by = 2;
        b.iter(|| {
            by = -by;
            session
                .apply(
                    pc,
                    &[adjust(Synthetic::EDITED, by)],
                    ApplyOptions::default(),
                )
                .unwrap();
            session.sheet(pc).unwrap()
        })
    });
    group.bench_function("one adjust, fresh applyChanges + computeSheet", |b| {
        b.iter(|| {
            let applied = ocf_engine::apply_changes(
                &rules,
                &character,
                &[adjust(Synthetic::EDITED, 2)],
                ApplyOptions::default(),
            )
            .unwrap();
            ocf_engine::compute_sheet_call(&rules, &applied.character, &[], &Default::default())
        })
    });
    let batch: Vec<Change> = (0..100)
        .map(|i| {
            adjust(
                &format!("g:score{}", i % big.scores()),
                if i % 2 == 0 { 1 } else { -1 },
            )
        })
        .collect();
    group.bench_function("100 adjusts, session", |b| {
        let mut session = Session::new(rules.clone());
        let pc = session.open(&character, &[]);
        session.sheet(pc).unwrap();
        b.iter(|| {
            session.apply(pc, &batch, ApplyOptions::default()).unwrap();
            session.sheet(pc).unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
