//! listOptions on the generated large character of [`ocf_synthetic`] (2 000 fields, 100
//! copies, 300 effects) with a rules-level choice of 50 feats, each adding 1 to a derived field:
//! through a warm [`Session`] (each trial an edit of the held file's picks, the sheet read
//! incrementally) against 50 fresh trial sheets (a new session per option, opening the character
//! with the pick made and computing its full sheet).
//!
//! `cargo bench -p ocf-engine --bench options -- --warm-up-time 1 --measurement-time 5`

use criterion::{Criterion, criterion_group, criterion_main};
use ocf_engine::Session;
use ocf_engine::options::path::ChoicePath;
use ocf_model::{Literal, PickEntry};
use ocf_synthetic::Synthetic;

const OPTIONS: usize = 50;

fn bench(c: &mut Criterion) {
    let big = Synthetic::default();
    let rules = big.ruleset_with_choice(OPTIONS);
    let character = big.character(14);
    let path = ChoicePath {
        entry: None,
        choice: vec![Synthetic::CHOICE.into()],
    };
    let mut group = c.benchmark_group("listOptions");
    group.sample_size(10);
    group.bench_function("50 options, through a session", |b| {
        let mut session = Session::new(rules.clone());
        let pc = session.open(&character, &[]);
        session.sheet(pc).unwrap();
        b.iter(|| {
            let listed = session.list_options(pc, &path).unwrap();
            assert_eq!(listed.options.len(), OPTIONS);
            listed
        })
    });
    group.bench_function("50 fresh trial sheets", |b| {
        b.iter(|| {
            (0..OPTIONS)
                .map(|k| {
                    let mut file = character.clone();
                    file.choices.0.insert(
                        Synthetic::CHOICE.into(),
                        vec![PickEntry {
                            option: Literal::String(format!("g:feat{k}")),
                            state: Default::default(),
                            choices: Default::default(),
                        }],
                    );
                    let mut session = Session::new(rules.clone());
                    let pc = session.open(&file, &[]);
                    session.sheet(pc).unwrap().fields.len()
                })
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
