//! Small distributions in machine integers: when every term is plain dice (no reroll, no explosion),
//! summed, counted, or kept one from an end (advantage, `20d20kh1`), and every weight fits in
//! `u128`, the weights are worked out with `u128` arithmetic instead of big integers, and each
//! probability is reduced by one `u128` gcd. Anything else, or any overflow, returns `None` and the
//! general method (big integers, `distribution.rs`) answers, errors included. Both give the same
//! distribution (a test compares them).

use std::collections::BTreeMap;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::Zero;

use super::{Distribution, MAX_OUTCOMES};
use crate::limits::DiceLimits;
use crate::rules::TermRules;
use crate::value::DiceValue;

/// `w[i]` over `denom` for the outcome `lo + i`.
struct Small {
    lo: i64,
    w: Vec<u128>,
    denom: u128,
}

impl Small {
    fn convolve(&self, other: &Small, ops: &mut u64) -> Option<Small> {
        let width = self.w.len() + other.w.len() - 1;
        if width as u64 > MAX_OUTCOMES {
            return None;
        }
        let mut w = vec![0u128; width];
        for (i, a) in self.w.iter().enumerate().filter(|(_, a)| **a != 0) {
            for (j, b) in other.w.iter().enumerate() {
                w[i + j] = w[i + j].checked_add(a.checked_mul(*b)?)?;
            }
        }
        *ops += (self.w.len() * other.w.len()) as u64;
        Some(Small {
            lo: self.lo.checked_add(other.lo)?,
            w,
            denom: self.denom.checked_mul(other.denom)?,
        })
    }

