//! Rolling with the seeded dice function, and exact distributions, for the common notations.

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use ocf_dice::{DiceLimits, DiceTerm, DiceValue, Die, Modifier, SeededDice, distribution, roll};
use ocf_syntax::dice::decode;

fn term(text: &str) -> DiceTerm {
    let n = decode(text).expect("a valid literal");
    DiceTerm::new(n.count.expect("a count"), n.die, n.modifiers)
}

fn notations() -> Vec<(&'static str, DiceValue)> {
    let mut adv = DiceValue::from_term(term("2d20kh1"));
    adv.flat = 5;
    // `4d6r1` rerolling at most one die: the count has no notation.
    let mut reroll_one = term("4d6r1");
    for m in &mut reroll_one.modifiers {
        if let Modifier::Reroll { count, .. } = m {
            *count = Some(1);
        }
    }
    vec![
        ("8d6", DiceValue::from_term(term("8d6"))),
        ("4d6dl1", DiceValue::from_term(term("4d6dl1"))),
        ("2d20kh1 + 5", adv),
        ("10d10cs>=7", DiceValue::from_term(term("10d10cs>=7"))),
        (
            "1d6!",
            DiceValue::from_term(DiceTerm::new(
                1,
                Die::Sides(6),
                vec![Modifier::Explode(None)],
            )),
        ),
        ("4d6!kh3", DiceValue::from_term(term("4d6!kh3"))),
        ("4d6r1 (count 1)", DiceValue::from_term(reroll_one)),
        ("10d10!kh5", DiceValue::from_term(term("10d10!kh5"))),
        ("3d10!dl1", DiceValue::from_term(term("3d10!dl1"))),
        ("20d20kh1", DiceValue::from_term(term("20d20kh1"))),
        ("4d6kh3", DiceValue::from_term(term("4d6kh3"))),
    ]
}

fn bench(c: &mut Criterion) {
    let limits = DiceLimits::default();
    for (name, value) in notations() {
        let mut dice = SeededDice::new(1);
        c.bench_function(&format!("roll {name}"), |b| {
            b.iter(|| roll(black_box(&value), &mut dice, &limits).unwrap())
        });
        c.bench_function(&format!("distribution {name}"), |b| {
            b.iter(|| distribution(black_box(&value), &limits).unwrap())
        });
    }
}

/// The distributions of issue 10: each answered or refused, within about a second, by the work
/// bound (`distribution/work.rs`). Refusals are measured as well: they must come early.
fn large() -> Vec<&'static str> {
    vec![
        "200d100",
        "1000d20",
        "200d6r2",
        "10d10!!",
        "1000d6kh999",
        "1000d6kh3",
        "1000d20kl1",
        "1000d20kh3",
        "1000d1000cs>500",
        "8d10!!",
        "1d1!",
        "3d10!dl1",
        "4d10!dl1",
        "1000d100",
        "1000d6dl1dh1",
        "1000d20kh999",
        "1d100!>1",
        "6d20!>=2kh3",
    ]
}

fn bench_large(c: &mut Criterion) {
    let limits = DiceLimits::default();
    let mut group = c.benchmark_group("large");
    group.sample_size(10);
    for name in large() {
        let value = DiceValue::from_term(term(name));
        let outcome = match distribution(&value, &limits) {
            Ok(d) => format!("{} outcomes", d.outcomes.len()),
            Err(e) => e.code().to_string(),
        };
        eprintln!("{name}: {outcome}");
        group.bench_function(name, |b| {
            b.iter(|| distribution(black_box(&value), &limits).map(|d| d.outcomes.len()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench, bench_large);
criterion_main!(benches);
