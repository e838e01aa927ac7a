//! The lowest and highest total a dice value can roll, each die rolled once (`maxOf` / `minOf`),
//! worked out from the same rules the roller follows (`rules.rs`), so that they count a die as
//! the roller and the distribution do.

use crate::rules::TermRules;
use crate::value::{DiceTerm, DiceValue, Overflow};

/// `(minOf, maxOf)`: keep and drop reduce the dice counted, `min`/`max` clamp the faces, and
/// with counting each kept die counts its score (`TermRules::score`: 1 for a success, -1 for a
/// failure, and with `cf` alone 1 for a failure). Explosions and rerolls are not followed: an
/// exploding die has no highest total, so each die is rolled once.
pub fn bounds(value: &DiceValue) -> Result<(i64, i64), Overflow> {
    let mut low = i128::from(value.flat);
    let mut high = low;
    for term in &value.terms {
        let (lo, hi) = term_bounds(term);
        if term.negative {
            low -= hi;
            high -= lo;
        } else {
            low += lo;
            high += hi;
        }
    }
    let narrow = |v: i128| i64::try_from(v).map_err(|_| Overflow);
    Ok((narrow(low)?, narrow(high)?))
}

fn term_bounds(term: &DiceTerm) -> (i128, i128) {
    let rules = TermRules::new(term);
    let n = term.count as usize;
    let (lo, hi) = rules.kept_ranks(n);
    let kept = (hi - lo) as i128;
    let (face_lo, face_hi) = term.die.face_range();
    // Clamping is monotone, so a die's values are every integer between its clamped ends.
    let (a, b) = (rules.clamp(face_lo), rules.clamp(face_hi));
    let (per_lo, per_hi) = if !rules.counts() {
        (i128::from(a), i128::from(b))
    } else {
        // A die's score is constant between the values its comparisons name, so the ends and
        // the values around each compared value cover every score it can have.
        let mut values = vec![a, b];
        for c in rules.successes.iter().chain(&rules.failures) {
            for v in [
                c.value.saturating_sub(1),
                c.value,
                c.value.saturating_add(1),
            ] {
                if (a..=b).contains(&v) {
                    values.push(v);
                }
            }
        }
        let scores = values.into_iter().map(|v| i128::from(rules.score(v)));
        scores.fold((i128::MAX, i128::MIN), |(l, h), s| (l.min(s), h.max(s)))
    };
    // Every die showing the same value reaches `kept` times its value or score.
    (kept * per_lo, kept * per_hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Compare, CompareOp, Die, Modifier};

    fn term(count: u32, die: Die, modifiers: Vec<Modifier>) -> DiceValue {
        DiceValue::from_term(DiceTerm::new(count, die, modifiers))
    }

    #[test]
    fn bounds_follow_the_modifiers() {
        use Modifier::*;
        let ge5 = Compare {
            op: CompareOp::Ge,
            value: 5,
        };
        for (dice, expected) in [
            (term(2, Die::Sides(6), vec![]), (2, 12)),
            (term(2, Die::Sides(20), vec![KeepHighest(1)]), (1, 20)),
            (term(4, Die::Sides(6), vec![DropLowest(1)]), (3, 18)),
            (term(1, Die::Sides(20), vec![Minimum(10)]), (10, 20)),
            (term(1, Die::Sides(20), vec![Maximum(15)]), (1, 15)),
            (term(5, Die::Sides(6), vec![CountSuccesses(ge5)]), (0, 5)),
            (
                term(
                    5,
                    Die::Sides(6),
                    vec![CountSuccesses(ge5), CountFailures(Compare::eq(1))],
                ),
                (-5, 5),
            ),
            // `cf` alone counts the failures, as the roller does.
            (
                term(3, Die::Sides(6), vec![CountFailures(Compare::eq(1))]),
                (0, 3),
            ),
            (
                term(3, Die::Sides(6), vec![CountFailures(Compare::eq(1))])
                    .negate()
                    .unwrap(),
                (-3, 0),
            ),
            (term(4, Die::Fate, vec![]), (-4, 4)),
            (term(1, Die::Percent, vec![]), (1, 100)),
            (term(1, Die::Sides(6), vec![Explode(None)]), (1, 6)),
            (
                term(1, Die::Sides(4), vec![])
                    .negate()
                    .unwrap()
                    .add(&DiceValue::flat(3))
                    .unwrap(),
                (-1, 2),
            ),
            (DiceValue::flat(7), (7, 7)),
        ] {
            assert_eq!(bounds(&dice), Ok(expected), "{dice}");
        }
    }
}