    /// From (outcome, weight) pairs.
    fn from_pairs(pairs: &BTreeMap<i64, u128>, denom: u128) -> Option<Small> {
        let (&lo, _) = pairs.first_key_value()?;
        let (&hi, _) = pairs.last_key_value()?;
        let width = u64::try_from(i128::from(hi) - i128::from(lo) + 1).ok()?;
        if width > MAX_OUTCOMES {
            return None;
        }
        let mut w = vec![0u128; width as usize];
        for (&k, &v) in pairs {
            w[(k - lo) as usize] = v;
        }
        Some(Small { lo, w, denom })
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The distribution in `u128`, or `None` where the general method must answer.
pub(super) fn distribution(value: &DiceValue, limits: &DiceLimits) -> Option<Distribution> {
    let mut ops = 0u64;
    let mut total = Small {
        lo: value.flat,
        w: vec![1],
        denom: 1,
    };
    for term in &value.terms {
        if term.count > limits.max_dice_per_item {
            return None;
        }
        let rules = TermRules::new(term);
        if rules.explode.is_some() || rules.reroll.is_some() || rules.separate_explosions() {
            return None;
        }
        let n = term.count as usize;
        let (low, high) = rules.die.face_range();
        if high - low >= 1000 {
            return None;
        }
        // Each unit value (the clamped face: what keep and drop rank by) with its weight.
        let mut units: BTreeMap<i64, u128> = BTreeMap::new();
        for f in low..=high {
            *units.entry(rules.clamp(f)).or_default() += 1;
        }
        let s = (high - low + 1) as u128;
        let contribution = |v: i64| if rules.counts() { rules.score(v) } else { v };
        let denom = s.checked_pow(u32::try_from(n).ok()?)?;
        let (lo, hi) = rules.kept_ranks(n);
        let mut sum = if n == 0 || hi <= lo {
            Small {
                lo: 0,
                w: vec![denom],
                denom,
            }
        } else if (lo, hi) == (0, n) {
            let mut unit: BTreeMap<i64, u128> = BTreeMap::new();
            for (&v, &w) in &units {
                *unit.entry(contribution(v)).or_default() += w;
            }
            let unit = Small::from_pairs(&unit, s)?;
            // Repeated squaring.
            let mut result = Small {
                lo: 0,
                w: vec![1],
                denom: 1,
            };
            let mut base = unit;
            let mut k = n;
            loop {
                if k & 1 == 1 {
                    result = result.convolve(&base, &mut ops)?;
                }
                k >>= 1;
                if k == 0 {
                    break;
                }
                base = base.convolve(&base, &mut ops)?;
            }
            result
        } else if hi - lo == 1 && (hi == n || lo == 0) {
            // One kept from an end: F(v)^n - F(v-)^n, over the values in rank order.
            let ordered: Vec<(i64, u128)> = if lo == 0 {
                units.iter().rev().map(|(&v, &w)| (v, w)).collect()
            } else {
                units.iter().map(|(&v, &w)| (v, w)).collect()
            };
            let e = u32::try_from(n).ok()?;
            let mut pairs: BTreeMap<i64, u128> = BTreeMap::new();
            let (mut below, mut below_n) = (0u128, 0u128);
            for (v, w) in ordered {
                below += w;
                let up_to = below.checked_pow(e)?;
                *pairs.entry(contribution(v)).or_default() += up_to - below_n;
                below_n = up_to;
                ops += 1;
            }
            Small::from_pairs(&pairs, denom)?
        } else {
            return None;
        };
        if term.negative {
            sum.w.reverse();
            sum.lo = -(sum.lo.checked_add(sum.w.len() as i64 - 1)?);
        }
        total = total.convolve(&sum, &mut ops)?;
    }
    let outcomes = total
        .w
        .iter()
        .enumerate()
        .filter(|(_, w)| **w != 0)
        .map(|(i, &w)| {
            let g = gcd(w, total.denom);
            (
                total.lo + i as i64,
                BigRational::new_raw(BigInt::from(w / g), BigInt::from(total.denom / g)),
            )
        })
        .collect();
    Some(Distribution {
        outcomes,
        truncated: BigRational::zero(),
        cut_by: Vec::new(),
        work: ops,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Compare, CompareOp, DiceTerm, Die, Modifier};
    use proptest::prelude::*;

    proptest! {
        /// Wherever the `u128` method answers, it gives what the general method gives.
        #[test]
        fn machine_integers_agree_with_the_general_method(
            terms in proptest::collection::vec(
                (0u32..7, 1u32..13, 0usize..7, 1i64..8, any::<bool>()), 1..3),
            flat in -5i64..6,
        ) {
            let mut value = DiceValue::from_term(DiceTerm::new(1, Die::Sides(6), Vec::new()));
            value.terms.clear();
            value.flat = flat;
            for (count, sides, kind, k, negative) in terms {
                let modifiers = match kind {
                    0 => vec![],
                    1 => vec![Modifier::KeepHighest(1)],
                    2 => vec![Modifier::KeepLowest(1)],
                    3 => vec![Modifier::CountSuccesses(Compare { op: CompareOp::Ge, value: k })],
                    4 => vec![Modifier::Minimum(k)],
                    5 => vec![Modifier::Maximum(k), Modifier::KeepHighest(1)],
                    _ => vec![Modifier::CountSuccesses(Compare { op: CompareOp::Ge, value: k }), Modifier::KeepLowest(1)],
                };
                let mut term = DiceTerm::new(count, Die::Sides(sides), modifiers);
                term.negative = negative;
                value.terms.push(term);
            }
            let limits = DiceLimits::default();
            if let Some(fast) = distribution(&value, &limits) {
                let slow = super::super::general(&value, &limits, super::super::MAX_WORK).unwrap();
                prop_assert_eq!(fast.outcomes, slow.outcomes);
                prop_assert!(slow.truncated.is_zero());
            }
        }
    }

    #[test]
    fn the_benchmarks_plain_notations_take_machine_integers() {
        for text in ["8d6", "2d20kh1", "20d20kh1", "10d10cs>=7", "1000d20kl1"] {
            let n = ocf_syntax::dice::decode(text).unwrap();
            let value = DiceValue::from_term(DiceTerm::new(n.count.unwrap(), n.die, n.modifiers));
            assert!(
                distribution(&value, &DiceLimits::default()).is_some() || text == "1000d20kl1",
                "{text}"
            );
        }
    }
}
