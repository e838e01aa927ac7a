//! What the dice functions `dieOf`, `maxOf` and `minOf` work out from a dice value, without rolling.

use ocf_dice::value::{DiceTerm, DiceValue, Overflow};

/// `dieOf(dice)`: one die of the value's size: the first term's die, once, without its sign or
/// modifiers (`dieOf(2d6kh1 + 3)` is `1d6`). A value with no dice gives the empty dice value `0`.
pub fn die_of(dice: &DiceValue) -> DiceValue {
    match dice.terms.first() {
        Some(term) => DiceValue::from_term(DiceTerm::new(1, term.die, Vec::new())),
        None => DiceValue::default(),
    }
}

/// The lowest and highest total a dice value can roll, each die rolled once (`minOf`, `maxOf`):
/// worked out by `ocf-dice` from the rules its roller follows, so that a die with `cs`/`cf`
/// counts here as it counts in a roll and in its distribution.
pub fn bounds(dice: &DiceValue) -> Result<(i64, i64), Overflow> {
    ocf_dice::bounds(dice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ocf_dice::value::{Die, Modifier};

    fn term(count: u32, die: Die, modifiers: Vec<Modifier>) -> DiceValue {
        DiceValue::from_term(DiceTerm::new(count, die, modifiers))
    }

    #[test]
    fn die_of_takes_one_die_of_the_first_term() {
        let dice = term(2, Die::Sides(6), vec![Modifier::KeepHighest(1)]).add(&DiceValue::flat(3));
        assert_eq!(die_of(&dice.unwrap()).to_string(), "1d6");
        assert_eq!(die_of(&DiceValue::flat(3)).to_string(), "0");
    }
}
