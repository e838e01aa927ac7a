//! Exact distributions: known values, and agreement with the roller itself over every sequence of
//! faces (a brute-force oracle, for small dice and small limits).

mod common;

use std::collections::BTreeMap;

use common::dice;
use expect_test::expect;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Zero};
use ocf_dice::{
    Compare, CompareOp, DiceError, DiceLimits, DiceTerm, DiceValue, Die, FixedFaces, Modifier,
    distribution, roll,
};
use proptest::prelude::*;

fn ratio(n: i64, d: i64) -> BigRational {
    BigRational::new(BigInt::from(n), BigInt::from(d))
}

/// Every way the roller can go, found by asking for one more face whenever it runs out.
fn oracle(notation: &str, limits: &DiceLimits) -> (BTreeMap<i64, BigRational>, BigRational) {
    oracle_of(&dice(notation), limits)
}

fn oracle_of(
    value: &ocf_dice::DiceValue,
    limits: &DiceLimits,
) -> (BTreeMap<i64, BigRational>, BigRational) {
    fn explore(
        value: &ocf_dice::DiceValue,
        limits: &DiceLimits,
        prefix: &mut Vec<i64>,
        p: BigRational,
        out: &mut (BTreeMap<i64, BigRational>, BigRational),
    ) {
        match roll(value, &mut FixedFaces::new(prefix.clone()), limits) {
            Ok(r) => *out.0.entry(r.total).or_insert_with(BigRational::zero) += p,
            Err(DiceError::SafetyLimitExceeded { .. }) => out.1 += p,
            Err(DiceError::NoMoreFaces { request }) => {
                let (low, high) = request.die.face_range();
                let share = &p / BigInt::from(high - low + 1);
                for face in low..=high {
                    prefix.push(face);
                    explore(value, limits, prefix, share.clone(), out);
                    prefix.pop();
                }
            }
            Err(e) => panic!("{e}"),
        }
    }
    let mut out = (BTreeMap::new(), BigRational::zero());
    explore(value, limits, &mut Vec::new(), BigRational::one(), &mut out);
    out
}

#[test]
fn the_distribution_is_what_the_roller_does() {
    let limits = DiceLimits {
        max_explosions: 2,
        max_rerolls: 2,
        max_dice_per_item: 10,
    };
    for notation in [
        "2d6",
        "3d4dl1",
        "3d4dh1kl1",
        "4d3kh2",
        "3d4kh1 - 2",
        "2d4 - 1d6 + 3",
        "1d6!",
        "2d4!",
        "1d4!>2",
        "2d4!!kh1",
        "2d4!!cs>=4",
        "3d4!cs>=3",
        "2d4r1",
        "2d4ro<2",
        "1d4r<=3",
        "2d4ro1!",
        "3d4ro1kh2",
        "3d6cs>=5cf1",
        "4dF",
        "3dFkh2",
        "2dF!",
        "3d4min2max3",
        "3d4min3dl1",
        "2d4!!min2",
        "1d1!",
        "1d1r1",
        "0d6 + 2",
        "3d4cf1kl2",
        // `!` with keep and drop: explosions add units that are ranked on their own.
        "2d4!kh1",
        "2d3!kl1",
        "3d3!dl1",
        "2d4!dh1",
        "2d3!kh2kl1",
        "2d3!dl1dh1",
        "2d4!>=3kh1",
        "2d3!cs>=2kh2",
        "2d3!min2kh1",
        "2d3!ro1kh1",
        "2dF!kh1",
        // A reroll count below the number of dice: the lowest matching faces are rerolled.
        "3d3r1#1",
        "3d4r<=2#1",
        "3d4r<=2#2",
        "3d4ro<=2#2",
        "4d3ro<=2#1",
        "3d3r<=2kh1#1",
        "3d3ro1dl1#2",
        "3d3r1!#1",
        "3d3r1!!#2",
        "2d3r1!kh1#1",
        "3d3r<=2!kh2#1",
        "3d3r1cs>=3#1",
        "3d3r1#5",
        "3d3r1#0",
    ] {
        let (outcomes, truncated) = oracle(notation, &limits);
        let d =
            distribution(&dice(notation), &limits).unwrap_or_else(|e| panic!("{notation}: {e}"));
        assert_eq!(d.outcomes, outcomes, "{notation}");
        assert_eq!(d.truncated, truncated, "{notation}");
    }
}

