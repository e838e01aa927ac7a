//! Dice: dice values, rolling them into the spec's roll items with faces from a dice function, and
//! their exact probability distributions.

pub mod value;

pub use value::{DiceTerm, DiceValue};
