//! `ocf sheet testdata/characters/fighter-5.yaml` as the command runs it, without the printing:
//! the character file read, its pinned pack built from its folder (which loads what it built), and
//! the sheet computed. Issue 11 measures this whole command with callgrind (`scripts/callgrind-build`);
//! this is its wall-time counterpart.
//! Run with `cargo bench -p ocf-cli --bench sheet -- --warm-up-time 1 --measurement-time 3`.

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};

fn fighter() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/characters/fighter-5.yaml")
}

fn bench(c: &mut Criterion) {
    let path = fighter();
    let mut group = c.benchmark_group("sheet");
    group.sample_size(20);
    group.bench_function("ocf sheet fighter-5 (pack built from its folder)", |b| {
        b.iter(|| {
            let file = ocf_cli::character::read(&path).expect("the fighter reads");
            let ruleset =
                ocf_cli::character::ruleset(&path, &file, &[]).expect("its pack builds and loads");
            ocf_engine::compute_sheet_call(&ruleset, &file.character, &[], &Default::default())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