#[test]
fn known_distributions() {
    let limits = DiceLimits::default();
    let d = distribution(&dice("2d6"), &limits).unwrap();
    assert_eq!(d.probability(7), ratio(1, 6));
    assert_eq!(d.probability(2), ratio(1, 36));
    // Advantage: P(max of two d20 = 20) = 39/400.
    let adv = distribution(&dice("2d20kh1 + 5"), &limits).unwrap();
    assert_eq!(adv.probability(25), ratio(39, 400));
    assert_eq!(adv.probability(6), ratio(1, 400));
    // 4d6 drop lowest: 18 needs four... only 6,6,6,x with x any: 21/1296.
    let stats = distribution(&dice("4d6dl1"), &limits).unwrap();
    assert_eq!(stats.probability(18), ratio(21, 1296));
    assert_eq!(stats.probability(3), ratio(1, 1296));
    // Ten d10 counting 7+: binomial(10, 0.4).
    let pool = distribution(&dice("10d10cs>=7"), &limits).unwrap();
    assert_eq!(
        pool.probability(10),
        BigRational::new(BigInt::from(4).pow(10), BigInt::from(10).pow(10))
    );
    // An explosion chain cut off at the limit: 1d6! with 100 explosions leaves (1/6)^101.
    let boom = distribution(&dice("1d6!"), &limits).unwrap();
    assert_eq!(
        boom.truncated,
        BigRational::new(BigInt::one(), BigInt::from(6).pow(101))
    );
    assert_eq!(boom.probability(13), ratio(1, 216));
    assert!(ocf_dice::distribution::ratio_to_f64(&boom.truncated) > 0.0);
    for d in [&d, &adv, &stats, &pool, &boom] {
        let sum: BigRational = d.outcomes.values().sum();
        assert_eq!(sum + &d.truncated, BigRational::one());
    }
}

