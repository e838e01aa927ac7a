//! The seeded roller against the exact distributions: a chi-square goodness-of-fit test per
//! notation, with a fixed seed so the outcome never changes from run to run.

mod common;

use std::collections::BTreeMap;

use common::dice;
use ocf_dice::{DiceLimits, SeededDice, distribution, roll};

/// The chi-square statistic's critical value at p = 0.001 (Wilson–Hilferty approximation).
fn critical(df: f64) -> f64 {
    let z = 3.09;
    let a = 2.0 / (9.0 * df);
    df * (1.0 - a + z * a.sqrt()).powi(3)
}

#[test]
fn seeded_rolls_follow_the_exact_distribution() {
    const ROLLS: usize = 20_000;
    let limits = DiceLimits::default();
    let mut dice_fn = SeededDice::new(0x0CF_D1CE);
    for notation in [
        "1d6",
        "2d6",
        "3d6",
        "1d20",
        "4d6dl1",
        "2d20kh1 + 5",
        "2d20kl1",
        "10d10cs>=7",
        "1d6!",
        "2d6!!kh1",
        "1d20ro1",
        "4dF",
        "1d%",
        "3d8r<2min3 - 1d4",
    ] {
        let value = dice(notation);
        let exact = distribution(&value, &limits).unwrap();
        let mut seen: BTreeMap<i64, usize> = BTreeMap::new();
        for _ in 0..ROLLS {
            *seen
                .entry(roll(&value, &mut dice_fn, &limits).unwrap().total)
                .or_default() += 1;
        }
        assert!(
            seen.keys().all(|k| exact.outcomes.contains_key(k)),
            "{notation}: impossible total"
        );
        // Pool outcomes in order until each bin expects at least 5 rolls.
        let (mut bins, mut expected, mut observed) = (Vec::new(), 0.0, 0usize);
        for (k, p) in exact.to_f64() {
            expected += p * ROLLS as f64;
            observed += seen.get(&k).copied().unwrap_or(0);
            if expected >= 5.0 {
                bins.push((expected, observed));
                (expected, observed) = (0.0, 0);
            }
        }
        if let Some(last) = bins.last_mut() {
            last.0 += expected;
            last.1 += observed;
        }
        let chi2: f64 = bins.iter().map(|&(e, o)| (o as f64 - e).powi(2) / e).sum();
        let df = (bins.len() - 1) as f64;
        assert!(
            chi2 < critical(df),
            "{notation}: chi-square {chi2:.1} with {df} degrees of freedom"
        );
    }
}
