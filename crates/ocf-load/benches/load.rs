//! The build and loadRuleset on the 5E sample pack, and loadRuleset on a generated ruleset 100 times
//! its size (100 packs, each the 5E pack under another ID), to see that loading stays linear.
//! Run with `cargo bench -p ocf-load --bench load -- --warm-up-time 1 --measurement-time 3`.

use criterion::{Criterion, criterion_group, criterion_main};
use ocf_load::build::{BuildOptions, build_pack, build_report};
use ocf_load::{LoadOptions, load_ruleset};
use ocf_model::{Id, PackRelease};
use std::path::{Path, PathBuf};

fn five_e() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/packs/5e-srd-5.1")
}

/// `copies` packs, each the 5E release under its own ID: every reference in it is local, so each
/// loads as the original does.
fn generated(base: &PackRelease, copies: usize) -> Vec<PackRelease> {
    (0..copies)
        .map(|i| PackRelease {
            id: Id(format!("{}-copy{i}", base.id)),
            ..base.clone()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let options = LoadOptions::default();
    let base = build_pack(&five_e(), &BuildOptions::default()).expect("the 5E pack builds");
    let large = generated(&base, 100);
    c.bench_function("build 5e-srd-5.1", |b| {
        b.iter(|| build_pack(&five_e(), &BuildOptions::default()).unwrap())
    });
    // What `ocf sheet` asks of a pinned pack's folder: the build and the ruleset it loads to check
    // the load agrees (issue 11: the caller takes that ruleset rather than loading again).
    c.bench_function("build 5e-srd-5.1 and its ruleset", |b| {
        b.iter(|| {
            let report = build_report(&five_e(), &BuildOptions::default());
            report.loaded.expect("the 5E pack builds and loads")
        })
    });
    c.bench_function("load 5e-srd-5.1", |b| {
        b.iter(|| load_ruleset(std::slice::from_ref(&base), &options).unwrap())
    });
    let mut group = c.benchmark_group("load 100x");
    group.sample_size(10);
    group.bench_function("100 packs the size of 5e-srd-5.1", |b| {
        b.iter(|| load_ruleset(&large, &options).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