#[test]
fn unsupported_and_too_large_say_so() {
    let limits = DiceLimits::default();
    let err = |n: &str| {
        distribution(&dice(n), &limits)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let long_chains = DiceLimits {
        max_explosions: 1001,
        ..limits
    };
    expect!["no exact distribution: maxExplosions above 1000"].assert_eq(
        &distribution(&dice("2d6!kh1"), &long_chains)
            .unwrap_err()
            .to_string(),
    );
    expect!["the distribution would have about 1000000000 outcomes, more than 20000"]
        .assert_eq(&err("1d1000000000"));
    expect!["the distribution would have about 999001 outcomes, more than 20000"]
        .assert_eq(&err("1000d1000"));
    expect!["the roll needs more than maxDicePerItem (1000)"].assert_eq(&err("1001d6"));
}

#[test]
fn known_distributions_of_pools() {
    let limits = DiceLimits::default();
    let six = BigInt::from(6);
    // `2d6!kh1`: the highest face of either chain. A 6 explodes but nothing beats it, so 6 is
    // "either die shows 6" (11/36) less the rolls where a chain passes 100 explosions.
    let d = distribution(&dice("2d6!kh1"), &limits).unwrap();
    let cut = BigRational::new(BigInt::from(2) * six.pow(101) - 1, six.pow(202));
    assert_eq!(d.truncated, cut);
    assert_eq!(d.probability(6), ratio(11, 36) - &cut);
    assert_eq!(d.probability(5), ratio(9, 36));
    assert_eq!(d.probability(1), ratio(1, 36));
    // `4d6ro1` rerolling one die: 4 needs four 1s and the reroll a 1 (1/6^5); 5 needs that with
    // the reroll a 2, or three 1s and a 2 (4 ways) with the reroll a 1.
    let once = distribution(&dice("4d6ro1#1"), &limits).unwrap();
    assert_eq!(once.probability(4), ratio(1, 7776));
    assert_eq!(once.probability(5), ratio(5, 7776));
    assert!(once.truncated.is_zero());
    // `3d4!kh1` never passes 4, and with the limit at one explosion, two 4s in a chain cut it.
    let short = DiceLimits {
        max_explosions: 1,
        ..limits
    };
    let d = distribution(&dice("3d4!kh1"), &short).unwrap();
    assert_eq!(d.outcomes.keys().copied().collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert_eq!(d.probability(3), ratio(27 - 8, 64));
    // P(no chain cut) = (1 - 1/16)^3.
    assert_eq!(d.truncated, ratio(1, 1) - ratio(15 * 15 * 15, 16 * 16 * 16));
}

#[test]
fn floats_keep_their_precision() {
    let d = distribution(&dice("3d6"), &DiceLimits::default()).unwrap();
    let floats: BTreeMap<i64, f64> = d.to_f64().into_iter().collect();
    assert_eq!(floats[&10], 27.0 / 216.0);
    // Far below what `numerator as f64 / denominator as f64` could give (both overflow to inf).
    let tiny = ocf_dice::distribution::ratio_to_f64(&BigRational::new(
        BigInt::one(),
        BigInt::from(6).pow(100),
    ));
    let expected = (0..100).fold(1.0f64, |p, _| p / 6.0);
    assert!(
        (tiny / expected - 1.0).abs() < 1e-13,
        "{tiny} vs {expected}"
    );
    let subnormal = ocf_dice::distribution::ratio_to_f64(&BigRational::new(
        BigInt::one(),
        BigInt::from(2).pow(1070),
    ));
    assert_eq!(subnormal, f64::from_bits(1 << 4));
    let third = ocf_dice::distribution::ratio_to_f64(&ratio(1, 3));
    assert_eq!(third, 1.0 / 3.0);
}

fn compare() -> impl Strategy<Value = Compare> {
    common::strategies::compare(-1..5)
}

/// Modifiers that pools are made of: `!`, keep and drop, rerolls with a count, and the ones that
/// change what a face counts for.
fn pool_modifier() -> impl Strategy<Value = Modifier> {
    common::strategies::modifier(0..4, -1..5, 0..4)
}

fn small_term() -> impl Strategy<Value = DiceTerm> {
    let die = prop_oneof![(1u32..4).prop_map(Die::Sides), Just(Die::Fate)];
    (
        any::<bool>(),
        0u32..4,
        die,
        proptest::collection::vec(pool_modifier(), 0..4),
    )
        .prop_map(|(negative, count, die, modifiers)| DiceTerm {
            negative,
            count,
            die,
            modifiers,
        })
}

/// A term that needs a pool: `!` with a keep or drop, or a reroll whose count is below the dice,
/// with other modifiers around it.
fn pool_term() -> impl Strategy<Value = DiceTerm> {
    let keep = prop_oneof![
        (0u32..4).prop_map(Modifier::KeepHighest),
        (0u32..4).prop_map(Modifier::KeepLowest),
        (0u32..4).prop_map(Modifier::DropHighest),
        (0u32..4).prop_map(Modifier::DropLowest),
    ];
    let core = prop_oneof![
        (proptest::option::of(compare()), keep)
            .prop_map(|(at, keep)| vec![Modifier::Explode(at), keep]),
        (compare(), any::<bool>(), 1u32..3).prop_map(|(at, once, count)| {
            let count = Some(count);
            vec![if once {
                Modifier::RerollOnce { at, count }
            } else {
                Modifier::Reroll { at, count }
            }]
        }),
    ];
    let die = prop_oneof![(1u32..4).prop_map(Die::Sides), Just(Die::Fate)];
    (
        2u32..4,
        die,
        core,
        proptest::collection::vec(pool_modifier(), 0..3),
        any::<bool>(),
    )
        .prop_map(|(count, die, core, extra, extra_first)| {
            let modifiers = if extra_first {
                extra.into_iter().chain(core).collect()
            } else {
                core.into_iter().chain(extra).collect()
            };
            DiceTerm::new(count, die, modifiers)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Terms that need a pool give what the roller gives over every face sequence.
    #[test]
    fn pools_agree_with_the_roller(term in pool_term()) {
        let limits = DiceLimits {
            max_explosions: 2,
            max_rerolls: 1,
            max_dice_per_item: 3,
        };
        let value = DiceValue::from_term(term);
        let (outcomes, truncated) = oracle_of(&value, &limits);
        let d = distribution(&value, &limits).unwrap();
        prop_assert_eq!(d.outcomes, outcomes, "{}", value);
        prop_assert_eq!(d.truncated, truncated, "{}", value);
    }

    /// Small terms, pools among them, give what the roller gives over every face sequence.
    #[test]
    fn small_terms_agree_with_the_roller(term in small_term(), flat in -3i64..3) {
        let limits = DiceLimits {
            max_explosions: 2,
            max_rerolls: 1,
            max_dice_per_item: 3,
        };
        let value = DiceValue { terms: vec![term], flat };
        let (outcomes, truncated) = oracle_of(&value, &limits);
        let d = distribution(&value, &limits).unwrap();
        prop_assert_eq!(d.outcomes, outcomes, "{}", value);
        prop_assert_eq!(d.truncated, truncated, "{}", value);
    }
}

#[test]
fn pools_at_the_edges_of_i64() {
    let limits = DiceLimits {
        max_explosions: 1,
        max_rerolls: 1,
        max_dice_per_item: 10,
    };
    // Faces lowered to the least i64: one kept is fine, two overflow the total, as in the roller.
    let lowest = |keep: u32| {
        DiceValue::from_term(DiceTerm::new(
            2,
            Die::Sides(2),
            vec![
                Modifier::Explode(None),
                Modifier::Maximum(i64::MIN),
                Modifier::KeepHighest(keep),
            ],
        ))
    };
    let d = distribution(&lowest(1), &limits).unwrap();
    assert_eq!(d.outcomes.keys().copied().collect::<Vec<_>>(), [i64::MIN]);
    // Dropping the lowest keeps the sum of every unit beside it, which passes i64 on the way: two
    // dice (an explosion that never happens) at i64::MIN, one dropped.
    let drop_one = DiceValue::from_term(DiceTerm::new(
        2,
        Die::Sides(2),
        vec![
            Modifier::Explode(Some(Compare {
                op: CompareOp::Gt,
                value: 5,
            })),
            Modifier::Maximum(i64::MIN),
            Modifier::DropLowest(1),
        ],
    ));
    let (outcomes, _) = oracle_of(&drop_one, &limits);
    assert_eq!(outcomes.keys().copied().collect::<Vec<_>>(), [i64::MIN]);
    assert_eq!(distribution(&drop_one, &limits).unwrap().outcomes, outcomes);
    assert_eq!(
        distribution(&lowest(2), &limits).unwrap_err().code(),
        "overflow"
    );
    let faces = FixedFaces::new(vec![1, 1]);
    assert_eq!(
        roll(&lowest(2), &mut { faces }, &limits)
            .unwrap_err()
            .code(),
        "overflow"
    );
}

/// Issue 10's distributions: sums of many dice, keep of many dice and counting are answered
/// exactly; those past the work bound are refused with a code (never a long wait: the bound is
/// counted in operations, `docs/perf.md` has the times).
#[test]
fn many_dice_are_answered_exactly_or_refused() {
    let limits = DiceLimits::default();
    let sums_to_one = |d: &ocf_dice::Distribution| {
        let sum: BigRational = d.outcomes.values().sum();
        sum + &d.truncated == BigRational::one()
    };
    let pow = |b: i64, e: u32| BigInt::from(b).pow(e);
    let d = distribution(&dice("200d100"), &limits).unwrap();
    assert_eq!(d.outcomes.len(), 19801);
    assert_eq!(
        d.probability(200),
        BigRational::new(BigInt::one(), pow(100, 200))
    );
    assert_eq!(
        d.probability(201),
        BigRational::new(BigInt::from(200), pow(100, 200))
    );
    assert!(sums_to_one(&d));
    let d = distribution(&dice("1000d20"), &limits).unwrap();
    assert_eq!(d.outcomes.len(), 19001);
    assert_eq!(
        d.probability(1001),
        BigRational::new(BigInt::from(1000), pow(20, 1000))
    );
    assert!(sums_to_one(&d));
    // Keep the highest 999 of 1000: the most needs 999 sixes or more (5 · 1000 + 1 ways).
    let d = distribution(&dice("1000d6kh999"), &limits).unwrap();
    assert_eq!(
        d.probability(5994),
        BigRational::new(BigInt::from(5001), pow(6, 1000))
    );
    assert_eq!(
        d.probability(999),
        BigRational::new(BigInt::one(), pow(6, 1000))
    );
    assert!(sums_to_one(&d));
    // Keep the highest 3 of 1000: 3 needs every die a 1.
    let d = distribution(&dice("1000d6kh3"), &limits).unwrap();
    assert_eq!(
        d.outcomes.keys().copied().collect::<Vec<_>>(),
        (3..=18).collect::<Vec<_>>()
    );
    assert_eq!(
        d.probability(3),
        BigRational::new(BigInt::one(), pow(6, 1000))
    );
    assert!(sums_to_one(&d));
    // Counting successes of 1000 dice has 1001 outcomes: binomial(1000, 1/2).
    let d = distribution(&dice("1000d1000cs>500"), &limits).unwrap();
    assert_eq!(d.outcomes.len(), 1001);
    assert_eq!(
        d.probability(1000),
        BigRational::new(BigInt::one(), pow(2, 1000))
    );
    // Rerolled dice: every face but 2, each 1/5.
    let d = distribution(&dice("200d6r2"), &limits).unwrap();
    assert_eq!(d.outcomes.len(), 1000);
    assert_eq!(
        d.probability(200),
        BigRational::new(BigInt::one(), pow(5, 200)) * (BigRational::one() - &d.truncated)
    );
    // Faces far from zero span few outcomes: keep and drop rank the values, never zero.
    let d = distribution(&dice("3d20min1000000kh2"), &limits).unwrap();
    assert_eq!(d.outcomes.keys().copied().collect::<Vec<_>>(), [2000000]);
    let d = distribution(&dice("1000d20min5000000dl1"), &limits).unwrap();
    assert_eq!(d.outcomes.keys().copied().collect::<Vec<_>>(), [4995000000]);
    let code = |n: &str| {
        distribution(&dice(n), &limits)
            .map(|_| ())
            .unwrap_err()
            .code()
    };
    assert_eq!(code("10d10!!"), "distribution-too-large");
    assert_eq!(code("1000d100"), "distribution-too-large");
    assert_eq!(code("1000d6dl1dh1"), "distribution-too-large");
}

#[test]
fn a_distribution_cut_by_a_limit_names_it() {
    let limits = DiceLimits::default();
    let d = distribution(&dice("1d1!"), &limits).unwrap();
    assert!(d.outcomes.is_empty());
    assert_eq!(d.truncated, BigRational::one());
    assert_eq!(d.cut_by, ["maxExplosions"]);
    let d = distribution(&dice("1d20r<=19 + 1d6!"), &limits).unwrap();
    assert_eq!(d.cut_by, ["maxExplosions", "maxRerolls"]);
    assert!(
        distribution(&dice("2d6"), &limits)
            .unwrap()
            .cut_by
            .is_empty()
    );
    assert!(
        distribution(&dice("1d6ro6"), &limits)
            .unwrap()
            .cut_by
            .is_empty()
    );
}
