//! Test helpers: dice values from notation, for tests only (the formula parser builds them for real).

use ocf_dice::{DiceTerm, DiceValue, Modifier};
use ocf_syntax::dice::decode;

/// `4d6dl1 + 1d4 - 2`: terms joined by ` + ` / ` - `, a trailing number is the flat part. A reroll
/// `count` has no notation: a term ending in `#N` (`4d6r1#1`) gives its reroll the count N.
#[allow(dead_code)]
pub fn dice(text: &str) -> DiceValue {
    let mut value = DiceValue::default();
    let mut negative = false;
    for token in text.split_whitespace() {
        match token {
            "+" => negative = false,
            "-" => negative = true,
            t if t.bytes().all(|b| b.is_ascii_digit()) => {
                let n: i64 = t.parse().unwrap();
                value.flat += if negative { -n } else { n };
            }
            t => {
                let (negative, t) = match t.strip_prefix('-') {
                    Some(rest) => (true, rest),
                    None => (negative, t),
                };
                let (t, reroll_count) = match t.split_once('#') {
                    Some((t, n)) => (t, Some(n.parse::<u32>().unwrap())),
                    None => (t, None),
                };
                let mut notation = decode(t).unwrap_or_else(|e| panic!("{t}: {e:?}"));
                if let Some(n) = reroll_count {
                    for m in &mut notation.modifiers {
                        if let Modifier::Reroll { count, .. } | Modifier::RerollOnce { count, .. } =
                            m
                        {
                            *count = Some(n);
                        }
                    }
                }
                value.terms.push(DiceTerm {
                    negative,
                    count: notation.count.unwrap(),
                    die: notation.die,
                    modifiers: notation.modifiers,
                });
            }
        }
    }
    value
}

/// Strategies for the property tests: every modifier the notation allows, with counts, compared
/// values and face bounds drawn from the given ranges.
#[allow(dead_code)]
pub mod strategies {
    use std::ops::Range;

    use ocf_dice::{Compare, CompareOp, Modifier};
    use proptest::prelude::*;

    pub fn compare(values: Range<i64>) -> impl Strategy<Value = Compare> + Clone {
        let op = prop_oneof![
            Just(CompareOp::Eq),
            Just(CompareOp::Lt),
            Just(CompareOp::Le),
            Just(CompareOp::Gt),
            Just(CompareOp::Ge)
        ];
        (op, values).prop_map(|(op, value)| Compare { op, value })
    }

    pub fn modifier(
        counts: Range<u32>,
        compared: Range<i64>,
        bounds: Range<i64>,
    ) -> impl Strategy<Value = Modifier> {
        let at = compare(compared);
        prop_oneof![
            counts.clone().prop_map(Modifier::KeepHighest),
            counts.clone().prop_map(Modifier::KeepLowest),
            counts.clone().prop_map(Modifier::DropHighest),
            counts.clone().prop_map(Modifier::DropLowest),
            proptest::option::of(at.clone()).prop_map(Modifier::Explode),
            proptest::option::of(at.clone()).prop_map(Modifier::ExplodeCompound),
            (at.clone(), proptest::option::of(counts.clone()))
                .prop_map(|(at, count)| Modifier::Reroll { at, count }),
            (at.clone(), proptest::option::of(counts))
                .prop_map(|(at, count)| Modifier::RerollOnce { at, count }),
            at.clone().prop_map(Modifier::CountSuccesses),
            at.prop_map(Modifier::CountFailures),
            bounds.clone().prop_map(Modifier::Minimum),
            bounds.prop_map(Modifier::Maximum),
        ]
    }
}
