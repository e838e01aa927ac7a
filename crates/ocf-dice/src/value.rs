//! Dice values: what a formula such as `2d6 + 1d4 - 1` evaluates to, before anything is rolled.

use std::fmt;

pub use ocf_syntax::dice::{Compare, CompareOp, Die, Modifier};

/// A dice value: dice terms, each with a sign, and a flat part. `2d6 + 1` is one term and a flat 1;
/// a dice value with no dice is written `0` (`engine-core.md`, the empty dice value).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct DiceValue {
    pub terms: Vec<DiceTerm>,
    pub flat: i64,
}

/// `count` dice of one kind with their modifiers, added (or, when `negative`, subtracted).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DiceTerm {
    pub negative: bool,
    pub count: u32,
    pub die: Die,
    pub modifiers: Vec<Modifier>,
}

impl DiceTerm {
    pub fn new(count: u32, die: Die, modifiers: Vec<Modifier>) -> DiceTerm {
        DiceTerm {
            negative: false,
            count,
            die,
            modifiers,
        }
    }
}

/// Arithmetic on the flat part went past the range of an `i64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow;

impl DiceValue {
    /// A dice value with no dice, only a flat part.
    pub fn flat(flat: i64) -> DiceValue {
        DiceValue {
            terms: Vec::new(),
            flat,
        }
    }

    pub fn from_term(term: DiceTerm) -> DiceValue {
        DiceValue {
            terms: vec![term],
            flat: 0,
        }
    }

    /// Whether the value holds no dice (it may still have a flat part).
    pub fn has_no_dice(&self) -> bool {
        self.terms.is_empty()
    }

    /// `self + other`: the terms of both in order, flats summed.
    pub fn add(&self, other: &DiceValue) -> Result<DiceValue, Overflow> {
        let mut terms = self.terms.clone();
        terms.extend(other.terms.iter().cloned());
        let flat = self.flat.checked_add(other.flat).ok_or(Overflow)?;
        Ok(DiceValue { terms, flat })
    }

    /// `-self`: every term's sign flipped and the flat negated.
    pub fn negate(&self) -> Result<DiceValue, Overflow> {
        let terms = self
            .terms
            .iter()
            .map(|t| DiceTerm {
                negative: !t.negative,
                ..t.clone()
            })
            .collect();
        Ok(DiceValue {
            terms,
            flat: self.flat.checked_neg().ok_or(Overflow)?,
        })
    }

    /// The average the spec compares dice values by (`engine-core.md`, stacking): a die averages
    /// (sides + 1) / 2, a Fate die 0, a number is its own average. Modifiers are not considered.
    /// Returned doubled, so that it is an exact integer: `2d6 + 1` gives 16 (an average of 8).
    pub fn doubled_average(&self) -> i128 {
        let dice: i128 = self
            .terms
            .iter()
            .map(|t| {
                let per_die = match t.die {
                    Die::Fate => 0,
                    die => i128::from(die.face_count()) + 1,
                };
                let sum = per_die * i128::from(t.count);
                if t.negative { -sum } else { sum }
            })
            .sum();
        dice + 2 * i128::from(self.flat)
    }
}

impl fmt::Display for DiceTerm {
    /// The term without its sign: `2d20kh1`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.count, self.die)?;
        for m in &self.modifiers {
            write!(f, "{m}")?;
        }
        Ok(())
    }
}

impl fmt::Display for DiceValue {
    /// Canonical dice notation: the terms in order joined by ` + ` or ` - `, then the flat part if it
    /// is not zero (`2d6 + 1`, `1d20 - 1d4 - 2`, `-1d4`); a value with no dice prints its flat (`0`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terms.is_empty() {
            return write!(f, "{}", self.flat);
        }
        for (i, term) in self.terms.iter().enumerate() {
            match (i, term.negative) {
                (0, false) => {}
                (0, true) => f.write_str("-")?,
                (_, false) => f.write_str(" + ")?,
                (_, true) => f.write_str(" - ")?,
            }
            write!(f, "{term}")?;
        }
        match self.flat {
            0 => Ok(()),
            n if n < 0 => write!(f, " - {}", n.unsigned_abs()),
            n => write!(f, " + {n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(count: u32, sides: u32) -> DiceValue {
        DiceValue::from_term(DiceTerm::new(count, Die::Sides(sides), vec![]))
    }

    #[test]
    fn canonical_notation() {
        assert_eq!(
            d(2, 6).add(&DiceValue::flat(1)).unwrap().to_string(),
            "2d6 + 1"
        );
        assert_eq!(
            DiceValue::flat(1).add(&d(2, 6)).unwrap().to_string(),
            "2d6 + 1"
        );
        let v = d(1, 20).add(&d(1, 4).negate().unwrap()).unwrap();
        assert_eq!(
            v.add(&DiceValue::flat(-2)).unwrap().to_string(),
            "1d20 - 1d4 - 2"
        );
        assert_eq!(d(1, 4).negate().unwrap().to_string(), "-1d4");
        assert_eq!(DiceValue::default().to_string(), "0");
        let adv = DiceTerm::new(2, Die::Sides(20), vec![Modifier::KeepHighest(1)]);
        assert_eq!(DiceValue::from_term(adv).to_string(), "2d20kh1");
    }

    #[test]
    fn averages_compare_as_the_spec_says() {
        assert_eq!(
            d(2, 6).add(&DiceValue::flat(1)).unwrap().doubled_average(),
            16
        );
        let fate = DiceValue::from_term(DiceTerm::new(4, Die::Fate, vec![]));
        assert_eq!(fate.doubled_average(), 0);
        assert!(d(1, 8).doubled_average() > d(1, 6).doubled_average());
    }

    #[test]
    fn flat_overflow_is_reported() {
        assert_eq!(
            DiceValue::flat(i64::MAX).add(&DiceValue::flat(1)),
            Err(Overflow)
        );
        assert_eq!(DiceValue::flat(i64::MIN).negate(), Err(Overflow));
    }
}
