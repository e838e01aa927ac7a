//! loadRuleset on the sample folder pack and on a generated pack 100 times its size.

use criterion::{Criterion, criterion_group, criterion_main};
use ocf_load::{LoadOptions, load_ruleset, source::read_pack};
use ocf_model::PackRelease;
use std::path::Path;

fn generated(copies: usize) -> PackRelease {
    let base =
        read_pack(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/load/folder-pack"))
            .unwrap();
    let mut release = base.clone();
    release.rules.fields.0.clear();
    release.content.clear();
    for i in 0..copies {
        for (id, f) in base.rules.fields.iter() {
            let mut f = f.clone();
            if let Some(formula) = &mut f.formula {
                formula.0 = formula.0.replace("hp", &format!("hp{i}"));
            }
            release.rules.fields.0.insert(
                id.replace("hp", &format!("hp{i}"))
                    .replace("ac", &format!("ac{i}")),
                f,
            );
        }
        for item in &base.content {
            let mut item = item.clone();
            item.id = item.id.map(|id| ocf_model::Id(format!("{id}{i}")));
            release.content.push(item);
        }
    }
    release
}

fn bench(c: &mut Criterion) {
    let options = LoadOptions::default();
    let small = generated(1);
    let large = generated(100);
    c.bench_function("load folder pack", |b| {
        b.iter(|| load_ruleset(std::slice::from_ref(&small), &options).unwrap())
    });
    c.bench_function("load 100x pack", |b| {
        b.iter(|| load_ruleset(std::slice::from_ref(&large), &options).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
