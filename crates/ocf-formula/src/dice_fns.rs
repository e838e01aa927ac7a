//! What the dice functions `dieOf`, `maxOf` and `minOf` work out from a dice value, without rolling.

use ocf_dice::value::{Compare, DiceTerm, DiceValue, Modifier, Overflow};

/// `dieOf(dice)`: one die of the value's size: the first term's die, once, without its sign or
/// modifiers (`dieOf(2d6kh1 + 3)` is `1d6`). A value with no dice gives the empty dice value `0`.
pub fn die_of(dice: &DiceValue) -> DiceValue {
    match dice.terms.first() {
        Some(term) => DiceValue::from_term(DiceTerm::new(1, term.die, Vec::new())),
        None => DiceValue::default(),
    }
}

/// The lowest and highest total a dice value can roll, each die rolled once: keep and drop
/// modifiers reduce the dice counted, `min`/`max` clamp faces, `cs`/`cf` count a success as 1
/// and a failure as -1. Explosions and rerolls are not considered (an exploding die has no
/// highest total; `maxOf` is the highest total of one roll of each die).
pub fn bounds(dice: &DiceValue) -> Result<(i64, i64), Overflow> {
    let mut low = i128::from(dice.flat);
    let mut high = low;
    for term in &dice.terms {
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
    let mut kept = i128::from(term.count);
    let (mut lo, mut hi) = term.die.face_range();
    let mut successes: Vec<Compare> = Vec::new();
    let mut failures: Vec<Compare> = Vec::new();
    for m in &term.modifiers {
        match *m {
            Modifier::KeepHighest(n) | Modifier::KeepLowest(n) => kept = kept.min(i128::from(n)),
            Modifier::DropHighest(n) | Modifier::DropLowest(n) => {
                kept = (kept - i128::from(n)).max(0)
            }
            Modifier::Minimum(n) => (lo, hi) = (lo.max(n), hi.max(n)),
            Modifier::Maximum(n) => (lo, hi) = (lo.min(n), hi.min(n)),
            Modifier::CountSuccesses(c) => successes.push(c),
            Modifier::CountFailures(c) => failures.push(c),
            Modifier::Explode(_)
            | Modifier::ExplodeCompound(_)
            | Modifier::Reroll { .. }
            | Modifier::RerollOnce { .. } => {}
        }
    }
    let (per_lo, per_hi) = if successes.is_empty() && failures.is_empty() {
        (i128::from(lo), i128::from(hi))
    } else {
        // A die's count is piecewise constant in its face, changing only next to a comparison's
        // value, so the ends of the range and the faces around each value cover every piece.
        let score = |face: i64| -> i128 {
            i128::from(successes.iter().any(|c| c.matches(face)))
                - i128::from(failures.iter().any(|c| c.matches(face)))
        };
        let mut faces = vec![lo, hi];
        for c in successes.iter().chain(&failures) {
            for f in [
                c.value.saturating_sub(1),
                c.value,
                c.value.saturating_add(1),
            ] {
                if (lo..=hi).contains(&f) {
                    faces.push(f);
                }
            }
        }
        let scores = faces.into_iter().map(score);
        let (mut a, mut b) = (i128::MAX, i128::MIN);
        for s in scores {
            a = a.min(s);
            b = b.max(s);
        }
        (a, b)
    };
    (kept * per_lo, kept * per_hi)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocf_dice::value::Die;

    fn term(count: u32, die: Die, modifiers: Vec<Modifier>) -> DiceValue {
        DiceValue::from_term(DiceTerm::new(count, die, modifiers))
    }

    #[test]
    fn bounds_follow_the_modifiers() {
        use Modifier::*;
        let ge5 = Compare {
            op: ocf_dice::value::CompareOp::Ge,
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

    #[test]
    fn die_of_takes_one_die_of_the_first_term() {
        let dice = term(2, Die::Sides(6), vec![Modifier::KeepHighest(1)]).add(&DiceValue::flat(3));
        assert_eq!(die_of(&dice.unwrap()).to_string(), "1d6");
        assert_eq!(die_of(&DiceValue::flat(3)).to_string(), "0");
    }
}
