//! Properties over any dice value the notation allows: rolling never panics, the total is the sum
//! of the items, and a distribution's outcomes and truncated mass sum to one.

mod common;

use num_rational::BigRational;
use num_traits::One;
use ocf_dice::{Compare, CompareOp, DiceLimits, DiceTerm, DiceValue, Die, Modifier, SeededDice};
use proptest::prelude::*;

fn compare() -> impl Strategy<Value = Compare> {
    let op = prop_oneof![
        Just(CompareOp::Eq),
        Just(CompareOp::Lt),
        Just(CompareOp::Le),
        Just(CompareOp::Gt),
        Just(CompareOp::Ge)
    ];
    (op, -2i64..25).prop_map(|(op, value)| Compare { op, value })
}

fn modifier() -> impl Strategy<Value = Modifier> {
    prop_oneof![
        (0u32..6).prop_map(Modifier::KeepHighest),
        (0u32..6).prop_map(Modifier::KeepLowest),
        (0u32..6).prop_map(Modifier::DropHighest),
        (0u32..6).prop_map(Modifier::DropLowest),
        proptest::option::of(compare()).prop_map(Modifier::Explode),
        proptest::option::of(compare()).prop_map(Modifier::ExplodeCompound),
        (compare(), proptest::option::of(0u32..6))
            .prop_map(|(at, count)| Modifier::Reroll { at, count }),
        (compare(), proptest::option::of(0u32..6))
            .prop_map(|(at, count)| Modifier::RerollOnce { at, count }),
        compare().prop_map(Modifier::CountSuccesses),
        compare().prop_map(Modifier::CountFailures),
        (-3i64..25).prop_map(Modifier::Minimum),
        (-3i64..25).prop_map(Modifier::Maximum),
    ]
}

fn term() -> impl Strategy<Value = DiceTerm> {
    let die = prop_oneof![
        (1u32..21).prop_map(Die::Sides),
        Just(Die::Percent),
        Just(Die::Fate),
        Just(Die::Sides(u32::MAX)),
    ];
    (
        any::<bool>(),
        0u32..7,
        die,
        proptest::collection::vec(modifier(), 0..4),
    )
        .prop_map(|(negative, count, die, modifiers)| DiceTerm {
            negative,
            count,
            die,
            modifiers,
        })
}

fn value() -> impl Strategy<Value = DiceValue> {
    let flat = prop_oneof![-20i64..20, Just(i64::MAX), Just(i64::MIN)];
    (proptest::collection::vec(term(), 0..3), flat)
        .prop_map(|(terms, flat)| DiceValue { terms, flat })
}

const LIMITS: DiceLimits = DiceLimits {
    max_explosions: 5,
    max_rerolls: 5,
    max_dice_per_item: 5,
};

proptest! {
    #[test]
    fn rolling_never_panics_and_adds_up(v in value(), seed in any::<u64>()) {
        if let Ok(r) = ocf_dice::roll(&v, &mut SeededDice::new(seed), &LIMITS) {
            prop_assert_eq!(r.total, r.items.iter().map(|i| i.value).sum::<i64>());
            for item in r.items.iter().filter(|i| i.faces.is_some()) {
                let faces = item.faces.as_ref().unwrap();
                prop_assert!(faces.len() >= item.count.unwrap() as usize);
                prop_assert!(faces.iter().all(|f| !(f.kept && f.rerolled)));
            }
        }
    }

    #[test]
    fn distributions_sum_to_one(v in value()) {
        let small = DiceValue {
            terms: v.terms.into_iter().filter(|t| t.die != Die::Sides(u32::MAX)).collect(),
            flat: v.flat.clamp(-100, 100),
        };
        if let Ok(d) = ocf_dice::distribution(&small, &LIMITS) {
            let sum: BigRational = d.outcomes.values().sum();
            prop_assert_eq!(sum + &d.truncated, BigRational::one());
        }
    }
}
