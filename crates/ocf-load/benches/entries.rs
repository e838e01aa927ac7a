//! The build of generated packs of N and 10·N entries of one kind (rules effects, content items,
//! tags), to see pack reading linear in the entries of a file: the 10·N case should cost about ten
//! times the N case. Run with
//! `cargo bench -p ocf-load --bench entries -- --warm-up-time 1 --measurement-time 5`.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use ocf_load::build::{BuildOptions, build_files};

const MANIFEST: &str = "id: gen\nversion: 0.1.0\nspecVersion: 1.0.0\n";
const RULES_HEAD: &str = "fields:\n  score: { type: integer, default: 0 }\n  level: { type: integer, input: true, default: 1 }\ncontentTypes:\n  thing: { fields: { n: { type: integer, default: 0 } } }\n";

/// The files of a pack with `n` entries of `kind`, each written as authors write them.
pub fn pack(kind: &str, n: usize) -> Vec<(String, String)> {
    let mut rules = String::from(RULES_HEAD);
    let mut content = String::new();
    match kind {
        "effects" => {
            rules.push_str("effects:\n");
            for i in 0..n {
                rules.push_str(&format!(
                    "  - {{ id: e{i}, target: score, op: add, value: 'level + {}', when: 'level > {}' }}\n",
                    i % 7,
                    i % 5
                ));
            }
        }
        "content" => {
            rules.push_str("tags: [kind.a, kind.b]\n");
            for i in 0..n {
                content.push_str(&format!(
                    "- {{ id: c{i}, type: thing, tags: [kind.{}], fields: {{ n: {} }} }}\n",
                    if i % 2 == 0 { "a" } else { "b" },
                    i % 7
                ));
            }
        }
        "tags" => {
            rules.push_str("tags:\n");
            for i in 0..n {
                rules.push_str(&format!("  - group{}.t{i}\n", i % 10));
            }
        }
        _ => unreachable!(),
    }
    let mut files = vec![
        ("pack.yaml".to_owned(), MANIFEST.to_owned()),
        ("rules/main.yaml".to_owned(), rules),
    ];
    if !content.is_empty() {
        files.push(("content/items.yaml".to_owned(), content));
    }
    files
}

fn bench(c: &mut Criterion) {
    let options = BuildOptions::default();
    for (kind, n) in [("effects", 2_000), ("content", 1_000), ("tags", 2_000)] {
        let mut group = c.benchmark_group(format!("build {kind}"));
        group.sample_size(10);
        for size in [n, 10 * n] {
            let files = pack(kind, size);
            assert!(
                build_files(&files, &options).release.is_some(),
                "the generated pack builds"
            );
            group.bench_with_input(BenchmarkId::from_parameter(size), &files, |b, files| {
                b.iter(|| build_files(files, &options))
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
