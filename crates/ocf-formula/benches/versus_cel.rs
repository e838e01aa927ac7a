//! ocf's evaluator against `cel-interpreter` (the Rust CEL interpreter) on eight equivalent
//! expressions ([`cel_cases::CASES`]), each parsed once and evaluated in the benchmark's loop.
//! `cargo bench -p ocf-formula --bench versus_cel`; instruction counts, steadier on a shared
//! machine: `scripts/callgrind-counts` (through `examples/versus_cel.rs`).

use criterion::{Criterion, criterion_group, criterion_main};
use ocf_formula::Formula;

mod cel_cases;

fn bench(c: &mut Criterion) {
    let ocf_ctx = cel_cases::ocf_context();
    let cel_ctx = cel_cases::cel_context();
    for (name, ocf, cel) in cel_cases::CASES {
        let formula = Formula::parse(ocf).expect("the ocf formula parses");
        let program = cel_interpreter::Program::compile(cel).expect("the CEL program compiles");
        assert_eq!(
            format!("{:?}", formula.evaluate(&ocf_ctx).expect("ocf evaluates")),
            format!("{:?}", program.execute(&cel_ctx).expect("CEL evaluates")),
            "{name}: both give the same value"
        );
        let mut group = c.benchmark_group(*name);
        group.bench_function("ocf", |b| b.iter(|| formula.evaluate(&ocf_ctx)));
        group.bench_function("cel-interpreter", |b| b.iter(|| program.execute(&cel_ctx)));
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
