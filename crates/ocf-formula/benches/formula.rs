//! Throughput over the spec's corpus: parse + lower, and evaluate against the sample context.
//! Run with `cargo bench -p ocf-formula --bench formula -- --warm-up-time 1 --measurement-time 3`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ocf_formula::{Formula, MapContext};

fn testdata(name: &str) -> String {
    let path = format!(
        "{}/../../testdata/formulas/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

fn corpus() -> Vec<String> {
    testdata("corpus.txt")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.rsplit_once(" # ").map_or(l, |(f, _)| f).to_string())
        .collect()
}

fn bench(c: &mut Criterion) {
    let texts = corpus();
    let json: serde_json::Value = serde_json::from_str(&testdata("context.json")).unwrap();
    let ctx = MapContext::from_json(&json).unwrap();
    let formulas: Vec<Formula> = texts.iter().map(|t| Formula::parse(t).unwrap()).collect();

    let mut group = c.benchmark_group("corpus");
    group.throughput(Throughput::Elements(texts.len() as u64));
    group.bench_function("parse+lower", |b| {
        b.iter(|| {
            for text in &texts {
                std::hint::black_box(Formula::parse(text).is_ok());
            }
        })
    });
    group.bench_function("evaluate", |b| {
        b.iter(|| {
            for formula in &formulas {
                std::hint::black_box(formula.evaluate(&ctx).is_ok());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
