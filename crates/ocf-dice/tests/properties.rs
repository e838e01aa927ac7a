//! Properties over any dice value the notation allows: rolling never panics, the total is the sum
//! of the items, and a distribution's outcomes and truncated mass sum to one.

mod common;

use num_rational::BigRational;
use num_traits::One;
use ocf_dice::{DiceLimits, DiceTerm, DiceValue, Die, Modifier, SeededDice};
use proptest::prelude::*;

fn modifier() -> impl Strategy<Value = Modifier> {
    common::strategies::modifier(0..6, -2..25, -3..25)
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
